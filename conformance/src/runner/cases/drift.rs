//! `manifest.current`: when the plugin's binary generates its manifest
//! (`--print-manifest`, as every SDK plugin does), the manifest on disk is
//! the one it generates, `command` aside (packing rewrites it).
//!
//! Only a program that carries the flag's name (a native binary or a `#!`
//! script whose bytes contain `--print-manifest`) is asked: the daemon
//! never runs `--print-manifest`, so the question is put only to what says
//! it can answer it, with no input, in the plugin directory, and it must
//! answer within the initialize timeout. Any other program is skipped.

use std::path::Path;
use std::process::Stdio;

use kaged_plugin_protocol::manifest::Manifest;
use serde_json::Value;

use crate::runner::check::Target;
use crate::runner::context::RunContext;
use crate::runner::scope::Scope;
use crate::runner::sessions::Sessions;
use crate::runner::verdict::Verdict;

/// The flag SDK plugins answer with their manifest.
const FLAG: &str = "--print-manifest";

/// Whether `path` is an executable (ELF or `#!` script) that mentions
/// [`FLAG`].
fn answers_flag(path: &Path) -> bool {
    let Ok(bytes) = std::fs::read(path) else {
        return false;
    };
    (bytes.starts_with(b"\x7fELF") || bytes.starts_with(b"#!"))
        && bytes.windows(FLAG.len()).any(|w| w == FLAG.as_bytes())
}

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
    _: &mut Sessions,
    _: &mut Scope,
    _: &Target,
) -> Verdict {
    let Ok(bin) = ctx.command() else {
        return Verdict::blocked_by(
            &crate::catalogue::LAUNCH_COMMAND_EXISTS,
            "command[0] does not resolve (see launch.command_exists)",
        );
    };
    if !answers_flag(&bin) {
        return Verdict::skip(format!(
            "{} does not answer {FLAG} (not built on the SDK): nothing to compare",
            bin.display()
        ));
    }
    let child = tokio::process::Command::new(&bin)
        .arg(FLAG)
        .current_dir(&ctx.dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn();
    let child = match child {
        Ok(c) => c,
        Err(e) => return Verdict::skip(format!("cannot run {} {FLAG}: {e}", bin.display())),
    };
    let limit = ctx.timeouts.initialize;
    let out = match tokio::time::timeout(limit, child.wait_with_output()).await {
        Ok(Ok(out)) => out,
        Ok(Err(e)) => return Verdict::skip(format!("cannot run {} {FLAG}: {e}", bin.display())),
        Err(_) => {
            return Verdict::skip(format!(
                "{} {FLAG} did not answer within {limit:?}: nothing to compare",
                bin.display()
            ))
        }
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let generated = match (out.status.success(), Manifest::from_yaml_str(&text)) {
        (true, Ok(m)) => m,
        _ => {
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
