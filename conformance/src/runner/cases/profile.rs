//! `profile.valid` and `profile.current`: the conformance profile (see
//! `crate::profile`) checks against the manifest, and, when the plugin's
//! binary generates one (`--print-profile`, as every SDK plugin does),
//! the profile on disk holds what it generates.
//!
//! Like `manifest.current`, only a program that carries the flag's name
//! is asked, with no input, in the plugin directory, within the initialize
//! timeout. The profile on disk may hold more than the code generates
//! (examples with results, invalid params, entries for methods whose
//! types have no schema): only what the code generates must be there.

use std::path::Path;

use kaged_plugin_protocol::profile::{Profile, PROFILE_FILE};
use kaged_plugin_protocol::text::cut;
use serde_json::Value;

use crate::printed::{not_asked, print_flag_async, PRINT_PROFILE_FLAG};
use crate::profile::{unprofiled, Loaded};
use crate::runner::judge::scope::Scope;
use crate::runner::judge::verdict::Verdict;
use crate::runner::plan::check::Target;
use crate::runner::session::context::RunContext;
use crate::runner::session::processes::LaneProcesses;

const FLAG: &str = PRINT_PROFILE_FLAG;

/// `profile.valid` (a session case only to run with `profile.current`,
/// after the start: it reads the run context alone).
pub(crate) async fn valid(
    ctx: &RunContext,
    _: &mut LaneProcesses,
    _: &mut Scope,
    _: &Target,
) -> Verdict {
    let only = unprofiled(&ctx.manifest, &ctx.profile);
    let called_empty = |only: &[String]| {
        format!(
            "{} called with {{}} only (methods.answers)",
            only.join(", ")
        )
    };
    match &ctx.profile {
        Loaded::Absent if only.is_empty() => Verdict::skip(format!(
            "no {PROFILE_FILE} beside the manifest, and no custom method to call with real params"
        )),
        Loaded::Absent => Verdict::skip(format!(
            "no {PROFILE_FILE} beside the manifest: {}; a profile gives them real params (docs/conformance.md § Conformance profiles)",
            called_empty(&only)
        )),
        Loaded::Invalid(e) => Verdict::fail(format!(
            "expected: {} valid for kaged-plugin.yaml; actual: {} problem(s): {}",
            crate::profile::file_name(&e.path),
            e.problems.len(),
            e.problems.join("; ")
        )),
        Loaded::Valid(p) => {
            let methods = &p.profile.methods;
            let examples: usize = methods.values().map(|m| m.examples.len()).sum();
            let invalid: usize = methods.values().map(|m| m.invalid.len()).sum();
            let mut d = format!(
                "{} (profile {}): {} method(s), {examples} example(s), {invalid} invalid call(s)",
                p.file_name(),
                p.profile.profile,
                methods.len()
            );
            if !only.is_empty() {
                d.push_str(&format!("; not in it: {}", called_empty(&only)));
            }
            Verdict::pass(d)
        }
    }
}

/// What `bin --print-profile` prints, parsed; `Err` is why there is none.
async fn generated(ctx: &RunContext, bin: &Path) -> Result<Profile, String> {
    let text = print_flag_async(bin, FLAG, &ctx.dir, ctx.timeouts.initialize)
        .await
        .map_err(|e| format!("{} {FLAG}: {e}: nothing to compare", bin.display()))?;
    Profile::from_yaml_str(&text).map_err(|_| {
        format!(
            "{} {FLAG} printed no profile: nothing to compare",
            bin.display()
        )
    })
}

/// What of `code` (generated) `disk` lacks or says otherwise.
fn drift(code: &Profile, disk: &Profile) -> Vec<String> {
    let show = |v: Option<&Value>| v.map_or("absent".to_string(), |v| cut(&v.to_string(), 120));
    let mut out = Vec::new();
    for (name, g) in &code.methods {
        let Some(d) = disk.methods.get(name) else {
            out.push(format!("methods.{name}: generated, absent on disk"));
            continue;
        };
        for (field, g, d) in [
            ("params_schema", &g.params_schema, &d.params_schema),
            ("result_schema", &g.result_schema, &d.result_schema),
        ] {
            if g != d {
                out.push(format!(
                    "methods.{name}.{field}: on disk {}, generated {}",
                    show(d.as_ref()),
                    show(g.as_ref())
                ));
            }
        }
        for ex in &g.examples {
            if !d.examples.iter().any(|e| e.params == ex.params) {
                out.push(format!(
                    "methods.{name}.examples: the generated example {} is absent on disk",
                    cut(&ex.params.to_string(), 120)
                ));
            }
        }
    }
    out
}

/// `profile.current`.
pub(crate) async fn current(
    ctx: &RunContext,
    _: &mut LaneProcesses,
    _: &mut Scope,
    _: &Target,
) -> Verdict {
    let Ok(bin) = ctx.command() else {
        return Verdict::skip("command[0] does not resolve (see launch.command_exists)");
    };
    let program = ctx.manifest.command.first().map_or("", String::as_str);
    if let Some(why) = not_asked(program, &bin, &ctx.dir, FLAG) {
        return Verdict::skip(why);
    }
    let code = match generated(ctx, &bin).await {
        Ok(p) => p,
        Err(why) => return Verdict::skip(why),
    };
    let program = ctx.manifest.command.first().cloned().unwrap_or_default();
    let disk = match &ctx.profile {
        Loaded::Valid(p) => p,
        Loaded::Invalid(_) => {
            return Verdict::skip("the profile on disk is invalid (see profile.valid): nothing to compare")
        }
        Loaded::Absent if code.methods.is_empty() => {
            return Verdict::skip(format!(
                "no {PROFILE_FILE}, and `{program} {FLAG}` generates no method entry (no params or result type derives JsonSchema)"
            ))
        }
        Loaded::Absent => {
            let names: Vec<&str> = code.methods.keys().map(String::as_str).collect();
            return Verdict::skip(format!(
                "no {PROFILE_FILE}: `{program} {FLAG} > {PROFILE_FILE}` would give the suite params for {}",
                names.join(", ")
            ));
        }
    };
    let file = disk.file_name();
    let drifted = drift(&code, &disk.profile);
    if drifted.is_empty() {
        let extra = disk
            .profile
            .methods
            .keys()
            .filter(|m| !code.methods.contains_key(*m))
            .count();
        return Verdict::pass(format!(
            "{file} holds what `{program} {FLAG}` generates ({} method(s){})",
            code.methods.len(),
            if extra > 0 {
                format!(", and {extra} written by hand")
            } else {
                String::new()
            }
        ));
    }
    Verdict::fail(format!(
        "expected: {file} holding what the code generates; actual: it drifted ({}); \
         regenerate it: `{program} {FLAG} > {file}` (what you wrote besides the generated entries \
         is kept by this check, not by regenerating); if the binary is the stale one, rebuild it",
        drifted.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::drift;
    use kaged_plugin_protocol::profile::Profile;

    #[test]
    fn drift_is_what_the_code_generates_and_the_disk_lacks() {
        let code = Profile::from_yaml_str(
            "profile: 1\nmethods:\n  a.b:\n    params_schema: {type: object}\n    examples: [{params: {x: 1}}]\n  a.c:\n    result_schema: {type: string}\n",
        )
        .expect("code");
        let disk = Profile::from_yaml_str(
            "profile: 1\nmethods:\n  a.b:\n    params_schema: {type: object}\n    examples: [{params: {x: 1}, result: 2}, {params: {x: 3}}]\n    invalid: [{params: {x: a}, code: -32602}]\n  a.d:\n    examples: [{params: {}}]\n",
        )
        .expect("disk");
        assert_eq!(
            drift(&code, &disk),
            ["methods.a.c: generated, absent on disk"]
        );
        let stale = Profile::from_yaml_str(
            "profile: 1\nmethods:\n  a.b:\n    params_schema: {type: array}\n  a.c:\n    result_schema: {type: string}\n",
        )
        .expect("stale");
        assert_eq!(
            drift(&code, &stale),
            [
                "methods.a.b.params_schema: on disk {\"type\":\"array\"}, generated {\"type\":\"object\"}",
                "methods.a.b.examples: the generated example {\"x\":1} is absent on disk",
            ]
        );
    }
}
