//! Conversions between JSON and SQLite values, and request-param parsing.

use kaged_plugin_protocol::SqlValue;
use rusqlite::types::{ToSqlOutput, Value as DbValue, ValueRef};
use rusqlite::ToSql;
use serde_json::{Map, Number, Value};

/// The JSON key of an encoded BLOB: a BLOB column value is answered as
/// `{"$base64": "<standard base64 with padding>"}`, so that it can never be
/// confused with TEXT.
pub const BLOB_KEY: &str = "$base64";

/// Parsed `kaged.storage.exec` / `kaged.storage.query` params.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedParams {
    /// The SQL text.
    pub sql: String,
    /// The positional parameters.
    pub params: Vec<SqlValue>,
}

/// Parse request params (ADDENDUM §7): an object with a string `sql` and
/// an optional array `params` of null, boolean, number or string values.
/// The error is a message for a `-32602` answer; `sql` is returned with it
/// when it could be read (for the audit record).
pub fn parse_params(params: Option<&Value>) -> Result<ParsedParams, (String, Option<String>)> {
    let obj = match params {
        Some(Value::Object(o)) => o,
        Some(_) => return Err(("params must be an object {sql, params}".into(), None)),
        None => return Err(("missing params {sql, params}".into(), None)),
    };
    let sql = match obj.get("sql") {
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(("`sql` must be a string".into(), None)),
        None => return Err(("missing `sql`".into(), None)),
    };
    let values = match obj.get("params") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => {
            let mut out = Vec::with_capacity(a.len());
            for (i, v) in a.iter().enumerate() {
                out.push(match v {
                    Value::Null => SqlValue::Null,
                    Value::Bool(b) => SqlValue::Bool(*b),
                    Value::Number(n) => SqlValue::Number(n.clone()),
                    Value::String(s) => SqlValue::Text(s.clone()),
                    Value::Array(_) | Value::Object(_) => {
                        return Err((
                            format!("params[{i}] must be null, a boolean, a number or a string"),
                            Some(sql),
                        ))
                    }
                });
            }
            out
        }
        Some(_) => return Err(("`params` must be an array".into(), Some(sql))),
    };
    Ok(ParsedParams {
        sql,
        params: values,
    })
}

/// A parameter ready to bind: booleans as 0/1, integers as INTEGER, other
/// numbers as REAL, strings as TEXT.
pub struct Bind<'a>(pub &'a SqlValue);

impl ToSql for Bind<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Owned(match self.0 {
            SqlValue::Null => DbValue::Null,
            SqlValue::Bool(b) => DbValue::Integer(i64::from(*b)),
            SqlValue::Number(n) => match n.as_i64() {
                Some(i) => DbValue::Integer(i),
                None => DbValue::Real(n.as_f64().unwrap_or(f64::NAN)),
            },
            SqlValue::Text(s) => DbValue::Text(s.clone()),
        }))
    }
}

/// A column value as JSON: INTEGER and REAL as numbers (non-finite REAL
/// as `null`), TEXT as a string (invalid UTF-8 replaced), NULL as `null`,
/// BLOB as `{"$base64": "..."}`.
pub fn to_json(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Number(i.into()),
        ValueRef::Real(f) => Number::from_f64(f).map_or(Value::Null, Value::Number),
        ValueRef::Text(t) => Value::String(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => {
            let mut m = Map::new();
            m.insert(BLOB_KEY.to_owned(), Value::String(base64(b)));
            Value::Object(m)
        }
    }
}

/// Standard base64 (RFC 4648, with padding).
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn base64_matches_rfc4648_vectors() {
        for (raw, enc) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(raw.as_bytes()), enc);
        }
    }

    #[test]
    fn params_are_validated() {
        let p = parse_params(Some(
            &json!({"sql": "SELECT ?", "params": [1, true, null, "x", 1.5]}),
        ))
        .unwrap();
        assert_eq!(p.params.len(), 5);
        assert!(parse_params(Some(&json!({"sql": "SELECT ?", "params": [[1]]}))).is_err());
        assert!(parse_params(Some(&json!({"sql": "SELECT ?", "params": {"a": 1}}))).is_err());
        assert!(parse_params(Some(&json!({"params": []}))).is_err());
        assert!(parse_params(None).is_err());
    }
}
