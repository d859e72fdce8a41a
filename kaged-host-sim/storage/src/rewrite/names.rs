//! Identifier policy: which names a plugin may use, and how they are prefixed.

use sqlparser::ast::{Ident, ObjectName, ObjectNamePart};

use super::error::RewriteError;

/// Name prefixes (compared ASCII-case-insensitively, after unquoting) that no
/// plugin may use for any object, CTE or alias-like table reference.
///
/// * `sqlite_`: SQLite's own catalogue (`sqlite_master`, `sqlite_schema`,
///   `sqlite_sequence`, `sqlite_stat1`, ...).
/// * `pragma_`: table-valued pragma functions (`pragma_table_info(...)`).
/// * `plugin_`: every plugin's prefixed objects. A plugin only ever names its
///   own tables unprefixed, so a name that already carries *a* `plugin_`
///   prefix is either another plugin's table or an attempt to guess our own
///   prefix; both are refused.
pub const RESERVED_NAME_PREFIXES: [&str; 3] = ["sqlite_", "pragma_", "plugin_"];

/// SQLite's reserved words: the keywords its grammar never takes as a bare
/// identifier (those without a `%fallback ID` in SQLite's `parse.y`).
/// sqlparser reads some of them as column names where SQLite cannot
/// (`SELECT x * FROM t` parses as `x` times a column `FROM`, aliased `t`),
/// so an unquoted one in an expression is refused rather than reprinted
/// as something SQLite reads another way.
pub const SQLITE_RESERVED_WORDS: [&str; 56] = [
    "ADD",
    "ALL",
    "ALTER",
    "AND",
    "AS",
    "AUTOINCREMENT",
    "BETWEEN",
    "CASE",
    "CHECK",
    "COLLATE",
    "COMMIT",
    "CONSTRAINT",
    "CREATE",
    "CROSS",
    "DEFAULT",
    "DEFERRABLE",
    "DELETE",
    "DISTINCT",
    "DROP",
    "ELSE",
    "ESCAPE",
    "EXCEPT",
    "EXISTS",
    "FOREIGN",
    "FROM",
    "GROUP",
    "HAVING",
    "IN",
    "INDEX",
    "INNER",
    "INSERT",
    "INTERSECT",
    "INTO",
    "IS",
    "ISNULL",
    "JOIN",
    "LEFT",
    "LIMIT",
    "NATURAL",
    "NOT",
    "NOTNULL",
    "ON",
    "OR",
    "ORDER",
    "PRIMARY",
    "REFERENCES",
    "RETURNING",
    "SELECT",
    "SET",
    "TABLE",
    "THEN",
    "TO",
    "UNION",
    "UNIQUE",
    "UPDATE",
    "USING",
];

/// Whether `ident` is an unquoted SQLite reserved word
/// ([`SQLITE_RESERVED_WORDS`], ASCII-case-insensitively).
pub fn is_bare_reserved_word(ident: &Ident) -> bool {
    ident.quote_style.is_none()
        && SQLITE_RESERVED_WORDS
            .iter()
            .any(|w| w.eq_ignore_ascii_case(&ident.value))
}

/// SQL functions a plugin may never call (compared ASCII-case-insensitively).
/// Every function whose name starts with `sqlite_` is refused as well.
///
/// They load code, touch the file system, disclose the build or the
/// internals of the database, or configure FTS tokenizers (a documented
/// code-execution vector).
pub const DENIED_FUNCTIONS: [&str; 15] = [
    "load_extension",
    "readfile",
    "writefile",
    "edit",
    "fts3_tokenizer",
    "zipfile",
    "zipfile_cds",
    "sqlar_compress",
    "sqlar_uncompress",
    "lsdir",
    "fsdir",
    "shell_escape_crnl",
    "eval",
    "unhex_blob_to_file",
    "sqlite_dbpage",
];

/// Whether `name` (unquoted) starts with a reserved prefix.
pub fn is_reserved_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    RESERVED_NAME_PREFIXES.iter().any(|p| lower.starts_with(p))
}

/// Whether a function called `name` (unquoted) is refused.
pub fn is_denied_function(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.starts_with("sqlite_") || DENIED_FUNCTIONS.contains(&lower.as_str())
}

/// The single identifier of an unqualified name; refuses `a.b`, `main.x`,
/// `temp.x` and dialect-specific name functions.
pub fn single_ident(name: &ObjectName) -> Result<&Ident, RewriteError> {
    match name.0.as_slice() {
        [ObjectNamePart::Identifier(id)] => Ok(id),
        [] => Err(RewriteError::denied("empty object name")),
        [_, ..] if name.0.len() > 1 => Err(RewriteError::denied(format!(
            "schema-qualified name `{name}` is not allowed"
        ))),
        _ => Err(RewriteError::denied(format!(
            "computed object name `{name}` is not allowed"
        ))),
    }
}

/// Check that a plugin-chosen name is usable (not reserved, not empty).
pub fn check_plugin_name(id: &Ident) -> Result<(), RewriteError> {
    if id.value.is_empty() {
        return Err(RewriteError::denied("empty identifier"));
    }
    if is_reserved_name(&id.value) {
        return Err(RewriteError::denied(format!(
            "name `{}` is reserved (sqlite_, pragma_ and plugin_ names are not accessible)",
            id.value
        )));
    }
    Ok(())
}

/// Rewrite an unqualified object name in place to `"<prefix><name>"` and
/// return the original identifier (to be used as an alias).
pub fn prefix_name(name: &mut ObjectName, prefix: &str) -> Result<Ident, RewriteError> {
    let original = single_ident(name)?.clone();
    check_plugin_name(&original)?;
    let mut prefixed = Ident::with_quote('"', format!("{prefix}{}", original.value));
    prefixed.span = original.span;
    name.0 = vec![ObjectNamePart::Identifier(prefixed)];
    Ok(original)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_names_are_case_insensitive() {
        assert!(is_reserved_name("SQLITE_master"));
        assert!(is_reserved_name("Pragma_Table_Info"));
        assert!(is_reserved_name("PLUGIN_victim_x"));
        assert!(!is_reserved_name("presets"));
        assert!(is_denied_function("LOAD_EXTENSION"));
        assert!(is_denied_function("sqlite_version"));
        assert!(!is_denied_function("lower"));
    }
}
