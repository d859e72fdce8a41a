//! The run plan of one stage: the table's rows expanded into runs. A row
//! per plugin runs once; consecutive per-target rows run target by target
//! (methods, then tools, then hooks, each target through every row that
//! covers it), and a row left without a target is skipped right after the
//! targets it would have had, with the reason.

use kaged_plugin_protocol::manifest::Manifest;
use kaged_plugin_protocol::names::prefixed_tool_name;

use super::check::{Check, Target, ToolTarget};
use crate::catalogue::{Per, TargetKind};

/// One planned run.
pub(crate) enum Planned {
    /// Run the row for the target.
    Run(&'static Check, Target),
    /// Record the row's case skipped, for this reason: it has no target.
    NoTarget(&'static Check, &'static str),
}

/// The runs of `rows` (one stage's, in table order) for the plugin of `m`.
pub(crate) fn plan(rows: &'static [Check], m: &Manifest) -> Vec<Planned> {
    let mut out = Vec::new();
    let mut rest = rows;
    while let Some(first) = rest.first() {
        if first.case.per == Per::Plugin {
            out.push(Planned::Run(first, Target::Plugin));
            rest = &rest[1..];
            continue;
        }
        let n = rest
            .iter()
            .take_while(|r| r.case.per != Per::Plugin)
            .count();
        per_target(&rest[..n], m, &mut out);
        rest = &rest[n..];
    }
    out
}

/// The targets of `kind` the manifest declares, in manifest order.
fn targets(m: &Manifest, kind: TargetKind) -> Vec<Target> {
    match kind {
        TargetKind::Method => m.methods.iter().cloned().map(Target::Method).collect(),
        TargetKind::Tool => m
            .tools
            .iter()
            .map(|t| {
                Target::Tool(ToolTarget {
                    method: prefixed_tool_name(&m.name, &t.name),
                    name: t.name.clone(),
                    schema: t.parameters_schema.clone(),
                })
            })
            .collect(),
        TargetKind::Hook => m.hook_names().into_iter().map(Target::Hook).collect(),
    }
}

fn per_target(group: &'static [Check], m: &Manifest, out: &mut Vec<Planned>) {
    let mut ran = vec![false; group.len()];
    for kind in TargetKind::ALL {
        for target in targets(m, kind) {
            for (i, row) in group.iter().enumerate() {
                if row.case.per.covers(kind) {
                    ran[i] = true;
                    out.push(Planned::Run(row, target.clone()));
                }
            }
        }
        for (i, row) in group.iter().enumerate() {
            if row.case.per.last_kind() == Some(kind) && !ran[i] {
                if let Some(why) = row.case.per.no_target() {
                    out.push(Planned::NoTarget(row, why));
                }
            }
        }
    }
}
