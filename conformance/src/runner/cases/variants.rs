//! `handshake.initialize_variants`: the plugin handshakes whatever the
//! host says in `initialize`: with projects loaded at start, and with
//! brokered storage unavailable (where a plugin that uses storage still
//! answers its methods: its storage calls get `-32003` at once). Each
//! variant is a fresh spawn.

use kaged_host_core::{CallError, HostSim, LaunchError, PluginHandle};
use serde_json::json;

use crate::runner::judge::scope::Scope;
use crate::runner::judge::verdict::Verdict;
use crate::runner::plan::check::Target;
use crate::runner::session::call_context::PROJECT;
use crate::runner::session::context::RunContext;
use crate::runner::session::processes::{describe_launch, LaneProcesses, Mode};

/// One variant of the `initialize` params.
struct Variant {
    /// What it is, for the detail.
    what: &'static str,
    /// `projects`.
    projects: Vec<String>,
    /// `storage_available`.
    storage: bool,
}

/// With storage unavailable, a plugin that uses storage must still answer
/// its methods (with a result or an error; the host answers its storage
/// calls `-32003` at once): each declared method, called once with no
/// arguments, is answered in time. `Some` says which was not.
async fn storage_less_calls(ctx: &RunContext, s: &PluginHandle) -> Option<String> {
    let uses_storage = ctx
        .manifest
        .capability_strings()
        .iter()
        .any(|c| c.starts_with("kaged:storage:"));
    if !uses_storage {
        return None;
    }
    for m in &ctx.manifest.methods {
        match s.call(m, Some(json!({})), None).await {
            Ok(_) | Err(CallError::Plugin { .. }) | Err(CallError::Unavailable { .. }) => {}
            Err(e) => return Some(kaged_host_core::one_line(m, &e)),
        }
    }
    None
}

/// `handshake.initialize_variants`: a strict handshake succeeds with a
/// non-empty `projects` list and with `storage_available: false`.
pub(crate) async fn initialize_variants(
    ctx: &RunContext,
    processes: &mut LaneProcesses,
    scope: &mut Scope,
    _: &Target,
) -> Verdict {
    match processes.mode() {
        Mode::Strict => {}
        Mode::Lenient => {
            return Verdict::skip(
                "the handshake fails with the default params already (see handshake.*)",
            )
        }
        Mode::Unavailable(why) => return Verdict::no_session(why),
    }
    let variants = [
        Variant {
            what: "projects loaded at start",
            projects: vec![PROJECT.to_string()],
            storage: true,
        },
        Variant {
            what: "storage_available: false",
            projects: Vec::new(),
            storage: false,
        },
    ];
    let mut done = Vec::new();
    for v in &variants {
        let t = processes.new_transcript();
        scope.touch_from(&t, 0);
        let host = HostSim::new(
            ctx.host_config(t)
                .with_projects(v.projects.clone())
                .with_storage_available(v.storage),
        );
        match host.launch(&ctx.dir).await {
            Ok(s) => {
                let unanswered = if v.storage {
                    None
                } else {
                    storage_less_calls(ctx, &s).await
                };
                processes.retire(s).await;
                if let Some(why) = unanswered {
                    return Verdict::fail(format!(
                        "expected: with storage_available: false, its storage calls get an error and its methods still answer; actual: {why}"
                    ));
                }
                done.push(v.what);
            }
            // The handshake completed; what ended the session is the
            // first config's (config.update_accepted judges it).
            Err(LaunchError::FirstConfig { .. }) => done.push(v.what),
            Err(e) => {
                return Verdict::fail(format!(
                    "expected: the handshake completes with {} (projects {:?}, storage_available {}); actual: {}",
                    v.what,
                    v.projects,
                    v.storage,
                    describe_launch(&e)
                ))
            }
        }
    }
    Verdict::pass(format!(
        "the handshake completed with {}",
        done.join(" and with ")
    ))
}
