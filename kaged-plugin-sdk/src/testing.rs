//! Test helpers: keep a plugin's checked-in `kaged-plugin.yaml` in step with
//! its code, and check its tool schemas at test time (the runtime never
//! panics on a bad schema).
//!
//! In a plugin crate, `tests/manifest_drift.rs`:
//!
//! ```no_run
//! #[test]
//! fn manifest_is_current() {
//!     kaged_plugin_sdk::testing::assert_binary_manifest_current(
//!         env!("CARGO_BIN_EXE_my-plugin"),
//!         concat!(env!("CARGO_MANIFEST_DIR"), "/kaged-plugin.yaml"),
//!     );
//! }
//! ```
//!
//! On drift the failure shows a line diff of the two manifests, normalized
//! (both rendered by [`crate::describe::to_yaml`], so comments, quoting and
//! key order do not count). Run the test with `KAGED_UPDATE_MANIFEST=1` to
//! rewrite the file from the code instead.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::describe::{to_yaml, PRINT_MANIFEST_FLAG};
use crate::manifest::{Manifest, ManifestError};
use crate::tool::{check_tool, ToolSchemaError};
use crate::Plugin;

/// The variable that turns a drift check into an update of the file.
pub const UPDATE_VAR: &str = "KAGED_UPDATE_MANIFEST";

/// Why a manifest check failed.
#[derive(Debug, thiserror::Error)]
pub enum DriftError {
    /// The checked-in manifest cannot be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The manifest file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The checked-in manifest does not parse.
    #[error("{}: {source}", path.display())]
    Parse {
        /// The manifest file.
        path: PathBuf,
        /// The cause.
        source: ManifestError,
    },
    /// Some tool schemas are unusable.
    #[error("tool schemas:\n{}", lines(.0))]
    ToolSchemas(Vec<ToolSchemaError>),
    /// The plugin binary could not run or did not print a manifest.
    #[error("`{} {PRINT_MANIFEST_FLAG}` failed: {reason}", bin.display())]
    Binary {
        /// The binary.
        bin: PathBuf,
        /// What went wrong (exit status and stderr, or the parse error).
        reason: String,
    },
    /// The checked-in manifest differs from what the code implies.
    #[error(
        "{} has drifted from the code (- checked in, + generated); \
         rerun with {UPDATE_VAR}=1 to rewrite it:\n{diff}",
        path.display()
    )]
    Drift {
        /// The manifest file.
        path: PathBuf,
        /// A line diff of the normalized YAML.
        diff: String,
    },
}

fn lines(errors: &[ToolSchemaError]) -> String {
    errors
        .iter()
        .map(|e| format!("  {e}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Check every tool schema of `manifest` (valid JSON Schema, object root).
pub fn check_tool_schemas(manifest: &Manifest) -> Result<(), DriftError> {
    let errors: Vec<_> = manifest
        .tools
        .iter()
        .filter_map(|t| check_tool(&t.name, &t.parameters_schema).err())
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(DriftError::ToolSchemas(errors))
    }
}

/// Compare `generated` with the manifest at `path` (parsed values; the
/// diff is of the normalized YAML). With `KAGED_UPDATE_MANIFEST=1` a
/// drifted file is rewritten and the check passes.
pub fn compare_with_file(generated: &Manifest, path: impl AsRef<Path>) -> Result<(), DriftError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|source| DriftError::Io {
        path: path.into(),
        source,
    })?;
    let current = Manifest::from_yaml_str(&text).map_err(|source| DriftError::Parse {
        path: path.into(),
        source,
    })?;
    if &current == generated {
        return Ok(());
    }
    let (old, new) = (normalized(&current), normalized(generated));
    if std::env::var_os(UPDATE_VAR).is_some_and(|v| !v.is_empty() && v != "0") {
        let header = format!(
            "# kaged-plugin.yaml of `{}`, generated from its code.\n",
            generated.name
        );
        return std::fs::write(path, header + &to_yaml(generated)).map_err(|source| {
            DriftError::Io {
                path: path.into(),
                source,
            }
        });
    }
    let diff = match line_diff(&old, &new) {
        d if d.is_empty() => {
            "(same YAML text; the values differ in number types or key order of a knob list)".into()
        }
        d => d,
    };
    Err(DriftError::Drift {
        path: path.into(),
        diff,
    })
}

/// The manifest as YAML with the keys of every JSON Schema sorted, so that
/// a diff shows what differs rather than how the keys were ordered.
fn normalized(m: &Manifest) -> String {
    let mut m = m.clone();
    for t in &mut m.tools {
        sort_keys(&mut t.parameters_schema);
    }
    for s in [&mut m.config_schema, &mut m.system_config_schema]
        .into_iter()
        .flatten()
    {
        sort_keys(s);
    }
    to_yaml(&m)
}

fn sort_keys(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(o) => {
            let mut entries: Vec<_> = std::mem::take(o).into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            for (k, mut v) in entries {
                sort_keys(&mut v);
                o.insert(k, v);
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(sort_keys),
        _ => {}
    }
}

/// Check `plugin`'s tool schemas, then that the manifest at `path` is the
/// one its code implies.
pub fn check_manifest_current(plugin: &Plugin, path: impl AsRef<Path>) -> Result<(), DriftError> {
    let generated = plugin.manifest();
    check_tool_schemas(&generated)?;
    compare_with_file(&generated, path)
}

/// Run `bin --print-manifest`, check the tool schemas it prints, then
/// compare with the manifest at `path`.
pub fn check_binary_manifest_current(
    bin: impl AsRef<Path>,
    path: impl AsRef<Path>,
) -> Result<(), DriftError> {
    let bin = bin.as_ref();
    let fail = |reason: String| DriftError::Binary {
        bin: bin.into(),
        reason,
    };
    let out = Command::new(bin)
        .arg(PRINT_MANIFEST_FLAG)
        .output()
        .map_err(|e| fail(e.to_string()))?;
    if !out.status.success() {
        return Err(fail(format!(
            "{}; stderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    let text =
        String::from_utf8(out.stdout).map_err(|e| fail(format!("output is not UTF-8: {e}")))?;
    let generated = Manifest::from_yaml_str(&text)
        .map_err(|e| fail(format!("output is not a manifest: {e}")))?;
    check_tool_schemas(&generated)?;
    compare_with_file(&generated, path)
}

/// [`check_manifest_current`], failing the test with the readable report.
#[track_caller]
pub fn assert_manifest_current(plugin: &Plugin, path: impl AsRef<Path>) {
    if let Err(e) = check_manifest_current(plugin, path) {
        panic!("{e}");
    }
}

/// [`check_binary_manifest_current`], failing the test with the readable
/// report.
#[track_caller]
pub fn assert_binary_manifest_current(bin: impl AsRef<Path>, path: impl AsRef<Path>) {
    if let Err(e) = check_binary_manifest_current(bin, path) {
        panic!("{e}");
    }
}

/// A line diff of `old` and `new` (`-`/`+`/` ` prefixes), changed lines
/// with up to 3 lines of context; empty when the texts are equal.
///
/// ```
/// let d = kaged_plugin_sdk::testing::line_diff("a\nb\nc\n", "a\nB\nc\n");
/// assert_eq!(d, "  a\n- b\n+ B\n  c\n");
/// ```
pub fn line_diff(old: &str, new: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    // Longest common subsequence table, from the end.
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut ops: Vec<(char, &str)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            ops.push((' ', a[i]));
            i += 1;
            j += 1;
        } else if i < a.len() && (j == b.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            ops.push(('-', a[i]));
            i += 1;
        } else {
            ops.push(('+', b[j]));
            j += 1;
        }
    }
    const CONTEXT: usize = 3;
    let changed: Vec<usize> = ops
        .iter()
        .enumerate()
        .filter(|(_, o)| o.0 != ' ')
        .map(|(k, _)| k)
        .collect();
    let near = |k: usize| changed.iter().any(|&c| c.abs_diff(k) <= CONTEXT);
    let mut out = String::new();
    let mut skipped = false;
    for (k, (op, line)) in ops.iter().enumerate() {
        if near(k) {
            if skipped && !out.is_empty() {
                out.push_str("  ...\n");
            }
            skipped = false;
            out.push_str(&format!("{op} {line}\n"));
        } else {
            skipped = true;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_non_object_tool_schema_fails_at_test_time() {
        let plugin = crate::plugin!("x")
            .tool(
                "say",
                "Say it.",
                |text: String, _c: crate::Call| async move { Ok::<_, crate::PluginError>(text) },
            )
            .build()
            .expect("the runtime accepts it");
        match check_manifest_current(&plugin, "/nonexistent/kaged-plugin.yaml") {
            Err(DriftError::ToolSchemas(errors)) => {
                assert!(
                    matches!(&errors[..], [ToolSchemaError::NotObject { tool, .. }] if tool == "say")
                )
            }
            other => panic!("expected a tool schema error, got {other:?}"),
        }
    }

    #[test]
    fn same_manifest_passes_and_a_changed_one_shows_a_diff() {
        let plugin = crate::plugin!("x")
            .manifest_base("description: d\ncommand: [./x]\ncapabilities: []\n")
            .notification("x.done")
            .build()
            .expect("valid");
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("kaged-plugin.yaml");
        std::fs::write(&path, plugin.manifest_yaml()).expect("write");
        check_manifest_current(&plugin, &path).expect("current");
        let edited = plugin.manifest_yaml().replace("x.done", "x.finished");
        std::fs::write(&path, edited).expect("write");
        match check_manifest_current(&plugin, &path) {
            Err(DriftError::Drift { diff, .. }) => {
                assert!(diff.contains("-   - x.finished\n+   - x.done\n"), "{diff}")
            }
            other => panic!("expected drift, got {other:?}"),
        }
    }

    #[test]
    fn diff_shows_context_and_elides_the_rest() {
        let old: String = (0..20).map(|i| format!("l{i}\n")).collect();
        let new = old.replace("l10\n", "l10 changed\n");
        let d = line_diff(&old, &new);
        assert_eq!(
            d,
            "  l7\n  l8\n  l9\n- l10\n+ l10 changed\n  l11\n  l12\n  l13\n"
        );
        assert_eq!(line_diff(&old, &old), "");
        let tail = line_diff("a\n", "a\nb\n");
        assert_eq!(tail, "  a\n+ b\n");
    }
}
