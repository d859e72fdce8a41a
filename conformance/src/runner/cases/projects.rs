//! `system.projects_activated` / `system.projects_deactivated`: the system
//! calls a daemon makes when a project that uses the plugin is loaded
//! (with the plugin's config for it) or unloaded are answered without
//! error.

use kaged_host_core::CallError;
use kaged_plugin_protocol::methods;
use serde_json::{json, Value};

use crate::catalogue::SYSTEM_PROJECTS_ACTIVATED;
use crate::runner::judge::scope::Scope;
use crate::runner::judge::verdict::Verdict;
use crate::runner::plan::check::Target;
use crate::runner::session::call_context::PROJECT;
use crate::runner::session::context::RunContext;
use crate::runner::session::probe::{or_stray, stray_detail};
use crate::runner::session::processes::LaneProcesses;
use crate::schema_args::args_from_schema;
use kaged_plugin_protocol::error_chain::chain as error_chain;

/// `system.projects_activated`: `projects.activated {project, config}`
/// (a config valid for `config_schema`) gets a result.
pub(crate) async fn activated(
    ctx: &RunContext,
    processes: &mut LaneProcesses,
    scope: &mut Scope,
    _: &Target,
) -> Verdict {
    let config = match &ctx.manifest.config_schema {
        None => json!({}),
        Some(schema) => args_from_schema(schema).unwrap_or_else(|_| json!({})),
    };
    let params = json!({"project": PROJECT, "config": config});
    system_call(ctx, processes, scope, methods::PROJECTS_ACTIVATED, params).await
}

/// `system.projects_deactivated`: `projects.deactivated {project}` gets a
/// result (blocked at once when the activation before it, on the same
/// session, was never answered: a budget already judged).
pub(crate) async fn deactivated(
    ctx: &RunContext,
    processes: &mut LaneProcesses,
    scope: &mut Scope,
    _: &Target,
) -> Verdict {
    if processes.was_unanswered(methods::PROJECTS_ACTIVATED) {
        return Verdict::blocked_by(
            &SYSTEM_PROJECTS_ACTIVATED,
            format!(
                "not run: {} was never answered on this session, so there is no activated project to deactivate (and its budget was already waited out)",
                methods::PROJECTS_ACTIVATED
            ),
        );
    }
    let params = json!({"project": PROJECT});
    system_call(ctx, processes, scope, methods::PROJECTS_DEACTIVATED, params).await
}

async fn system_call(
    ctx: &RunContext,
    processes: &mut LaneProcesses,
    scope: &mut Scope,
    method: &str,
    params: Value,
) -> Verdict {
    let shown = format!("{method} {params}");
    let s = match processes.shared(ctx, scope).await {
        Ok(s) => s,
        Err(e) => return Verdict::no_session(e),
    };
    let answer = or_stray(&s.raw(), s.call(method, Some(params), None)).await;
    if matches!(answer, Ok(Err(CallError::Timeout { .. }))) {
        processes.note_unanswered(method);
    }
    match answer {
        Err(v) => Verdict::fail(stray_detail(&format!("an answer to {shown}"), &v)),
        Ok(Ok(_)) => Verdict::pass(format!("{shown} answered with a result")),
        Ok(Err(CallError::Plugin { error, .. })) => Verdict::fail(format!(
            "expected: {shown} answered with a result (a system method every plugin receives); actual: error {} {:?}",
            error.code, error.message
        )),
        Ok(Err(e)) => Verdict::fail(format!(
            "expected: {shown} answered with a result; actual: {}",
            error_chain(&e)
        )),
    }
}
