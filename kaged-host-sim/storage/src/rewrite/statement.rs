//! Statement-level policy: the allow-list of statement kinds, and the
//! names that are not table factors (DDL object names, index and trigger
//! names, rename targets, `INSERT` targets, foreign-key targets).

use sqlparser::ast::{
    AlterTableOperation, ColumnOption, ObjectType, RenameTableNameKind, Statement, TableConstraint,
    TableObject,
};

use super::error::RewriteError;
use super::walker::{Frame, Target, Walker};

impl Walker<'_> {
    /// Check one statement against the allow-list and prefix the names
    /// that are not table factors; returns its frame kind.
    pub(super) fn statement(&mut self, st: &mut Statement) -> Result<Frame, RewriteError> {
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
}

/// A short name of a statement kind, for denial reasons.
fn statement_label(st: &Statement) -> &'static str {
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
