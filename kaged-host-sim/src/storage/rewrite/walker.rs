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
    AlterTableOperation, ColumnOption, Expr, ObjectName, ObjectType, Query, RenameTableNameKind,
    SetExpr, Statement, TableAlias, TableConstraint, TableFactor, TableObject, VisitorMut,
};

use super::names::{check_plugin_name, is_denied_function, prefix_name, single_ident};

use super::RewriteError;

/// How the next table factor is to be treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// The target of `UPDATE`/`DELETE` outside a trigger: always a real
    /// table (never a CTE), prefixed and aliased.
    Aliased,
    /// The target of `UPDATE`/`DELETE` inside a trigger body, where SQLite
    /// allows no alias: prefixed only.
    Bare,
}

/// What kind of statement a stack frame is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frame {
    Trigger,
    Other,
}

/// The rewriting visitor for one statement of one plugin.
pub(super) struct Walker<'p> {
    prefix: &'p str,
    /// CTE names visible at the current point, one entry per query (lowercase).
    cte_scopes: Vec<Vec<String>>,
    /// Enclosing statements.
    frames: Vec<Frame>,
    /// Set by `UPDATE`/`DELETE`, consumed by their target table factor.
    target: Option<Target>,
    /// The prefixed names produced so far (lowercase).
    objects: Vec<String>,
}

impl<'p> Walker<'p> {
    pub(super) fn new(prefix: &'p str) -> Walker<'p> {
        Walker {
            prefix,
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
    fn prefix_ident(
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

    fn prefix(&mut self, name: &mut ObjectName) -> Result<(), RewriteError> {
        self.prefix_ident(name).map(drop)
    }

    fn in_trigger(&self) -> bool {
        self.frames.contains(&Frame::Trigger)
    }

    fn statement(&mut self, st: &mut Statement) -> Result<Frame, RewriteError> {
        let nested = !self.frames.is_empty();
        let in_trigger = self.in_trigger();
        let ddl_here = |what: &str| {
            if nested {
                Err(RewriteError::denied(format!("{what} is not allowed here")))
            } else {
                Ok(())
            }
        };
        match st {
            Statement::Query(_) => {}
            Statement::Insert(ins) => {
                match &mut ins.table {
                    TableObject::TableName(name) => {
                        let original = self.prefix_ident(name)?;
                        if ins.table_alias.is_none() && !in_trigger {
                            ins.table_alias = Some(sqlparser::ast::TableAliasWithoutColumns {
                                explicit: true,
                                alias: original,
                            });
                        }
                    }
                    _ => return Err(RewriteError::denied("INSERT into a table function")),
                }
                if ins.table_alias.is_some() && in_trigger {
                    return Err(RewriteError::denied(
                        "aliases are not allowed in trigger bodies",
                    ));
                }
            }
            Statement::Update(_) => {
                self.target = Some(if in_trigger {
                    Target::Bare
                } else {
                    Target::Aliased
                });
            }
            Statement::Delete(del) => {
                if !del.tables.is_empty() || del.using.is_some() {
                    return Err(RewriteError::denied("multi-table DELETE"));
                }
                self.target = Some(if in_trigger {
                    Target::Bare
                } else {
                    Target::Aliased
                });
            }
            Statement::CreateTable(ct) => {
                ddl_here("CREATE TABLE")?;
                if ct.temporary {
                    return Err(RewriteError::denied("TEMP tables are not allowed"));
                }
                if ct.like.is_some()
                    || ct.clone.is_some()
                    || ct.inherits.is_some()
                    || ct.partition_of.is_some()
                {
                    return Err(RewriteError::denied("CREATE TABLE ... LIKE/CLONE/INHERITS"));
                }
                self.prefix(&mut ct.name)?;
                for col in &mut ct.columns {
                    for opt in &mut col.options {
                        if let ColumnOption::ForeignKey(fk) = &mut opt.option {
                            self.prefix(&mut fk.foreign_table)?;
                        }
                    }
                }
                for c in &mut ct.constraints {
                    if let TableConstraint::ForeignKey(fk) = c {
                        self.prefix(&mut fk.foreign_table)?;
                    }
                }
            }
            Statement::CreateView(cv) => {
                ddl_here("CREATE VIEW")?;
                if cv.temporary {
                    return Err(RewriteError::denied("TEMP views are not allowed"));
                }
                if cv.materialized || cv.to.is_some() {
                    return Err(RewriteError::denied("materialized views"));
                }
                self.prefix(&mut cv.name)?;
            }
            Statement::CreateIndex(ci) => {
                ddl_here("CREATE INDEX")?;
                match &mut ci.name {
                    Some(name) => self.prefix(name)?,
                    None => return Err(RewriteError::denied("CREATE INDEX needs a name")),
                }
                self.prefix(&mut ci.table_name)?;
            }
            Statement::CreateTrigger(ct) => {
                ddl_here("CREATE TRIGGER")?;
                if ct.temporary {
                    return Err(RewriteError::denied("TEMP triggers are not allowed"));
                }
                if ct.referenced_table_name.is_some()
                    || ct.exec_body.is_some()
                    || ct.statements.is_none()
                {
                    return Err(RewriteError::denied("unsupported CREATE TRIGGER form"));
                }
                self.prefix(&mut ct.name)?;
                self.prefix(&mut ct.table_name)?;
                return Ok(Frame::Trigger);
            }
            Statement::Drop {
                object_type,
                names,
                temporary,
                table,
                ..
            } => {
                ddl_here("DROP")?;
                if *temporary || table.is_some() {
                    return Err(RewriteError::denied("unsupported DROP form"));
                }
                if !matches!(
                    object_type,
                    ObjectType::Table | ObjectType::View | ObjectType::Index
                ) {
                    return Err(RewriteError::denied(format!("DROP {object_type}")));
                }
                for name in names {
                    self.prefix(name)?;
                }
            }
            Statement::DropTrigger(dt) => {
                ddl_here("DROP TRIGGER")?;
                if dt.table_name.is_some() {
                    return Err(RewriteError::denied("DROP TRIGGER ... ON table"));
                }
                self.prefix(&mut dt.trigger_name)?;
            }
            Statement::AlterTable(at) => {
                ddl_here("ALTER TABLE")?;
                if at.only
                    || at.location.is_some()
                    || at.on_cluster.is_some()
                    || at.table_type.is_some()
                {
                    return Err(RewriteError::denied("unsupported ALTER TABLE form"));
                }
                self.prefix(&mut at.name)?;
                for op in &mut at.operations {
                    match op {
                        AlterTableOperation::RenameTable { table_name } => match table_name {
                            RenameTableNameKind::As(n) | RenameTableNameKind::To(n) => {
                                self.prefix(n)?
                            }
                        },
                        AlterTableOperation::RenameColumn { .. }
                        | AlterTableOperation::DropColumn { .. } => {}
                        AlterTableOperation::AddColumn { column_def, .. } => {
                            for opt in &mut column_def.options {
                                if let ColumnOption::ForeignKey(fk) = &mut opt.option {
                                    self.prefix(&mut fk.foreign_table)?;
                                }
                            }
                        }
                        other => {
                            return Err(RewriteError::denied(format!(
                                "ALTER TABLE operation `{other}`"
                            )))
                        }
                    }
                }
            }
            other => {
                return Err(RewriteError::denied(format!(
                    "{} is not allowed",
                    statement_label(other)
                )))
            }
        }
        Ok(Frame::Other)
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
        _ => Ok(()),
    }
}

/// A short name of a statement kind, for denial reasons.
pub(super) fn statement_label(st: &Statement) -> &'static str {
    match st {
        Statement::Pragma { .. } => "PRAGMA",
        Statement::AttachDatabase { .. } | Statement::AttachDuckDBDatabase { .. } => "ATTACH",
        Statement::DetachDuckDBDatabase { .. } => "DETACH",
        Statement::Vacuum(_) => "VACUUM",
        Statement::StartTransaction { .. }
        | Statement::Commit { .. }
        | Statement::Rollback { .. }
        | Statement::Savepoint { .. }
        | Statement::ReleaseSavepoint { .. } => "a transaction statement",
        Statement::Explain { .. } | Statement::ExplainTable { .. } => "EXPLAIN",
        Statement::Analyze(_) => "ANALYZE",
        Statement::CreateVirtualTable { .. } => "CREATE VIRTUAL TABLE",
        Statement::Merge(_) => "MERGE",
        _ => "this statement kind",
    }
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
}
