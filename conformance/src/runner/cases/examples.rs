//! `methods.examples[<method>]` and `methods.invalid_params[<method>]`:
//! a custom method called with real params from the conformance profile
//! (see `crate::profile`), on the shared session, as the daemon (or as an
//! agent when the entry says `context: agent`).
//!
//! Every example must be answered with a result that is the declared one
//! (`result`) and satisfies the schemas (`result_schema`, the method's and
//! the example's). An entry with `params_schema` and no examples is called
//! once with params generated from it, where a domain error
//! (`-32000..-32099`) also counts: the params were accepted. Every invalid
//! call must be answered with its declared error code. Without a profile,
//! or without an entry, both skip, saying the method was only called with
//! `{}` (by `methods.answers`).

use kaged_host_core::CallError;
use kaged_plugin_protocol::profile::{CallAs, MethodProfile, PROFILE_FILE};
use kaged_plugin_protocol::text::cut;
use kaged_plugin_protocol::{ErrorCode, NOT_APPLICABLE, NOT_INITIALIZED};
use serde_json::Value;

use super::methods::call_shared;
use crate::profile::{Loaded, ValidProfile};
use crate::runner::judge::scope::Scope;
use crate::runner::judge::verdict::Verdict;
use crate::runner::plan::check::Target;
use crate::runner::session::call_context::agent_ctx;
use crate::runner::session::context::RunContext;
use crate::runner::session::processes::LaneProcesses;
use crate::schema_args::args_from_schema;
use kaged_plugin_protocol::error_chain::chain as error_chain;

/// What one call must answer.
enum Expect<'a> {
    /// A result: this one exactly, if given, satisfying this example's
    /// schema besides the method's; `domain_ok`: a domain error counts.
    Result {
        exact: Option<&'a Value>,
        schema: Option<&'a Value>,
        domain_ok: bool,
    },
    /// An error with this code.
    Error(i64),
}

/// One call of a case.
struct Call<'a> {
    params: Value,
    call_as: CallAs,
    expect: Expect<'a>,
}

/// The profile and `method`'s entry, or the skip saying why there is none.
fn entry<'a>(
    ctx: &'a RunContext,
    method: &str,
) -> Result<(&'a ValidProfile, &'a MethodProfile), Verdict> {
    let only = format!("{method} was only called with {{}} (methods.answers[{method}])");
    match &ctx.profile {
        Loaded::Absent => Err(Verdict::skip(format!("no {PROFILE_FILE}: {only}"))),
        Loaded::Invalid(_) => Err(Verdict::skip(format!(
            "the profile is invalid (see profile.valid): {only}"
        ))),
        Loaded::Valid(p) => match p.method(method) {
            Some(e) => Ok((p, e)),
            None => Err(Verdict::skip(format!(
                "{} has no entry for {method}: {only}",
                p.file_name()
            ))),
        },
    }
}

/// `methods.examples[<method>]`.
pub(crate) async fn examples(
    ctx: &RunContext,
    processes: &mut LaneProcesses,
    scope: &mut Scope,
    target: &Target,
) -> Verdict {
    let Target::Method(method) = target else {
        return Verdict::skip(format!("runs per method, not for {target:?}"));
    };
    let (profile, e) = match entry(ctx, method) {
        Ok(found) => found,
        Err(skip) => return skip,
    };
    let calls: Vec<Call<'_>> = if !e.examples.is_empty() {
        e.examples
            .iter()
            .map(|ex| Call {
                params: ex.params.clone(),
                call_as: ex.context,
                expect: Expect::Result {
                    exact: ex.result.as_ref(),
                    schema: ex.result_schema.as_ref(),
                    domain_ok: false,
                },
            })
            .collect()
    } else if let Some(schema) = &e.params_schema {
        match args_from_schema(schema) {
            Ok(params) => vec![Call {
                params,
                call_as: CallAs::Daemon,
                expect: Expect::Result {
                    exact: None,
                    schema: None,
                    domain_ok: true,
                },
            }],
            Err(why) => {
                return Verdict::skip(format!(
                    "{} gives no examples for {method}, and no params could be generated from its params_schema ({why}): it was only called with {{}}",
                    profile.file_name()
                ))
            }
        }
    } else {
        return Verdict::skip(format!(
            "{} gives no examples and no params_schema for {method}: it was only called with {{}} (methods.answers[{method}])",
            profile.file_name()
        ));
    };
    let generated = e.examples.is_empty();
    let mut v = run_calls(ctx, processes, scope, method, profile, &calls).await;
    if generated {
        let d = match &mut v {
            Verdict::Pass(d) => Some(d),
            Verdict::Fail(f) => Some(&mut f.detail),
            Verdict::Skip(_) => None,
        };
        if let Some(d) = d {
            *d = format!(
                "with params generated from params_schema (the profile gives no examples): {d}"
            );
        }
    }
    v
}

/// `methods.invalid_params[<method>]`.
pub(crate) async fn invalid_params(
    ctx: &RunContext,
    processes: &mut LaneProcesses,
    scope: &mut Scope,
    target: &Target,
) -> Verdict {
    let Target::Method(method) = target else {
        return Verdict::skip(format!("runs per method, not for {target:?}"));
    };
    let (profile, e) = match entry(ctx, method) {
        Ok(found) => found,
        Err(skip) => return skip,
    };
    if e.invalid.is_empty() {
        return Verdict::skip(format!(
            "{} declares no invalid params for {method}",
            profile.file_name()
        ));
    }
    let calls: Vec<Call<'_>> = e
        .invalid
        .iter()
        .map(|bad| Call {
            params: bad.params.clone(),
            call_as: bad.context,
            expect: Expect::Error(bad.code),
        })
        .collect();
    run_calls(ctx, processes, scope, method, profile, &calls).await
}

/// Make `calls` one after another and judge them: a pass listing every
/// call, or a fail listing those that broke (the calls after one that
/// ended the session are not made).
async fn run_calls(
    ctx: &RunContext,
    processes: &mut LaneProcesses,
    scope: &mut Scope,
    method: &str,
    profile: &ValidProfile,
    calls: &[Call<'_>],
) -> Verdict {
    let (mut good, mut bad) = (Vec::new(), Vec::new());
    for (i, c) in calls.iter().enumerate() {
        let call_ctx = match c.call_as {
            CallAs::Daemon => None,
            CallAs::Agent => Some(agent_ctx(&format!("{method}_profile_{i}"))),
        };
        let shown = format!(
            "{method}({}){}",
            cut(&c.params.to_string(), 160),
            if c.call_as == CallAs::Agent {
                " as an agent"
            } else {
                ""
            }
        );
        let params = Some(c.params.clone());
        let (r, audited) =
            match call_shared(ctx, processes, scope, method, params, call_ctx, &shown).await {
                Ok(done) => done,
                Err(v) => return v,
            };
        if let Err(CallError::Unavailable { .. }) = &r {
            return Verdict::skip(format!("{method} is marked unavailable by the host: the plugin did not list it in initialize (see handshake.methods_complete)"));
        }
        let ended = matches!(r, Err(CallError::Timeout { .. } | CallError::Closed { .. }));
        match judge(profile, method, &shown, r, &c.expect, &audited) {
            Ok(line) => good.push(line),
            Err(line) => bad.push(format!("call {} of {}: {line}", i + 1, calls.len())),
        }
        if ended {
            if i + 1 < calls.len() {
                bad.push(format!(
                    "calls {} to {} not made: the session ended",
                    i + 2,
                    calls.len()
                ));
            }
            break;
        }
    }
    if bad.is_empty() {
        Verdict::pass(good.join("; "))
    } else {
        Verdict::fail(bad.join("; "))
    }
}

/// One call's verdict: `Ok` says how it answered as expected, `Err` what
/// was expected and what came.
fn judge(
    profile: &ValidProfile,
    method: &str,
    shown: &str,
    r: Result<Value, CallError>,
    expect: &Expect<'_>,
    audited: &[String],
) -> Result<String, String> {
    let want = match expect {
        Expect::Result { exact: Some(v), .. } => format!("the result {}", cut(&v.to_string(), 160)),
        Expect::Result { .. } => "a result".to_string(),
        Expect::Error(code) => format!("error {code}"),
    };
    let expected = format!("expected: {want} for {shown}; actual:");
    if !audited.is_empty() {
        return Err(format!(
            "{expected} the host audited {}",
            audited.join("; ")
        ));
    }
    match (expect, r) {
        (_, Err(CallError::Timeout { after, .. })) => Err(format!(
            "{expected} no answer within {after:?} (the host kills the plugin)"
        )),
        (_, Err(CallError::Closed { .. })) => {
            Err(format!("{expected} the plugin ended before answering"))
        }
        (Expect::Result { exact, schema, .. }, Ok(v)) => {
            let got = cut(&v.to_string(), 160);
            if let Some(want) = exact.filter(|w| **w != v) {
                return Err(format!(
                    "{expected} the result {got} (not {})",
                    cut(&want.to_string(), 160)
                ));
            }
            match profile.result_problem(method, *schema, &v) {
                Some(problem) => Err(format!("{expected} the result {got}, which {problem}")),
                None => Ok(format!("{shown} answered {got}")),
            }
        }
        (
            Expect::Result {
                domain_ok: true, ..
            },
            Err(CallError::Plugin { error, .. }),
        ) if ErrorCode::is_plugin_range(error.code)
            && ![NOT_APPLICABLE, NOT_INITIALIZED].contains(&error.code) =>
        {
            Ok(format!(
                "{shown} accepted the params and answered a domain error {} {:?}",
                error.code, error.message
            ))
        }
        (Expect::Error(code), Err(CallError::Plugin { error, .. })) if error.code == *code => Ok(
            format!("{shown} answered {} {:?}", error.code, error.message),
        ),
        (_, Err(CallError::Plugin { error, .. })) => Err(format!(
            "{expected} error {} {:?}{}",
            error.code,
            error.message,
            if error.code == NOT_APPLICABLE {
                " (a method that applies only to a project: give the example `context: agent`)"
            } else {
                ""
            }
        )),
        (Expect::Error(_), Ok(v)) => Err(format!(
            "{expected} the result {}",
            cut(&v.to_string(), 160)
        )),
        (_, Err(e)) => Err(format!("{expected} {}", error_chain(&e))),
    }
}
