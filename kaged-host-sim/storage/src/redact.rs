//! Redaction of plugin SQL for the `plugin.storage_denied` audit event.

use sqlparser::dialect::SQLiteDialect;
use sqlparser::tokenizer::{Token, Tokenizer, Whitespace};

/// Redacted SQL longer than this (in characters) is cut, with `…` appended.
pub const MAX_REDACTED_LEN: usize = 1024;

/// Redact `sql` for the audit log: every literal (strings, numbers, blobs
/// `X'..'`, any other quoted literal) becomes `?` and every comment is
/// dropped; keywords, identifiers, operators and placeholders are kept, so
/// the operator sees *what* was attempted on *which* names but none of the
/// data. SQL that does not tokenize is replaced by a placeholder that only
/// gives its length. The result is at most [`MAX_REDACTED_LEN`] characters.
///
/// ```
/// use kaged_host_storage::redact_sql;
/// assert_eq!(
///     redact_sql("SELECT * FROM secrets WHERE pw = 'hunter2' AND n > 42 -- hi"),
///     "SELECT * FROM secrets WHERE pw = ? AND n > ?"
/// );
/// ```
pub fn redact_sql(sql: &str) -> String {
    let dialect = SQLiteDialect {};
    let Ok(tokens) = Tokenizer::new(&dialect, sql).tokenize() else {
        return format!("<untokenizable SQL, {} bytes>", sql.len());
    };
    let mut out = String::with_capacity(sql.len().min(MAX_REDACTED_LEN));
    for t in &tokens {
        match t {
            Token::Whitespace(
                Whitespace::SingleLineComment { .. } | Whitespace::MultiLineComment(_),
            ) => {
                if !out.ends_with(' ') {
                    out.push(' ');
                }
            }
            Token::Whitespace(_) => {
                if !out.ends_with(' ') {
                    out.push(' ');
                }
            }
            t if is_literal(t) => out.push('?'),
            t => out.push_str(&t.to_string()),
        }
        if out.chars().count() > MAX_REDACTED_LEN {
            let cut: String = out.chars().take(MAX_REDACTED_LEN).collect();
            return format!("{cut}…");
        }
    }
    out.trim().to_owned()
}

fn is_literal(t: &Token) -> bool {
    matches!(
        t,
        Token::Number(..)
            | Token::SingleQuotedString(_)
            | Token::DoubleQuotedString(_)
            | Token::TripleSingleQuotedString(_)
            | Token::TripleDoubleQuotedString(_)
            | Token::DollarQuotedString(_)
            | Token::SingleQuotedByteStringLiteral(_)
            | Token::DoubleQuotedByteStringLiteral(_)
            | Token::TripleSingleQuotedByteStringLiteral(_)
            | Token::TripleDoubleQuotedByteStringLiteral(_)
            | Token::SingleQuotedRawStringLiteral(_)
            | Token::DoubleQuotedRawStringLiteral(_)
            | Token::TripleSingleQuotedRawStringLiteral(_)
            | Token::TripleDoubleQuotedRawStringLiteral(_)
            | Token::NationalStringLiteral(_)
            | Token::QuoteDelimitedStringLiteral(_)
            | Token::NationalQuoteDelimitedStringLiteral(_)
            | Token::EscapedStringLiteral(_)
            | Token::UnicodeStringLiteral(_)
            | Token::HexStringLiteral(_)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_and_comments_are_removed() {
        let r =
            redact_sql("INSERT INTO t VALUES ('s3cr3t', X'DEADBEEF', 3.14, ?1) /* token=abc */");
        assert_eq!(r, "INSERT INTO t VALUES (?, ?, ?, ?1)");
        assert!(!r.contains("s3cr3t"));
        assert!(redact_sql("SELECT 'unterminated").starts_with("<untokenizable"));
        assert!(redact_sql(&"SELECT 1 + ".repeat(1000)).chars().count() <= MAX_REDACTED_LEN + 1);
    }
}
