//! Golden files of normal-form transcripts ([`crate::normal`]), for any
//! language's CI: `kaged-host-sim session DIR --script S --golden G.jsonl`
//! compares, and prints a unified diff of the messages (each pretty
//! printed, so a changed field is one `-`/`+` pair); `--update` rewrites.
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
//!     stderr: None,
//! };
//! let golden = r#"{"dir":"plugin>host","msg":{"id":1,"result":{"at":"[re:\\d\\d:\\d\\d]","said":"hi"}}}"#;
//! assert!(matches!(compare(golden, &actual).unwrap(), Golden::Same));
//! let changed = r#"{"dir":"plugin>host","msg":{"id":1,"result":{"at":"[any]","said":"ho"}}}"#;
//! let Golden::Differs { diff } = compare(changed, &actual).unwrap() else { panic!() };
//! assert!(diff.contains(r#"-        "said": "ho""#) && diff.contains(r#"+        "said": "hi""#));
//! ```

use regex::Regex;
use serde_json::Value;
use similar::TextDiff;

use super::normal::NormalTranscript;

/// The outcome of a comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Golden {
    /// Every message matches.
    Same,
    /// They differ: the unified diff (golden `-`, actual `+`).
    Differs {
        /// The diff, ready to print.
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

/// The wildcard matching anything.
pub const ANY: &str = "[any]";

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

fn check_patterns(v: &Value) -> Result<(), (String, String)> {
    match v {
        Value::String(s) => match pattern(s) {
            Some(p) => anchored(p)
                .map(|_| ())
                .map_err(|e| (p.to_string(), e.to_string())),
            None => Ok(()),
        },
        Value::Array(a) => a.iter().try_for_each(check_patterns),
        Value::Object(o) => o.values().try_for_each(check_patterns),
        _ => Ok(()),
    }
}

fn pattern(s: &str) -> Option<&str> {
    s.strip_prefix("[re:").and_then(|r| r.strip_suffix(']'))
}

fn anchored(p: &str) -> Result<Regex, regex::Error> {
    Regex::new(&format!("^(?:{p})$"))
}

/// Whether `actual` matches `golden` (markers included).
fn matches(golden: &Value, actual: &Value) -> bool {
    match (golden, actual) {
        (Value::String(g), _) if g == ANY => true,
        (Value::String(g), a) if pattern(g).is_some() => {
            let text = a.as_str().map_or_else(|| a.to_string(), str::to_string);
            pattern(g)
                .and_then(|p| anchored(p).ok())
                .is_some_and(|re| re.is_match(&text))
        }
        (Value::Object(g), Value::Object(a)) => {
            g.len() == a.len()
                && g.iter()
                    .all(|(k, gv)| a.get(k).is_some_and(|av| matches(gv, av)))
        }
        (Value::Array(g), Value::Array(a)) => {
            g.len() == a.len() && g.iter().zip(a).all(|(gv, av)| matches(gv, av))
        }
        _ => golden == actual,
    }
}

/// `actual`, with the golden markers that match it put back in.
fn merge(golden: Option<&Value>, actual: &Value) -> Value {
    match (golden, actual) {
        (Some(g @ Value::String(s)), a) if (s == ANY || pattern(s).is_some()) && matches(g, a) => {
            g.clone()
        }
        (Some(Value::Object(g)), Value::Object(a)) => Value::Object(
            a.iter()
                .map(|(k, av)| (k.clone(), merge(g.get(k), av)))
                .collect(),
        ),
        (Some(Value::Array(g)), Value::Array(a)) if g.len() == a.len() => Value::Array(
            g.iter()
                .zip(a)
                .map(|(gv, av)| merge(Some(gv), av))
                .collect(),
        ),
        _ => actual.clone(),
    }
}

/// `golden`, with every marker that matches the value at its place in
/// `actual` replaced by that value.
fn resolve(golden: &Value, actual: Option<&Value>) -> Value {
    match (golden, actual) {
        (Value::String(s), Some(a)) if (s == ANY || pattern(s).is_some()) && matches(golden, a) => {
            a.clone()
        }
        (Value::Object(g), Some(Value::Object(a))) => Value::Object(
            g.iter()
                .map(|(k, gv)| (k.clone(), resolve(gv, a.get(k))))
                .collect(),
        ),
        (Value::Array(g), Some(Value::Array(a))) => Value::Array(
            g.iter()
                .enumerate()
                .map(|(i, gv)| resolve(gv, a.get(i)))
                .collect(),
        ),
        _ => golden.clone(),
    }
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
    Ok(Golden::Differs { diff })
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
