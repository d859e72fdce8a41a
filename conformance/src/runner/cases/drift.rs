//! `manifest.current`: when the plugin's binary generates its manifest
//! (`--print-manifest`, as every SDK plugin does), the manifest on disk is
//! the one it generates, `command` aside (packing rewrites it).
//!
//! Only a program that carries the flag's name (a native binary or a `#!`
//! script whose bytes contain `--print-manifest`) is asked: the daemon
//! never runs `--print-manifest`, so the question is put only to what says
//! it can answer it, with no input, in the plugin directory, and it must
//! answer within the initialize timeout. Any other program is skipped.

use kaged_plugin_protocol::manifest::Manifest;
use serde_json::Value;

use crate::printed::{not_asked, print_flag_async, PRINT_MANIFEST_FLAG};
use crate::runner::judge::scope::Scope;
use crate::runner::judge::verdict::Verdict;
use crate::runner::plan::check::Target;
use crate::runner::session::context::RunContext;
use crate::runner::session::processes::LaneProcesses;

const FLAG: &str = PRINT_MANIFEST_FLAG;

/// The manifest as a JSON object without `command` (what packing rewrites).
fn comparable(m: &Manifest) -> serde_json::Map<String, Value> {
    match serde_json::to_value(m) {
        Ok(Value::Object(mut o)) => {
            o.remove("command");
            o
        }
        _ => serde_json::Map::new(),
    }
}

/// `manifest.current`.
pub(crate) async fn current(
    ctx: &RunContext,
    _: &mut LaneProcesses,
    _: &mut Scope,
    _: &Target,
) -> Verdict {
    let Ok(bin) = ctx.command() else {
        return Verdict::blocked_by(
            &crate::catalogue::LAUNCH_COMMAND_EXISTS,
            "command[0] does not resolve (see launch.command_exists)",
        );
    };
    let program = ctx.manifest.command.first().map_or("", String::as_str);
    if let Some(why) = not_asked(program, &bin, &ctx.dir, FLAG) {
        return Verdict::skip(why);
    }
    let text = match print_flag_async(&bin, FLAG, &ctx.dir, ctx.timeouts.initialize).await {
        Ok(text) => text,
        Err(e) => {
            return Verdict::skip(format!("{} {FLAG}: {e}: nothing to compare", bin.display()))
        }
    };
    let generated = match Manifest::from_yaml_str(&text) {
        Ok(m) => m,
        Err(_) => {
            return Verdict::skip(format!(
                "{} {FLAG} printed no manifest: nothing to compare",
                bin.display()
            ))
        }
    };
    let (disk, code) = (comparable(&ctx.manifest), comparable(&generated));
    let mut keys: Vec<&String> = disk.keys().chain(code.keys()).collect();
    keys.sort();
    keys.dedup();
    let drifted: Vec<String> = keys
        .into_iter()
        .filter(|k| disk.get(*k) != code.get(*k))
        .map(|k| {
            let show = |v: Option<&Value>| v.map_or("absent".to_string(), Value::to_string);
            format!(
                "{k}: on disk {}, generated {}",
                show(disk.get(k)),
                show(code.get(k))
            )
        })
        .collect();
    let program = ctx.manifest.command.first().cloned().unwrap_or_default();
    if drifted.is_empty() {
        return Verdict::pass(format!(
            "kaged-plugin.yaml is what `{program} {FLAG}` generates"
        ));
    }
    Verdict::fail(format!(
        "expected: kaged-plugin.yaml as the code generates it; actual: it drifted ({}); \
         regenerate it: `{program} {FLAG} > kaged-plugin.yaml` (keep your leading comments), \
         `KAGED_UPDATE_MANIFEST=1 cargo test` with the manifest-drift test, or `cargo kaged pack`; \
         if the binary is the stale one, rebuild it",
        drifted.join("; "),
    ))
}
