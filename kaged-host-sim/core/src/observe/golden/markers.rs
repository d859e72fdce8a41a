//! The markers a golden file may hold where values vary legitimately:
//! `"[any]"` matches any value, `"[re:PATTERN]"` any value whose text (a
//! string as is, anything else as JSON) the regular expression matches in
//! full; comparing, updating (markers that still match are kept) and
//! showing a diff (matched markers as the actual value).

use regex::Regex;
use serde_json::Value;

/// The wildcard matching anything.
pub const ANY: &str = "[any]";

pub(super) fn check_patterns(v: &Value) -> Result<(), (String, String)> {
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
pub(super) fn matches(golden: &Value, actual: &Value) -> bool {
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
pub(super) fn merge(golden: Option<&Value>, actual: &Value) -> Value {
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
pub(super) fn resolve(golden: &Value, actual: Option<&Value>) -> Value {
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
