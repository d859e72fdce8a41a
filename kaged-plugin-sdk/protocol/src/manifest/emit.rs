//! A small deterministic YAML emitter for JSON values: block style,
//! two-space indentation, keys in map order, strings plain when that is
//! unambiguous and JSON-double-quoted otherwise (a JSON string is a valid
//! YAML double-quoted scalar).

use serde_json::{Map, Value};

use super::Manifest;

/// Render `value` as a YAML document: block style, two-space indentation,
/// keys in map order, deterministic quoting.
///
/// ```
/// let v = serde_json::json!({"name": "x", "command": ["./bin/x"], "capabilities": []});
/// assert_eq!(
///     kaged_plugin_protocol::manifest::value_to_yaml(&v),
///     "name: x\ncommand:\n  - ./bin/x\ncapabilities: []\n"
/// );
/// ```
pub fn value_to_yaml(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(m) if !m.is_empty() => write_map(&mut out, m, 0),
        Value::Array(a) if !a.is_empty() => write_seq(&mut out, a, 0),
        other => {
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
    out
}

fn pad(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

fn write_map(out: &mut String, m: &Map<String, Value>, indent: usize) {
    for (k, v) in m {
        pad(out, indent);
        write_entry(out, k, v, indent);
    }
}

/// `key: value` with the cursor already indented.
fn write_entry(out: &mut String, key: &str, v: &Value, indent: usize) {
    out.push_str(&string(key));
    match v {
        Value::Object(m) if !m.is_empty() => {
            out.push_str(":\n");
            write_map(out, m, indent + 2);
        }
        Value::Array(a) if !a.is_empty() => {
            out.push_str(":\n");
            write_seq(out, a, indent + 2);
        }
        _ => {
            out.push_str(": ");
            out.push_str(&scalar(v));
            out.push('\n');
        }
    }
}

fn write_seq(out: &mut String, a: &[Value], indent: usize) {
    for item in a {
        pad(out, indent);
        out.push('-');
        match item {
            Value::Object(m) if !m.is_empty() => {
                for (i, (k, v)) in m.iter().enumerate() {
                    if i == 0 {
                        out.push(' ');
                    } else {
                        pad(out, indent + 2);
                    }
                    write_entry(out, k, v, indent + 2);
                }
            }
            Value::Array(b) if !b.is_empty() => {
                out.push('\n');
                write_seq(out, b, indent + 2);
            }
            _ => {
                out.push(' ');
                out.push_str(&scalar(item));
                out.push('\n');
            }
        }
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => string(s),
        Value::Array(_) => "[]".into(),
        Value::Object(_) => "{}".into(),
    }
}

fn string(s: &str) -> String {
    if is_plain(s) {
        s.to_string()
    } else {
        // serde_json escapes exactly what a YAML double-quoted scalar needs.
        Value::String(s.to_string()).to_string()
    }
}

/// Whether `s` reads back as the same string when written unquoted, under
/// both YAML 1.2 core and the YAML 1.1 rules some hosts still apply.
fn is_plain(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    if s.trim() != s || !(first.is_ascii_alphanumeric() || matches!(first, '/' | '.' | '_')) {
        return false;
    }
    let lower = s.to_ascii_lowercase();
    let special = [
        "true", "false", "null", "yes", "no", "on", "off", "y", "n", ".inf", ".nan",
    ];
    if special.contains(&lower.as_str()) || s.parse::<f64>().is_ok() {
        return false;
    }
    // 1.1 integers (`1_000`), sexagesimals (`1:20`), dates (`2024-01-01`).
    if first.is_ascii_digit()
        && s.chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '_' | ':' | '-'))
    {
        return false;
    }
    if s.contains(": ") || s.contains(" #") || s.ends_with(':') {
        return false;
    }
    s.chars()
        .all(|c| c.is_ascii_alphanumeric() || " _-./:()[],+'=@?;!".contains(c))
}

impl Manifest {
    /// The manifest as YAML: keys in the spec's Full schema order (the
    /// model's field order), deterministic quoting, two-space indentation.
    ///
    /// ```
    /// use kaged_plugin_protocol::manifest::Manifest;
    /// let m = Manifest::from_yaml_str(
    ///     "name: x\nversion: 0.1.0\nkaged_api: 1\ndescription: d\ncommand: [./x]\ncapabilities: []\n",
    /// ).unwrap();
    /// assert_eq!(
    ///     m.to_yaml(),
    ///     "name: x\nversion: 0.1.0\nkaged_api: 1\ndescription: d\ncommand:\n  - ./x\ncapabilities: []\n"
    /// );
    /// ```
    pub fn to_yaml(&self) -> String {
        match serde_json::to_value(self) {
            Ok(v) => value_to_yaml(&v),
            // A Manifest is plain data: serializing it cannot fail.
            Err(e) => format!("# cannot serialize the manifest: {e}\n"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn block_layout() {
        let v = json!({
            "name": "x",
            "list": ["a", "net:[]"],
            "tools": [{"name": "t", "schema": {"type": "object", "required": ["q"]}}],
            "empty": [],
            "obj": {},
        });
        let expected = "name: x\nlist:\n  - a\n  - net:[]\ntools:\n  - name: t\n    schema:\n      type: object\n      required:\n        - q\nempty: []\nobj: {}\n";
        assert_eq!(value_to_yaml(&v), expected);
    }

    #[test]
    fn quotes_what_would_change_meaning() {
        for s in [
            "",
            "yes",
            "1.0",
            "12",
            "1_000",
            "a: b",
            "a #b",
            "-x",
            "*x",
            "x:",
            " x",
            "\"q\"",
            "a\nb",
            "2024-01-01",
        ] {
            assert!(!is_plain(s), "{s:?} should be quoted");
        }
        for s in [
            "0.1.0",
            "echo.say",
            "../../target/debug/echo",
            "Upper-case the text.",
            "MIT OR Apache-2.0",
            crate::capability::STORAGE_READ,
        ] {
            assert!(is_plain(s), "{s:?} should be plain");
        }
    }

    #[test]
    fn round_trips_through_the_manifest_parser() {
        let v = json!({
            "a": "yes", "b": "1.0", "c": "line\nbreak \"q\" \\ é", "d": [[1, 2], []], "e": null, "f": 2.5,
            "g": [{"k": {"n": [true]}, "m": "x"}],
        });
        let node = crate::manifest::parse_yaml(&value_to_yaml(&v)).unwrap();
        assert_eq!(node.to_json(), v);
    }
}
