//! The params and answer types each lifecycle hook takes, as traits the code
//! `#[hook]` generates checks against (re-exported as
//! `kaged_plugin_sdk::__hook_types`).
//!
//! The builder's `.hook(..)` accepts any deserializable params, so a handler
//! declared for `on_session_start` that takes `CompactParams` would compile
//! and then fail at run time (its params never deserialize). These traits
//! close that gap: each hook's params trait is implemented by that hook's
//! params type (and by `serde_json::Value`, the explicitly untyped escape
//! hatch), each answer trait by the answers that hook may give, and each
//! carries a `#[diagnostic::on_unimplemented]` message that names both.
//!
//! | hook | params | answer (`T` in `Result<T, PluginError>`) |
//! |---|---|---|
//! | `on_session_start` | `SessionStartParams` | `Option<SessionStartResult>`, `SessionStartResult`, `()` |
//! | `on_session_idle` | `SessionIdleParams` | `()` |
//! | `pre_compact` | `CompactParams` | `CompactorResult`, `ObserverResult` (either in an `Option`), `serde_json::Value` (one or the other by role), `()` |
//! | `post_compact` | `CompactParams` | `Option<ObserverResult>`, `ObserverResult`, `()` |

use serde_json::Value;

use crate::protocol::{
    CompactParams, CompactorResult, ObserverResult, SessionIdleParams, SessionStartParams,
    SessionStartResult,
};

use super::macro_support::HandlerResult;

/// A params type `on_session_start` can be handed.
#[diagnostic::on_unimplemented(
    message = "the `on_session_start` hook takes `SessionStartParams`, not `{Self}`",
    label = "change this to `SessionStartParams` (from `kaged_plugin_sdk::protocol`)",
    note = "an on_session_start handler: `async fn on_session_start(&self, p: SessionStartParams, call: Call) -> Result<Option<SessionStartResult>, PluginError>` (`call` is optional)"
)]
pub trait OnSessionStartParams {}
impl OnSessionStartParams for SessionStartParams {}
impl OnSessionStartParams for Value {}

/// A params type `on_session_idle` can be handed.
#[diagnostic::on_unimplemented(
    message = "the `on_session_idle` hook takes `SessionIdleParams`, not `{Self}`",
    label = "change this to `SessionIdleParams` (from `kaged_plugin_sdk::protocol`)",
    note = "an on_session_idle handler: `async fn on_session_idle(&self, p: SessionIdleParams, call: Call) -> Result<(), PluginError>` (`call` is optional)"
)]
pub trait OnSessionIdleParams {}
impl OnSessionIdleParams for SessionIdleParams {}
impl OnSessionIdleParams for Value {}

/// A params type `pre_compact` can be handed.
#[diagnostic::on_unimplemented(
    message = "the `pre_compact` hook takes `CompactParams`, not `{Self}`",
    label = "change this to `CompactParams` (from `kaged_plugin_sdk::protocol`)",
    note = "a pre_compact handler: `async fn pre_compact(&self, p: CompactParams, call: Call) -> Result<Option<ObserverResult>, PluginError>`, or `Result<CompactorResult, PluginError>` for a compactor (`call` is optional)"
)]
pub trait PreCompactParams {}
impl PreCompactParams for CompactParams {}
impl PreCompactParams for Value {}

/// A params type `post_compact` can be handed.
#[diagnostic::on_unimplemented(
    message = "the `post_compact` hook takes `CompactParams`, not `{Self}`",
    label = "change this to `CompactParams` (from `kaged_plugin_sdk::protocol`)",
    note = "a post_compact handler: `async fn post_compact(&self, p: CompactParams, call: Call) -> Result<Option<ObserverResult>, PluginError>` (`call` is optional)"
)]
pub trait PostCompactParams {}
impl PostCompactParams for CompactParams {}
impl PostCompactParams for Value {}

/// An answer `on_session_start` may give.
#[diagnostic::on_unimplemented(
    message = "the `on_session_start` hook answers `Option<SessionStartResult>`, not `{Self}`",
    label = "return `Result<Option<SessionStartResult>, PluginError>` (or `Result<(), PluginError>` to inject nothing)",
    note = "an on_session_start handler: `async fn on_session_start(&self, p: SessionStartParams, call: Call) -> Result<Option<SessionStartResult>, PluginError>` (`call` is optional)"
)]
pub trait OnSessionStartAnswer {}
impl OnSessionStartAnswer for Option<SessionStartResult> {}
impl OnSessionStartAnswer for SessionStartResult {}
impl OnSessionStartAnswer for () {}

/// An answer `on_session_idle` may give.
#[diagnostic::on_unimplemented(
    message = "the `on_session_idle` hook answers nothing (`()`), not `{Self}`",
    label = "return `Result<(), PluginError>`: the daemon ignores what on_session_idle answers",
    note = "an on_session_idle handler: `async fn on_session_idle(&self, p: SessionIdleParams, call: Call) -> Result<(), PluginError>` (`call` is optional)"
)]
pub trait OnSessionIdleAnswer {}
impl OnSessionIdleAnswer for () {}

/// An answer `pre_compact` may give.
#[diagnostic::on_unimplemented(
    message = "the `pre_compact` hook answers `Option<ObserverResult>` or `CompactorResult`, not `{Self}`",
    label = "return `Result<Option<ObserverResult>, PluginError>` (an observer), `Result<CompactorResult, PluginError>` (a compactor), or `Result<serde_json::Value, PluginError>` (either, by `p.role`)",
    note = "a pre_compact handler: `async fn pre_compact(&self, p: CompactParams, call: Call) -> Result<Option<ObserverResult>, PluginError>` (`call` is optional)"
)]
pub trait PreCompactAnswer {}
impl PreCompactAnswer for Option<ObserverResult> {}
impl PreCompactAnswer for ObserverResult {}
impl PreCompactAnswer for Option<CompactorResult> {}
impl PreCompactAnswer for CompactorResult {}
impl PreCompactAnswer for Value {}
impl PreCompactAnswer for () {}

/// An answer `post_compact` may give.
#[diagnostic::on_unimplemented(
    message = "the `post_compact` hook answers `Option<ObserverResult>`, not `{Self}`",
    label = "return `Result<Option<ObserverResult>, PluginError>` (or `Result<(), PluginError>` to add nothing)",
    note = "a post_compact handler: `async fn post_compact(&self, p: CompactParams, call: Call) -> Result<Option<ObserverResult>, PluginError>` (`call` is optional)"
)]
pub trait PostCompactAnswer {}
impl PostCompactAnswer for Option<ObserverResult> {}
impl PostCompactAnswer for ObserverResult {}
impl PostCompactAnswer for () {}

/// Assert `P` is `on_session_start`'s params type.
pub fn on_session_start_params<P: OnSessionStartParams>() {}
/// Assert `P` is `on_session_idle`'s params type.
pub fn on_session_idle_params<P: OnSessionIdleParams>() {}
/// Assert `P` is `pre_compact`'s params type.
pub fn pre_compact_params<P: PreCompactParams>() {}
/// Assert `P` is `post_compact`'s params type.
pub fn post_compact_params<P: PostCompactParams>() {}

/// Assert `R` (a handler's return type) answers `on_session_start`.
pub fn on_session_start_answer<R: HandlerResult>()
where
    R::Ok: OnSessionStartAnswer,
{
}
/// Assert `R` (a handler's return type) answers `on_session_idle`.
pub fn on_session_idle_answer<R: HandlerResult>()
where
    R::Ok: OnSessionIdleAnswer,
{
}
/// Assert `R` (a handler's return type) answers `pre_compact`.
pub fn pre_compact_answer<R: HandlerResult>()
where
    R::Ok: PreCompactAnswer,
{
}
/// Assert `R` (a handler's return type) answers `post_compact`.
pub fn post_compact_answer<R: HandlerResult>()
where
    R::Ok: PostCompactAnswer,
{
}
