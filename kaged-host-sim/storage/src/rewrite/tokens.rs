//! Token-level checks, before parsing and on the reprint.

use sqlparser::dialect::SQLiteDialect;
use sqlparser::tokenizer::{Token, Tokenizer, Whitespace};

use super::error::RewriteError;

/// Leading keywords refused before parsing, so that statements the parser
/// does not know (`DETACH`, `REINDEX`, ...) are denials, not syntax errors.
pub const DENIED_LEADING_KEYWORDS: [&str; 13] = [
    "ATTACH",
    "DETACH",
    "PRAGMA",
    "VACUUM",
    "BEGIN",
    "COMMIT",
    "END",
    "ROLLBACK",
    "SAVEPOINT",
    "RELEASE",
    "REINDEX",
    "ANALYZE",
    "EXPLAIN",
];

/// `CREATE TRIGGER IF NOT EXISTS ` at the start of a statement.
pub(super) fn trigger_if_not_exists() -> &'static regex::Regex {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        regex::Regex::new(r"(?i)^\s*CREATE\s+TRIGGER\s+IF\s+NOT\s+EXISTS\s")
            .unwrap_or_else(|e| unreachable!("constant regex: {e}"))
    })
}

/// Refuse denied leading keywords, on tokens (before parsing, so that
/// statements the parser does not know are denials, not syntax errors).
pub(super) fn precheck(tokens: &[Token]) -> Result<(), RewriteError> {
    let mut words = tokens
        .iter()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .map(|t| match t {
            Token::Word(w) if w.quote_style.is_none() => w.value.to_ascii_uppercase(),
            _ => String::new(),
        });
    let first = words.next().unwrap_or_default();
    if DENIED_LEADING_KEYWORDS.contains(&first.as_str()) {
        return Err(RewriteError::denied(format!("{first} is not allowed")));
    }
    if first == "CREATE" {
        let second = words.next().unwrap_or_default();
        if matches!(second.as_str(), "TEMP" | "TEMPORARY") {
            return Err(RewriteError::denied("TEMP objects are not allowed"));
        }
        if second == "VIRTUAL" {
            return Err(RewriteError::denied("virtual tables are not allowed"));
        }
    }
    Ok(())
}

/// Refuse token sequences sqlparser reads differently from SQLite, which
/// would otherwise be reprinted with another meaning: `0XFF` (a number
/// followed by a word: SQLite's upper-case hex integer, read by sqlparser
/// as `0 AS XFF`) and the postfix operators `ISNULL`/`NOTNULL` (read as
/// aliases).
pub(super) fn misread_tokens(tokens: &[Token]) -> Result<(), RewriteError> {
    for pair in tokens.windows(2) {
        if let [Token::Number(..), Token::Word(_)] = pair {
            return Err(RewriteError::Invalid(format!(
                "unsupported literal `{}{}`",
                pair[0], pair[1]
            )));
        }
    }
    for t in tokens {
        // SQLite's blob literal is an even number of hex digits.
        if let Token::HexStringLiteral(hex) = t {
            if hex.len() % 2 == 1 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(RewriteError::Invalid(format!(
                    "X'{}' is not a blob literal: it takes an even number of hex digits",
                    hex.escape_debug()
                )));
            }
        }
        if let Token::Word(w) = t {
            let upper = w.value.to_ascii_uppercase();
            if w.quote_style.is_none() && (upper == "ISNULL" || upper == "NOTNULL") {
                return Err(RewriteError::Invalid(format!(
                    "`{upper}` is not supported; write IS NULL / IS NOT NULL"
                )));
            }
            // SQLite's bare identifiers are ASCII letters, digits, `_` and
            // `$`, and any non-ASCII character; sqlparser takes more.
            if let Some(c) = w.value.chars().find(|c| {
                w.quote_style.is_none()
                    && c.is_ascii()
                    && !(c.is_ascii_alphanumeric() || *c == '_' || *c == '$')
            }) {
                return Err(RewriteError::Invalid(format!(
                    "unquoted name `{}` holds {c:?}, which SQLite does not take in a name; quote it",
                    w.value.escape_debug()
                )));
            }
        }
    }
    Ok(())
}

/// Whether SQL that did not parse looks like several statements: a `;`
/// followed by anything but whitespace, outside a `CREATE TRIGGER` (whose
/// body has semicolons of its own).
pub(super) fn several_statements(tokens: &[Token]) -> bool {
    let mut significant = tokens.iter().filter(|t| !matches!(t, Token::Whitespace(_)));
    let trigger = significant
        .clone()
        .take(4)
        .any(|t| matches!(t, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("TRIGGER")));
    if trigger {
        return false;
    }
    let mut seen_semicolon = false;
    for t in significant.by_ref() {
        match t {
            Token::SemiColon => seen_semicolon = true,
            _ if seen_semicolon => return true,
            _ => {}
        }
    }
    false
}

/// The placeholders of a token stream, in order (`?`, `?3`, `:name`, `@x`, `$y`).
fn placeholders(tokens: &[Token]) -> Vec<String> {
    let mut out = Vec::new();
    let mut iter = tokens.iter().peekable();
    while let Some(t) = iter.next() {
        match t {
            Token::Placeholder(p) => out.push(p.clone()),
            Token::Colon | Token::AtSign => {
                if let Some(Token::Word(w)) = iter.peek() {
                    out.push(format!("{t}{}", w.value));
                    iter.next();
                }
            }
            _ => {}
        }
    }
    out
}

/// Check the reprinted SQL against the original, on tokens.
///
/// * It must hold no comment: sqlparser prints `- -1` as `--1`, which
///   SQLite reads as a comment swallowing the rest of the statement.
/// * Binding is positional, so the rewritten SQL must number its
///   parameters as the original did: either the placeholders come out in
///   the same order, or all of them are explicitly numbered (`?NNN`).
pub(super) fn check_reprint(original: &[Token], out: &str) -> Result<(), RewriteError> {
    let dialect = SQLiteDialect {};
    let out_tokens = Tokenizer::new(&dialect, out)
        .tokenize()
        .map_err(|e| RewriteError::Invalid(format!("rewritten SQL does not tokenize: {e}")))?;
    if out_tokens.iter().any(|t| {
        matches!(
            t,
            Token::Whitespace(
                Whitespace::SingleLineComment { .. } | Whitespace::MultiLineComment(_)
            )
        )
    }) {
        return Err(RewriteError::Invalid(
            "this statement cannot be reprinted faithfully (e.g. `- -x`); add parentheses".into(),
        ));
    }
    let before = placeholders(original);
    let after = placeholders(&out_tokens);
    let numbered = |p: &String| {
        p.len() > 1 && p.starts_with('?') && p[1..].bytes().all(|b| b.is_ascii_digit())
    };
    if before == after || (before.iter().all(numbered) && after.iter().all(numbered)) {
        Ok(())
    } else {
        Err(RewriteError::Invalid(
            "cannot keep the order of the parameters of this statement; use numbered placeholders (?1, ?2, ...)"
                .into(),
        ))
    }
}
