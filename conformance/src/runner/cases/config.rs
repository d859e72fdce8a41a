//! `config.*` beyond `config.update_accepted`: a `config.update` that
//! breaks the manifest's `config_schema` is refused with -32004
//! (config_invalid) by a plugin that validates its config, and a
//! `config.update` between the initialize answer and `initialized` is
//! accepted (ADDENDUM §12). Both on fresh spawns (an accepted bad config
//! must not poison the shared session).

use kaged_host_core::{CallError, RequestError};
use kaged_plugin_protocol::{methods, ErrorCode};
use serde_json::Value;

use crate::runner::judge::scope::Scope;
use crate::runner::judge::verdict::Verdict;
use crate::runner::plan::check::Target;
use crate::runner::session::context::RunContext;
use crate::runner::session::probe::{or_stray, stray_detail};
use crate::runner::session::processes::LaneProcesses;
use crate::schema_args::{args_breaking_schema, args_from_schema};

/// `config.invalid_rejected`: a config generated to break `config_schema`
/// gets error -32004.
pub(crate) async fn invalid_rejected(
    ctx: &RunContext,
    processes: &mut LaneProcesses,
    scope: &mut Scope,
    _: &Target,
) -> Verdict {
    let Some(schema) = &ctx.manifest.config_schema else {
        return Verdict::skip("the manifest has no config_schema");
    };
    let Some(mut bad) = args_breaking_schema(schema) else {
        return Verdict::skip(
            "could not generate a config that breaks config_schema (it accepts every object)",
        );
    };
    // The system side as the daemon would merge it, valid, so that the
    // one thing wrong is the project field broken.
    let system = ctx
        .manifest
        .system_config_schema
        .as_ref()
        .map(args_from_schema);
    if let (Some(Ok(Value::Object(system))), Some(args)) = (system, bad.args.as_object_mut()) {
        for (k, v) in system.into_iter().filter(|(k, _)| *k != bad.field) {
            args.entry(k).or_insert(v);
        }
    }
    let code = ErrorCode::ConfigInvalid.code();
    let shown = format!("config.update {} ({} `{}`)", bad.args, bad.how, bad.field);
    let s = match processes.fresh(ctx, scope).await {
        Ok(s) => s,
        Err(e) => return Verdict::no_session(e),
    };
    let answer = or_stray(
        &s.raw(),
        s.call(methods::CONFIG_UPDATE, Some(bad.args.clone()), None),
    )
    .await;
    let v = match answer {
        Err(v) => Verdict::fail(stray_detail(&format!("error {code} for {shown}"), &v)),
        Ok(Err(CallError::Plugin { error, .. })) if error.code == code => {
            Verdict::pass(format!("{shown} refused with {code} {:?}", error.message))
        }
        Ok(Err(CallError::Plugin { error, .. })) => Verdict::fail(format!(
            "expected: error {code} (config_invalid) for {shown}; actual: error {} {:?}",
            error.code, error.message
        )),
        Ok(Ok(v)) => Verdict::fail(format!(
            "expected: error {code} (config_invalid) for {shown}; actual: accepted (result {})",
            kaged_plugin_protocol::text::cut(&v.to_string(), 200)
        )),
        Ok(Err(e)) => Verdict::fail(format!(
            "expected: error {code} (config_invalid) for {shown}; actual: {e}"
        )),
    };
    processes.retire(s).await;
    v
}

/// `config.update_in_handshake_window`: on a spawn without the handshake,
/// `initialize`, then a valid `config.update` before `initialized`: it
/// gets a result, not -32002 (ADDENDUM §12).
pub(crate) async fn update_in_handshake_window(
    ctx: &RunContext,
    processes: &mut LaneProcesses,
    scope: &mut Scope,
    _: &Target,
) -> Verdict {
    // The merged config of both schemas, as the daemon builds it.
    let config = match crate::daemon_config(&ctx.manifest) {
        Ok(c) => Value::Object(c),
        Err(e) => {
            return Verdict::skip(format!(
                "could not generate a config from the config schemas: {e}"
            ))
        }
    };
    let t = &ctx.timeouts;
    let s = match processes.spawn_unready(ctx, scope).await {
        Ok(s) => s,
        Err(e) => return Verdict::no_session(e),
    };
    let raw = s.raw();
    let init = serde_json::to_value(ctx.init_params()).unwrap_or(Value::Null);
    let expected =
        format!("config.update {config} between the initialize answer and initialized accepted");
    let v = match raw
        .request(methods::INITIALIZE, Some(init), t.initialize)
        .await
    {
        Err(e @ (RequestError::Timeout(_) | RequestError::Closed)) => {
            Verdict::skip(format!("initialize was not answered: {e}"))
        }
        Ok(_) | Err(_) => {
            let update = raw.request(methods::CONFIG_UPDATE, Some(config.clone()), t.request);
            match or_stray(&raw, update).await {
                Err(v) => Verdict::fail(stray_detail(&expected, &v)),
                Ok(Ok(_)) => Verdict::pass(format!("config.update {config} answered with a result before initialized")),
                Ok(Err(RequestError::Rpc(e))) => Verdict::fail(format!(
                    "expected: {expected} (ADDENDUM §12: a daemon following the spec's Merging section sends it there); actual: error {} {:?}",
                    e.code, e.message
                )),
                Ok(Err(e)) => Verdict::fail(format!("expected: {expected}; actual: {e}")),
            }
        }
    };
    processes.retire(s).await;
    v
}
