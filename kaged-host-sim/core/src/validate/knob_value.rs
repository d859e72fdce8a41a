//! A value against a knob's type bounds (`plugin-host.md` § Plugin knob
//! schema): the one check behind the validator's `default` checks
//! ([`super::knob_fields`]) and the host's knob writes (`firing::knobs`).
//! Each caller reads the bounds its own way (located YAML, or a loaded
//! manifest) and words its own diagnostics.

use regex::Regex;
use serde_json::Value;

use super::knob_types::KnobType;

/// The bounds a knob puts on its values; `None` bounds nothing.
#[derive(Debug, Default)]
pub struct KnobBounds<'a> {
    /// `range` / `int_range`: the smallest value.
    pub min: Option<f64>,
    /// `range` / `int_range`: the largest value.
    pub max: Option<f64>,
    /// `enum`: the allowed values.
    pub values: Option<Vec<&'a str>>,
    /// `text` / `multiline`: the most characters.
    pub max_length: Option<u64>,
    /// `text`: the pattern a value must match (compiled by the caller, which
    /// reports a pattern that does not compile its own way).
    pub pattern: Option<&'a Regex>,
    /// `path`: the prefixes one of which a value must start with.
    pub prefixes: Option<Vec<&'a str>>,
}

/// How a value breaks a knob's bounds.
#[derive(Debug, Clone, PartialEq)]
pub enum KnobValueError {
    /// Not a value of the knob's type.
    WrongType,
    /// An `int_range` value that is not an integer.
    NotInteger,
    /// Below `min`.
    BelowMin {
        /// The value.
        value: f64,
        /// The bound.
        min: f64,
    },
    /// Above `max`.
    AboveMax {
        /// The value.
        value: f64,
        /// The bound.
        max: f64,
    },
    /// Not one of an `enum`'s `values`.
    NotInValues,
    /// Longer than `max_length`.
    TooLong {
        /// The value's length in characters.
        len: usize,
        /// The bound.
        max: u64,
    },
    /// Does not match `pattern`.
    NoPatternMatch,
    /// Starts with none of `prefixes`.
    NoPrefix,
}

impl KnobBounds<'_> {
    /// A number against `min` and `max`.
    pub fn check_number(&self, value: f64) -> Result<(), KnobValueError> {
        match (self.min, self.max) {
            (Some(min), _) if value < min => Err(KnobValueError::BelowMin { value, min }),
            (_, Some(max)) if value > max => Err(KnobValueError::AboveMax { value, max }),
            _ => Ok(()),
        }
    }

    /// A string against `values`, `max_length`, `pattern` and `prefixes`:
    /// every violation, in that order.
    pub fn check_str(&self, s: &str) -> Vec<KnobValueError> {
        let mut out = Vec::new();
        if self.values.as_ref().is_some_and(|v| !v.contains(&s)) {
            out.push(KnobValueError::NotInValues);
        }
        if let Some(max) = self.max_length {
            let len = s.chars().count();
            if len as u64 > max {
                out.push(KnobValueError::TooLong { len, max });
            }
        }
        if self.pattern.is_some_and(|re| !re.is_match(s)) {
            out.push(KnobValueError::NoPatternMatch);
        }
        if let Some(prefixes) = &self.prefixes {
            if !prefixes.iter().any(|p| s.starts_with(p)) {
                out.push(KnobValueError::NoPrefix);
            }
        }
        out
    }

    /// A JSON value of a knob of type `kind`: its type, then its bounds;
    /// the first violation.
    pub fn check_value(&self, kind: KnobType, value: &Value) -> Result<(), KnobValueError> {
        match (kind, value) {
            (KnobType::Range, Value::Number(n)) => {
                self.check_number(n.as_f64().unwrap_or(f64::NAN))
            }
            (KnobType::IntRange, Value::Number(n)) if n.is_i64() || n.is_u64() => {
                self.check_number(n.as_f64().unwrap_or(f64::NAN))
            }
            (KnobType::IntRange, _) => Err(KnobValueError::NotInteger),
            (
                KnobType::Enum | KnobType::Text | KnobType::Multiline | KnobType::Path,
                Value::String(s),
            ) => self.check_str(s).into_iter().next().map_or(Ok(()), Err),
            (KnobType::Boolean, Value::Bool(_)) => Ok(()),
            (KnobType::ModelAlias, Value::String(_) | Value::Null) => Ok(()),
            _ => Err(KnobValueError::WrongType),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_are_checked_against_min_then_max() {
        let b = KnobBounds {
            min: Some(1.0),
            max: Some(3.0),
            ..KnobBounds::default()
        };
        assert_eq!(b.check_value(KnobType::Range, &json!(2.5)), Ok(()));
        assert_eq!(
            b.check_value(KnobType::Range, &json!(0)),
            Err(KnobValueError::BelowMin {
                value: 0.0,
                min: 1.0
            })
        );
        assert_eq!(
            b.check_value(KnobType::IntRange, &json!(4)),
            Err(KnobValueError::AboveMax {
                value: 4.0,
                max: 3.0
            })
        );
        assert_eq!(
            b.check_value(KnobType::IntRange, &json!(2.5)),
            Err(KnobValueError::NotInteger)
        );
        assert_eq!(
            b.check_value(KnobType::Range, &json!("2")),
            Err(KnobValueError::WrongType)
        );
    }

    #[test]
    fn strings_report_every_violation_in_field_order() {
        let re = Regex::new("^a+$").unwrap();
        let b = KnobBounds {
            max_length: Some(2),
            pattern: Some(&re),
            ..KnobBounds::default()
        };
        assert_eq!(
            b.check_str("bbb"),
            [
                KnobValueError::TooLong { len: 3, max: 2 },
                KnobValueError::NoPatternMatch
            ]
        );
        assert_eq!(
            b.check_value(KnobType::Text, &json!("bbb")),
            Err(KnobValueError::TooLong { len: 3, max: 2 })
        );
        let e = KnobBounds {
            values: Some(vec!["x"]),
            prefixes: Some(vec!["project:"]),
            ..KnobBounds::default()
        };
        assert_eq!(
            e.check_str("y"),
            [KnobValueError::NotInValues, KnobValueError::NoPrefix]
        );
        assert_eq!(
            e.check_value(KnobType::Boolean, &json!("y")),
            Err(KnobValueError::WrongType)
        );
        assert_eq!(
            KnobBounds::default().check_value(KnobType::ModelAlias, &Value::Null),
            Ok(())
        );
    }
}
