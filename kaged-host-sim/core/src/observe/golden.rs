//! Golden files of normal-form transcripts ([`crate::normal`]), for any
//! language's CI: `kaged-host-sim session DIR --script S --golden G.jsonl`
//! compares, and prints what changed, each change named by its step, its
//! message and its JSON path, then a unified diff of the
//! messages (each pretty printed, so a changed field is one `-`/`+`
//! pair); `--update` rewrites.
//!
//! A golden file may mark values that vary legitimately: the string
//! `"[any]"` matches any value, `"[re:PATTERN]"` any value whose text (a
//! string as is, anything else as JSON) the regular expression matches in
//! full. Updating keeps a marker where it still matches.
//!
//! ```
//! use kaged_host_core::golden::{compare, Golden};
//! use kaged_host_core::normal::NormalTranscript;
//! use serde_json::json;
//! let actual = NormalTranscript {
//!     messages: vec![json!({"dir": "plugin>host", "msg": {"id": 1, "result": {"at": "12:01", "said": "hi"}}})],
//!     steps: vec![1],
//!     stderr: None,
//! };
//! let golden = r#"{"dir":"plugin>host","msg":{"id":1,"result":{"at":"[re:\\d\\d:\\d\\d]","said":"hi"}}}"#;
//! assert!(matches!(compare(golden, &actual).unwrap(), Golden::Same));
//! let changed = r#"{"dir":"plugin>host","msg":{"id":1,"result":{"at":"[any]","said":"ho"}}}"#;
//! let Golden::Differs { diff } = compare(changed, &actual).unwrap() else { panic!() };
//! assert!(diff.contains(r#"$.msg.result.said: golden "ho", actual "hi""#));
//! assert!(diff.contains(r#"-        "said": "ho""#) && diff.contains(r#"+        "said": "hi""#));
//! ```

use serde_json::Value;
use similar::TextDiff;

use super::normal::NormalTranscript;

mod explain;
mod markers;

/// The outcome of a comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Golden {
    /// Every message matches.
    Same,
    /// They differ: each change by step, message and JSON path, then the
    /// unified diff (golden `-`, actual `+`).
    Differs {
        /// The changes and the diff, ready to print.
        diff: String,
    },
}

/// Why a golden file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GoldenError {
    /// A line is not JSON.
    #[error("line {line}: not JSON: {message}")]
    Line {
        /// The line, from 1.
        line: usize,
        /// The parse error.
        message: String,
    },
    /// A `[re:...]` marker is not a regular expression.
    #[error("line {line}: invalid [re:...] marker {pattern:?}: {message}")]
    Pattern {
        /// The line, from 1.
        line: usize,
        /// The pattern.
        pattern: String,
        /// Why.
        message: String,
    },
}

pub use markers::ANY;
use markers::{check_patterns, matches, merge, resolve};

fn parse(golden: &str) -> Result<Vec<Value>, GoldenError> {
    let values: Vec<Value> = golden
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| GoldenError::Line {
                line: i + 1,
                message: e.to_string(),
            })
        })
        .collect::<Result<_, _>>()?;
    for (i, v) in values.iter().enumerate() {
        check_patterns(v).map_err(|(pattern, message)| GoldenError::Pattern {
            line: i + 1,
            pattern,
            message,
        })?;
    }
    Ok(values)
}

/// Compare the golden file's text with `actual`.
pub fn compare(golden: &str, actual: &NormalTranscript) -> Result<Golden, GoldenError> {
    let want = parse(golden)?;
    let got = actual.to_values();
    if want.len() == got.len() && want.iter().zip(&got).all(|(w, g)| matches(w, g)) {
        return Ok(Golden::Same);
    }
    // Show markers that matched as the actual value, so only real
    // differences are diffed.
    let shown_want: Vec<Value> = want
        .iter()
        .enumerate()
        .map(|(i, w)| resolve(w, got.get(i)))
        .collect();
    let render = |vs: &[Value]| -> String {
        vs.iter()
            .enumerate()
            .map(|(i, v)| {
                let dir = v.get("dir").and_then(Value::as_str).unwrap_or("?");
                let body = v.get("msg").unwrap_or(v);
                let pretty = serde_json::to_string_pretty(body).unwrap_or_default();
                let indented: String = pretty.lines().map(|l| format!("    {l}\n")).collect();
                format!("message {} ({dir}):\n{indented}", i + 1)
            })
            .collect()
    };
    let (old, new) = (render(&shown_want), render(&got));
    let diff = TextDiff::from_lines(&old, &new)
        .unified_diff()
        .context_radius(4)
        .header("golden", "actual")
        .to_string();
    let changes = explain::explain(&want, actual);
    Ok(Golden::Differs {
        diff: format!("{changes}\n\n{diff}"),
    })
}

/// The new text of a golden file for `actual`, keeping the markers of the
/// old one (`None`: a new file) that still match.
pub fn update(golden: Option<&str>, actual: &NormalTranscript) -> Result<String, GoldenError> {
    let old = golden.map(parse).transpose()?.unwrap_or_default();
    Ok(actual
        .to_values()
        .iter()
        .enumerate()
        .map(|(i, a)| format!("{}\n", merge(old.get(i), a)))
        .collect())
}
