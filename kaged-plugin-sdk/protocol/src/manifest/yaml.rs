//! A YAML document as a tree of located nodes.
//!
//! Every node (scalar, sequence, mapping, and every mapping key) carries the
//! 1-based line and column where it starts, so that a validator can report
//! every problem of a manifest with its location. Scalars are typed with the
//! YAML 1.2 core schema (`yes`/`on` stay strings) by `serde-saphyr`.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use serde_saphyr::{Location, Spanned};

use crate::text::cut;

/// A 1-based position in the YAML text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pos {
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
}

impl Pos {
    /// The start of the document.
    pub const START: Pos = Pos { line: 1, column: 1 };

    fn from_location(loc: &Location) -> Option<Pos> {
        let (line, column) = (loc.line(), loc.column());
        if line == 0 {
            return None;
        }
        Some(Pos {
            line: usize::try_from(line).unwrap_or(usize::MAX),
            column: usize::try_from(column).unwrap_or(usize::MAX),
        })
    }
}

impl std::fmt::Display for Pos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// A YAML node with the position where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct YamlNode {
    /// The value.
    pub value: YamlValue,
    /// Where the node starts (the document start when the parser did not say).
    pub pos: Pos,
}

/// The value of a [`YamlNode`].
#[derive(Debug, Clone, PartialEq)]
pub enum YamlValue {
    /// `null`, `~` or an empty value.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer that fits `i64`.
    Int(i64),
    /// Any other number (including integers beyond `i64`).
    Float(f64),
    /// A string scalar.
    String(String),
    /// A sequence.
    Seq(Vec<YamlNode>),
    /// A mapping, entries in document order (keys are nodes too).
    Map(Vec<(YamlNode, YamlNode)>),
}

/// A YAML text that is not a single well-formed document.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct YamlSyntaxError {
    /// What the parser said (without the location).
    pub message: String,
    /// Where, when the parser knows.
    pub pos: Option<Pos>,
}

impl YamlValue {
    /// A short name of the value's type, for messages (`string`, `mapping`, ...).
    pub fn type_name(&self) -> &'static str {
        match self {
            YamlValue::Null => "null",
            YamlValue::Bool(_) => "boolean",
            YamlValue::Int(_) => "integer",
            YamlValue::Float(_) => "number",
            YamlValue::String(_) => "string",
            YamlValue::Seq(_) => "sequence",
            YamlValue::Map(_) => "mapping",
        }
    }
}

impl YamlNode {
    /// The string value, when this is a string scalar.
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            YamlValue::String(s) => Some(s),
            _ => None,
        }
    }

    /// The integer value, when this is an integer scalar.
    pub fn as_i64(&self) -> Option<i64> {
        match self.value {
            YamlValue::Int(i) => Some(i),
            _ => None,
        }
    }

    /// The numeric value (integer or float).
    pub fn as_f64(&self) -> Option<f64> {
        match self.value {
            // Precision loss above 2^53 is irrelevant for bounds checks.
            YamlValue::Int(i) => Some(i as f64),
            YamlValue::Float(f) => Some(f),
            _ => None,
        }
    }

    /// The boolean value, when this is a boolean scalar.
    pub fn as_bool(&self) -> Option<bool> {
        match self.value {
            YamlValue::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// The entries, when this is a sequence.
    pub fn as_seq(&self) -> Option<&[YamlNode]> {
        match &self.value {
            YamlValue::Seq(s) => Some(s),
            _ => None,
        }
    }

    /// The entries, when this is a mapping.
    pub fn as_map(&self) -> Option<&[(YamlNode, YamlNode)]> {
        match &self.value {
            YamlValue::Map(m) => Some(m),
            _ => None,
        }
    }

    /// Whether this is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self.value, YamlValue::Null)
    }

    /// The key as text: strings as-is, other scalars rendered as JSON,
    /// collections as `<sequence>` / `<mapping>`.
    pub fn key_text(&self) -> String {
        match &self.value {
            YamlValue::String(s) => s.clone(),
            YamlValue::Seq(_) => "<sequence>".to_owned(),
            YamlValue::Map(_) => "<mapping>".to_owned(),
            _ => self.to_json().to_string(),
        }
    }

    /// The entry (key node, value node) under `key`, when this is a mapping.
    /// With duplicate keys the first entry wins.
    pub fn entry(&self, key: &str) -> Option<(&YamlNode, &YamlNode)> {
        self.as_map()?
            .iter()
            .find(|(k, _)| k.key_text() == key)
            .map(|(k, v)| (k, v))
    }

    /// The value under `key`, when this is a mapping.
    pub fn get(&self, key: &str) -> Option<&YamlNode> {
        self.entry(key).map(|(_, v)| v)
    }

    /// The node at a sequence index.
    pub fn index(&self, i: usize) -> Option<&YamlNode> {
        self.as_seq()?.get(i)
    }

    /// The node as JSON. Mapping keys become strings ([`YamlNode::key_text`]),
    /// duplicate keys keep the last value, non-finite floats become `null`.
    pub fn to_json(&self) -> Value {
        match &self.value {
            YamlValue::Null => Value::Null,
            YamlValue::Bool(b) => Value::Bool(*b),
            YamlValue::Int(i) => Value::Number(Number::from(*i)),
            YamlValue::Float(f) => Number::from_f64(*f).map_or(Value::Null, Value::Number),
            YamlValue::String(s) => Value::String(s.clone()),
            YamlValue::Seq(s) => Value::Array(s.iter().map(YamlNode::to_json).collect()),
            YamlValue::Map(m) => {
                let mut out = Map::new();
                for (k, v) in m {
                    out.insert(k.key_text(), v.to_json());
                }
                Value::Object(out)
            }
        }
    }
}

/// Parse one YAML document into a located tree (YAML 1.2 core booleans,
/// duplicate keys kept so that a validator can report them).
pub fn parse_yaml(text: &str) -> Result<YamlNode, YamlSyntaxError> {
    let mut options = serde_saphyr::options::Options::default();
    options.strict_booleans = true;
    options.duplicate_keys = serde_saphyr::options::DuplicateKeyPolicy::PassThrough;
    if text.trim().is_empty() {
        return Ok(YamlNode {
            value: YamlValue::Null,
            pos: Pos::START,
        });
    }
    serde_saphyr::from_str_with_options::<YamlNode>(text, options).map_err(|e| {
        let pos = e.location().and_then(|l| Pos::from_location(&l));
        YamlSyntaxError {
            message: first_line(&e.to_string()),
            pos,
        }
    })
}

/// Deserialize one YAML document into `T` (a policy, a registry, a
/// session script...). The error is one line: where, what, and the line of
/// text it is about (`line 2 column 7: ... (in `cage: [require`)`), in
/// place of the parser's multi-line snippet, so that a command reports it
/// on one line.
///
/// ```
/// use kaged_plugin_protocol::manifest::from_yaml_str;
/// #[derive(Debug, serde::Deserialize)]
/// struct Policy { cage: String }
/// let p: Policy = from_yaml_str("cage: require\n").unwrap();
/// assert_eq!(p.cage, "require");
/// let e = from_yaml_str::<Policy>("cage: [require\n").unwrap_err();
/// assert!(!e.to_string().contains('\n'), "{e}");
/// assert!(e.to_string().starts_with("line 1 column 7: "), "{e}");
/// assert!(e.to_string().ends_with(" (in `cage: [require`)"), "{e}");
/// assert_eq!(e.pos.map(|p| (p.line, p.column)), Some((1, 7)));
/// ```
pub fn from_yaml_str<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, YamlSyntaxError> {
    serde_saphyr::from_str(text).map_err(|e| {
        let pos = e.location().and_then(|l| Pos::from_location(&l));
        let mut message = first_line(&e.to_string());
        let quoted = pos
            .and_then(|p| text.lines().nth(p.line - 1))
            .map(str::trim)
            .filter(|l| !l.is_empty());
        if let Some(line) = quoted {
            message.push_str(&format!(" (in `{}`)", cut(line, QUOTED_CHARS)));
        }
        YamlSyntaxError { message, pos }
    })
}

/// How much of the line an error is about [`from_yaml_str`] quotes.
const QUOTED_CHARS: usize = 80;

/// The first line of a parser message, without its `error: ` label.
fn first_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or("").trim();
    line.strip_prefix("error:")
        .unwrap_or(line)
        .trim()
        .to_owned()
}

impl<'de> Deserialize<'de> for YamlNode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = Spanned::<YamlValue>::deserialize(d)?;
        Ok(YamlNode {
            value: s.value,
            pos: Pos::from_location(&s.referenced).unwrap_or(Pos::START),
        })
    }
}

impl<'de> Deserialize<'de> for YamlValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = YamlValue;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<YamlValue, E> {
        Ok(YamlValue::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<YamlValue, E> {
        Ok(YamlValue::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<YamlValue, E> {
        Ok(i64::try_from(v).map_or(YamlValue::Float(v as f64), YamlValue::Int))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<YamlValue, E> {
        Ok(i64::try_from(v).map_or(YamlValue::Float(v as f64), YamlValue::Int))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<YamlValue, E> {
        Ok(i64::try_from(v).map_or(YamlValue::Float(v as f64), YamlValue::Int))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<YamlValue, E> {
        Ok(YamlValue::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<YamlValue, E> {
        Ok(YamlValue::String(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<YamlValue, E> {
        Ok(YamlValue::String(v))
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<YamlValue, E> {
        Ok(YamlValue::String(String::from_utf8_lossy(v).into_owned()))
    }
    fn visit_unit<E: de::Error>(self) -> Result<YamlValue, E> {
        Ok(YamlValue::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<YamlValue, E> {
        Ok(YamlValue::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<YamlValue, D::Error> {
        YamlValue::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<YamlValue, A::Error> {
        let mut out = Vec::new();
        while let Some(n) = a.next_element::<YamlNode>()? {
            out.push(n);
        }
        Ok(YamlValue::Seq(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<YamlValue, A::Error> {
        let mut out = Vec::new();
        while let Some(k) = a.next_key::<YamlNode>()? {
            let v = a.next_value::<YamlNode>()?;
            out.push((k, v));
        }
        Ok(YamlValue::Map(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_carry_positions() {
        let doc = "name: x\nlist:\n  - a\n  - net: []\nkaged_api: 1\nflag: yes\n";
        let root = parse_yaml(doc).expect("parses");
        let (k, v) = root.entry("name").expect("name");
        assert_eq!((k.pos.line, k.pos.column), (1, 1));
        assert_eq!((v.pos.line, v.pos.column), (1, 7));
        let list = root.get("list").expect("list");
        let second = list.index(1).expect("second");
        assert_eq!(second.pos.line, 4);
        let net = second.get("net").expect("net");
        assert_eq!(net.as_seq().map(<[YamlNode]>::len), Some(0));
        assert_eq!(root.get("kaged_api").and_then(YamlNode::as_i64), Some(1));
        assert_eq!(root.get("flag").and_then(YamlNode::as_str), Some("yes"));
    }

    #[test]
    fn duplicate_keys_are_kept() {
        let root = parse_yaml("a: 1\na: 2\n").expect("parses");
        assert_eq!(root.as_map().map(<[_]>::len), Some(2));
    }

    #[test]
    fn syntax_error_has_position() {
        let e = parse_yaml("a: [1, 2\nb: 3\n").expect_err("bad");
        assert!(e.pos.is_some(), "{e:?}");
    }
}
