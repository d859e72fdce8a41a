//! # summarizing-compactor
//!
//! A kaged plugin with both roles (ADR-0024): as an agent's designated
//! compactor (`compaction.delegate.plugin`) it answers `pre_compact` with a
//! `CompactorResult` that replaces the compacted messages by one
//! deterministic summary message — no LLM — keeping every always-keep
//! message in place and the last `keep_last_n` compacted messages verbatim;
//! as an observer it answers `null` to `pre_compact` and `{retain}` hints
//! to `post_compact`.
//!
//! Modules: [`config`], [`summary`] (the pure compaction); the handlers are
//! in `plugin.rs`.

pub mod config;
mod plugin;
pub mod summary;

pub use plugin::SummarizingCompactor;
