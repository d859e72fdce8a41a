//! The AST walker that prefixes table references and enforces the policy.
//!
//! It is a [`VisitorMut`] of its own: sqlparser's traversal reaches every
//! node (subqueries in any expression, CTE bodies, view queries, trigger
//! bodies, `INSERT ... SELECT`, `UPDATE ... FROM`, joins), and the hooks
//! below decide what each name means:
//!
//! * statements ([`VisitorMut::pre_visit_statement`]): the allow-list, and
//!   the names that are not table factors (DDL object names, index and
//!   trigger names, rename targets, `INSERT` targets, foreign-key targets);
//! * queries: a stack of CTE scopes, so a reference to a CTE name visible
//!   at that point is left alone;
//! * table factors: every named table that is not a CTE is prefixed and
//!   aliased to its plugin-facing name; any other kind of factor
//!   (table-valued functions, `UNNEST`, ...) is refused;
//! * expressions: denied functions and `schema.table.column` references.

use std::ops::ControlFlow;

use sqlparser::ast::{
    Expr, Ident, ObjectName, Query, SetExpr, Statement, TableAlias, TableFactor, Value,
    ValueWithSpan, VisitorMut,
};

use super::names::{
    check_plugin_name, is_bare_reserved_word, is_denied_function, prefix_name, single_ident,
};

use super::error::RewriteError;

/// How the next table factor is to be treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Target {
    /// The target of `UPDATE`/`DELETE` outside a trigger: always a real
    /// table (never a CTE), prefixed and aliased.
    Aliased,
    /// The target of `UPDATE`/`DELETE` inside a trigger body, where SQLite
    /// allows no alias: prefixed only.
    Bare,
}

/// What kind of statement a stack frame is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Frame {
    /// A `CREATE TRIGGER` (its body statements follow).
    Trigger,
    /// Any other statement.
    Other,
}

/// The rewriting visitor for one statement of one plugin.
pub(super) struct Walker<'p> {
    pub(super) prefix: &'p str,
    /// The SQL text that was parsed (to tell `0x10` from `X'10'`).
    sql: &'p str,
    /// CTE names visible at the current point, one entry per query (lowercase).
    pub(super) cte_scopes: Vec<Vec<String>>,
    /// Enclosing statements.
    pub(super) frames: Vec<Frame>,
    /// Set by `UPDATE`/`DELETE`, consumed by their target table factor.
    pub(super) target: Option<Target>,
    /// The prefixed names produced so far (lowercase).
    pub(super) objects: Vec<String>,
}

impl<'p> Walker<'p> {
    pub(super) fn new(prefix: &'p str, sql: &'p str) -> Walker<'p> {
        Walker {
            prefix,
            sql,
            cte_scopes: Vec::new(),
            frames: Vec::new(),
            target: None,
            objects: Vec::new(),
        }
    }

    /// The prefixed names the statement references (lowercase, deduplicated).
    pub(super) fn into_objects(mut self) -> Vec<String> {
        self.objects.sort();
        self.objects.dedup();
        self.objects
    }

    /// Prefix `name` in place, remember it, and return the original identifier.
    pub(super) fn prefix_ident(
        &mut self,
        name: &mut ObjectName,
    ) -> Result<sqlparser::ast::Ident, RewriteError> {
        let original = prefix_name(name, self.prefix)?;
        self.objects
            .push(format!("{}{}", self.prefix, original.value).to_ascii_lowercase());
        Ok(original)
    }

    fn is_cte(&self, name: &str) -> bool {
        let lower = name.to_ascii_lowercase();
        self.cte_scopes.iter().flatten().any(|n| *n == lower)
    }

    pub(super) fn prefix(&mut self, name: &mut ObjectName) -> Result<(), RewriteError> {
        self.prefix_ident(name).map(drop)
    }

    pub(super) fn in_trigger(&self) -> bool {
        self.frames.contains(&Frame::Trigger)
    }

    fn table_factor(&mut self, tf: &mut TableFactor) -> Result<(), RewriteError> {
        let target = self.target.take();
        match tf {
            TableFactor::Table {
                name,
                alias,
                args,
                with_hints,
                version,
                with_ordinality,
                partitions,
                json_path,
                sample,
                index_hints,
            } => {
                if args.is_some() {
                    return Err(RewriteError::denied(format!(
                        "table-valued function `{name}` in FROM"
                    )));
                }
                if !with_hints.is_empty()
                    || version.is_some()
                    || *with_ordinality
                    || !partitions.is_empty()
                    || json_path.is_some()
                    || sample.is_some()
                    || !index_hints.is_empty()
                {
                    return Err(RewriteError::denied("unsupported table reference syntax"));
                }
                let id = single_ident(name)?;
                if target.is_none() && self.is_cte(&id.value) {
                    return check_plugin_name(id);
                }
                let original = self.prefix_ident(name)?;
                if alias.is_none() && target != Some(Target::Bare) {
                    *alias = Some(TableAlias {
                        explicit: true,
                        name: original,
                        columns: Vec::new(),
                        at: None,
                    });
                } else if alias.is_some() && target == Some(Target::Bare) {
                    return Err(RewriteError::denied(
                        "aliases are not allowed in trigger bodies",
                    ));
                }
                Ok(())
            }
            TableFactor::Derived { lateral: false, .. } | TableFactor::NestedJoin { .. } => Ok(()),
            other => Err(RewriteError::denied(format!(
                "table factor `{other}` is not allowed"
            ))),
        }
    }

    fn query(&mut self, q: &Query) -> Result<(), RewriteError> {
        if !q.pipe_operators.is_empty()
            || q.for_clause.is_some()
            || q.settings.is_some()
            || q.format_clause.is_some()
        {
            return Err(RewriteError::denied("unsupported query syntax"));
        }
        check_set_expr(&q.body)?;
        let mut scope = Vec::new();
        if let Some(with) = &q.with {
            for cte in &with.cte_tables {
                check_plugin_name(&cte.alias.name)?;
                if cte.from.is_some() {
                    return Err(RewriteError::denied("unsupported CTE syntax"));
                }
                scope.push(cte.alias.name.value.to_ascii_lowercase());
            }
        }
        self.cte_scopes.push(scope);
        Ok(())
    }
}

/// Refuse `TABLE t` (a table reference that is not a table factor) and
/// `SELECT ... INTO`.
fn check_set_expr(body: &SetExpr) -> Result<(), RewriteError> {
    match body {
        SetExpr::Table(_) => Err(RewriteError::denied("TABLE statement")),
        SetExpr::SetOperation { left, right, .. } => {
            check_set_expr(left)?;
            check_set_expr(right)
        }
        SetExpr::Select(s) if s.into.is_some() => Err(RewriteError::denied("SELECT ... INTO")),
        SetExpr::Merge(_) => Err(RewriteError::denied("MERGE")),
        _ => Ok(()),
    }
}

fn check_expr(e: &Expr) -> Result<(), RewriteError> {
    match e {
        Expr::Function(f) => {
            let id = single_ident(&f.name).map_err(|_| {
                RewriteError::denied(format!("qualified function name `{}`", f.name))
            })?;
            if is_denied_function(&id.value) {
                return Err(RewriteError::denied(format!(
                    "function `{}` is not allowed",
                    id.value
                )));
            }
            Ok(())
        }
        Expr::CompoundIdentifier(parts) if parts.len() > 2 => Err(RewriteError::denied(format!(
            "schema-qualified column reference `{e}`"
        ))),
        Expr::Identifier(id) if is_bare_reserved_word(id) => Err(reserved(id)),
        Expr::CompoundIdentifier(parts) => {
            match parts.iter().find(|id| is_bare_reserved_word(id)) {
                Some(id) => Err(reserved(id)),
                None => Ok(()),
            }
        }
        _ => Ok(()),
    }
}

/// A reserved word where a column name was read: SQLite would read the
/// statement another way, or not at all.
fn reserved(id: &Ident) -> RewriteError {
    RewriteError::Invalid(format!(
        "`{}` is an SQL keyword, not a column name here; quote it (\"{}\") if it is one",
        id.value, id.value
    ))
}

/// sqlparser reads the hexadecimal integer `0x10` as the blob `X'10'`;
/// turn it back into the integer SQLite means (64-bit two's complement).
fn hex_integer(sql: &str, v: &mut ValueWithSpan) -> Result<(), RewriteError> {
    let Value::HexStringLiteral(digits) = &v.value else {
        return Ok(());
    };
    let start = v.span.start;
    let line = usize::try_from(start.line).unwrap_or(0);
    let column = usize::try_from(start.column).unwrap_or(0);
    let Some(text) = line.checked_sub(1).and_then(|l| sql.split('\n').nth(l)) else {
        return Ok(());
    };
    let head: String = text
        .chars()
        .skip(column.saturating_sub(1))
        .take(2)
        .collect();
    if !head.eq_ignore_ascii_case("0x") {
        return Ok(());
    }
    if digits.len() > 16 {
        return Err(RewriteError::Invalid(format!(
            "hex literal too big: 0x{digits}"
        )));
    }
    let n = u64::from_str_radix(digits, 16)
        .map_err(|_| RewriteError::Invalid(format!("bad hex literal: 0x{digits}")))?;
    // SQLite reads 0x8000000000000000.. as negative: keep the bits.
    let n = i64::from_ne_bytes(n.to_ne_bytes());
    let text = if n < 0 {
        // A negative literal would print as `-n` and could meet a unary
        // minus as `--`; parenthesize the expression instead.
        format!("({n})")
    } else {
        n.to_string()
    };
    v.value = Value::Number(text, false);
    Ok(())
}

fn brk<T>(r: Result<T, RewriteError>) -> ControlFlow<RewriteError> {
    match r {
        Ok(_) => ControlFlow::Continue(()),
        Err(e) => ControlFlow::Break(e),
    }
}

impl VisitorMut for Walker<'_> {
    type Break = RewriteError;

    fn pre_visit_statement(&mut self, st: &mut Statement) -> ControlFlow<RewriteError> {
        match self.statement(st) {
            Ok(frame) => {
                self.frames.push(frame);
                ControlFlow::Continue(())
            }
            Err(e) => ControlFlow::Break(e),
        }
    }

    fn post_visit_statement(&mut self, _st: &mut Statement) -> ControlFlow<RewriteError> {
        self.frames.pop();
        if self.target.take().is_some() {
            // A DML statement whose target was never visited: refuse rather
            // than let the flag leak onto an unrelated table.
            return ControlFlow::Break(RewriteError::denied(
                "DML statement without a target table",
            ));
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<RewriteError> {
        brk(self.query(q))
    }

    fn post_visit_query(&mut self, _q: &mut Query) -> ControlFlow<RewriteError> {
        self.cte_scopes.pop();
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, tf: &mut TableFactor) -> ControlFlow<RewriteError> {
        brk(self.table_factor(tf))
    }

    fn pre_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<RewriteError> {
        brk(check_expr(e))
    }

    fn pre_visit_value(&mut self, v: &mut ValueWithSpan) -> ControlFlow<RewriteError> {
        brk(hex_integer(self.sql, v))
    }
}
