//! The reference plugin `kaged-host-sim bench` calibrates the host with:
//! a plugin that does nothing but answer, so that what a call to it costs
//! is the host's (and the pipes') own cost, measured here, on this
//! machine, under the same cage as the plugin being measured.
//!
//! It is the host-sim binary itself, run as `kaged-host-sim
//! __reference-plugin`: a blocking loop on std alone (no runtime, no JSON
//! parser on the hot path) that answers `initialize` with what the
//! manifest in its directory declares, and every other request with `{}`
//! at once. [`stage`] makes its plugin directory beside the measured
//! plugin's: the same manifest (name, methods, tools, hooks, capabilities,
//! so the same calls are valid and the same cage is built) with `command`
//! pointing at a copy of this binary inside the directory.

use std::io::{BufRead, BufWriter, Write};
use std::path::{Path, PathBuf};

use kaged_plugin_protocol::manifest::{Manifest, MANIFEST_FILE};

/// The hidden subcommand that serves the reference plugin.
pub const SUBCOMMAND: &str = "__reference-plugin";

/// Serve the reference plugin on stdin/stdout until EOF or `shutdown`.
///
/// ```no_run
/// // `kaged-host-sim __reference-plugin` runs this:
/// kaged_host_sim::bench::reference::serve();
/// ```
pub fn serve() {
    let manifest = Manifest::load_dir(Path::new(".")).ok();
    let stdin = std::io::stdin();
    let mut out = BufWriter::new(std::io::stdout().lock());
    let mut line = Vec::with_capacity(512);
    let mut input = stdin.lock();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let Some(id) = request_id(&line) else {
            if contains(&line, b"\"shutdown\"") {
                return;
            }
            continue;
        };
        let result = if contains(&line, b"\"method\":\"initialize\"") {
            initialize_result(manifest.as_ref())
        } else if contains(&line, b"\"method\":\"shutdown\"") {
            let _ = writeln!(
                out,
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"status":"ok"}}}}"#
            );
            let _ = out.flush();
            return;
        } else if contains(&line, b"\"method\":\"ping\"") {
            r#"{"status":"ok"}"#.to_string()
        } else {
            "{}".to_string()
        };
        let written = writeln!(out, r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)
            .and_then(|()| out.flush());
        if written.is_err() {
            return;
        }
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// The id of a request or answer line, as the JSON text it was (`7`,
/// `"a"`), or `None` for a notification: found without parsing the line,
/// as the reference plugin and the throughput bench's reference host read
/// them (the first `"id":` member; the host writes it before `params`).
///
/// ```
/// use kaged_host_sim::bench::reference::request_id;
/// assert_eq!(request_id(br#"{"jsonrpc":"2.0","id":7,"result":{}}"#).as_deref(), Some("7"));
/// assert_eq!(request_id(br#"{"jsonrpc":"2.0","method":"echo.said"}"#), None);
/// ```
pub fn request_id(line: &[u8]) -> Option<String> {
    let key = b"\"id\":";
    let at = line.windows(key.len()).position(|w| w == key)? + key.len();
    let rest = std::str::from_utf8(&line[at..]).ok()?.trim_start();
    let end = match rest.strip_prefix('"') {
        Some(quoted) => quoted.find('"')? + 2,
        None => rest.find([',', '}'])?,
    };
    Some(rest[..end].trim().to_string())
}

fn initialize_result(m: Option<&Manifest>) -> String {
    let (name, version, methods) = match m {
        Some(m) => (m.name.clone(), m.version.clone(), m.declared_methods()),
        None => ("kaged-reference".into(), "0.0.0".into(), Vec::new()),
    };
    serde_json::json!({
        "name": name,
        "version": version,
        "api_version": kaged_plugin_protocol::API_VERSION,
        "methods": methods,
        "capabilities_used": [],
    })
    .to_string()
}

/// Make the reference plugin's directory for the plugin in `plugin_dir`
/// under `root`: its manifest with `command: [./bin/reference,
/// __reference-plugin]`, and this binary copied to `bin/reference`.
pub fn stage(plugin_dir: &Path, root: &Path) -> std::io::Result<PathBuf> {
    let text = std::fs::read_to_string(plugin_dir.join(MANIFEST_FILE))?;
    let mut manifest: serde_json::Value = serde_saphyr::from_str(&text)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))?;
    manifest["command"] = serde_json::json!(["./bin/reference", SUBCOMMAND]);
    let dir = root.join("reference");
    std::fs::create_dir_all(dir.join("bin"))?;
    let exe = std::env::current_exe()?;
    let bin = dir.join("bin/reference");
    if std::fs::hard_link(&exe, &bin).is_err() {
        std::fs::copy(&exe, &bin)?;
    }
    let yaml = serde_json::to_string_pretty(&manifest)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))?;
    // JSON is YAML: the manifest parser reads it as it is.
    std::fs::write(dir.join(MANIFEST_FILE), yaml)?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_ids_are_read_as_written() {
        assert_eq!(
            request_id(br#"{"jsonrpc":"2.0","id":17,"method":"x"}"#).as_deref(),
            Some("17")
        );
        assert_eq!(
            request_id(br#"{"id":"a-1","method":"x"}"#).as_deref(),
            Some("\"a-1\"")
        );
        assert_eq!(
            request_id(br#"{"jsonrpc":"2.0","method":"initialized"}"#),
            None
        );
        // `request_id` inside `_context` is not the id.
        assert_eq!(
            request_id(br#"{"method":"n","params":{"_context":{"request_id":"r"}}}"#),
            None
        );
    }
}
