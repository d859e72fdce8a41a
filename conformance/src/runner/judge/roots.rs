//! Root causes: one fault often breaks several cases (a capability the
//! manifest lacks fails the handshake and every call that needed it; a
//! plugin that never starts leaves every later case without a session).
//! [`link`] marks each failure that follows from another with
//! `caused_by` (the root's case id) and gives each root the fix for the
//! common faults; the human and Markdown reports then show the root first.
//!
//! What ties cases together is read from what the host saw, never from
//! detail text: the capability a denial or an overreach names (audit
//! data), the grant the cage diagnosis found, and for a case that could
//! not run (`blocked`) the start case that failed or the case whose call
//! the plugin died on.

use kaged_host_core::audit::AuditEvent;
use kaged_host_core::transcript::Direction;
use kaged_host_core::{AuditRecord, TranscriptRecord};

use crate::catalogue::{find, Kind};
use crate::report::{CaseResult, EndedBy, Status};

/// What a failure is the root of: failures with the same key follow from
/// the first (or from the one whose own kind names it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RootKey {
    /// A capability the manifest does not declare.
    Capability(String),
    /// A grant the cage would need.
    Grant(String),
}

impl RootKey {
    /// The kind of the case that is this key's natural root.
    fn kind(&self) -> Kind {
        match self {
            RootKey::Capability(_) => Kind::CapabilityNotDeclared,
            RootKey::Grant(_) => Kind::CageDenied,
        }
    }

    /// The fix, for the root's detail.
    fn fix(&self) -> String {
        let cap = match self {
            RootKey::Capability(c) | RootKey::Grant(c) => c,
        };
        format!("fix: add this line under `capabilities:` in kaged-plugin.yaml:\n  - {cap}")
    }
}

/// The capability the host says the plugin lacks, from `events`: a
/// storage denial's `capability`, or the first `excess` of an overreach.
pub(crate) fn missing_capability(events: &[AuditRecord]) -> Option<String> {
    events.iter().find_map(|e| match e.event {
        AuditEvent::StorageDenied => e.data.get("capability")?.as_str().map(str::to_string),
        AuditEvent::CapabilityOverreach => e
            .data
            .get("excess")?
            .as_array()?
            .first()?
            .as_str()
            .map(str::to_string),
        _ => None,
    })
}

/// A case's failure kind from its own kind and what ended it: a case
/// that waited for an answer and got none failed by a timeout, or by the
/// plugin's exit.
pub(crate) fn refine(own: Kind, ended: EndedBy) -> Kind {
    let awaits_answer = matches!(
        own,
        Kind::WrongAnswer
            | Kind::ProtocolViolation
            | Kind::MalformedResponse
            | Kind::HandshakeFailed
            | Kind::ToolNotExposed
    );
    match ended {
        EndedBy::Timeout if awaits_answer => Kind::Timeout,
        EndedBy::Exit if awaits_answer => Kind::Crashed,
        _ => own,
    }
}

/// A fix for a root whose wire is `records`, beside the capability fixes:
/// a request that got nothing at all on stdout is most often an answer
/// the plugin wrote but never flushed.
pub(crate) fn hint(kind: Kind, records: &[TranscriptRecord]) -> Option<&'static str> {
    let asked = records.iter().any(|r| r.dir == Direction::HostToPlugin);
    let heard = records.iter().any(|r| r.dir == Direction::PluginToHost);
    (kind == Kind::Timeout && asked && !heard).then_some(
        "fix: nothing at all arrived on the plugin's stdout: if it wrote an answer, it is \
         probably still in its stdout buffer. Flush after every line (Python: \
         `print(json.dumps(msg), flush=True)` or `python3 -u`; Node/Bun: write with \
         `process.stdout.write(line + \"\\n\")`; C: `fflush(stdout)`), and read stdin on its own \
         thread or task so a handler never blocks the reader",
    )
}

/// Link every failure that follows from another to its root: results with
/// the same [`RootKey`] (`keys`, one per result) follow from the one
/// whose own kind names the key, else from the first; a case that could
/// not run (`blocked`) follows from the first failed start case, else
/// from the last case before it that the plugin died on. Each root gets
/// its key's fix.
pub(crate) fn link(results: &mut [CaseResult], keys: &[Option<RootKey>]) {
    let failed = |c: &CaseResult| matches!(c.status, Status::Fail | Status::Warn);
    // Same key: one root.
    let mut done: Vec<RootKey> = Vec::new();
    for key in keys.iter().flatten() {
        if done.contains(key) {
            continue;
        }
        done.push(key.clone());
        let members: Vec<usize> = (0..results.len())
            .filter(|&i| keys.get(i).and_then(Option::as_ref) == Some(key) && failed(&results[i]))
            .collect();
        let Some(&first) = members.first() else {
            continue;
        };
        let root = members
            .iter()
            .copied()
            .find(|&i| results[i].kind == Some(key.kind()))
            .unwrap_or(first);
        let root_id = results[root].id.clone();
        for &i in &members {
            if i != root && results[i].caused_by.is_none() {
                results[i].caused_by = Some(root_id.clone());
            }
        }
        let fix = key.fix();
        if !results[root].detail.contains(&fix) {
            results[root].detail.push('\n');
            results[root].detail.push_str(&fix);
        }
    }
    // Could not run: the failed start, else the last crash before it.
    let start_root = results
        .iter()
        .find(|c| failed(c) && find(&c.id).is_some_and(|d| d.start_gate))
        .map(|c| c.caused_by.clone().unwrap_or_else(|| c.id.clone()));
    for i in 0..results.len() {
        if results[i].kind != Some(Kind::Blocked) || results[i].caused_by.is_some() {
            continue;
        }
        let crash = results[..i]
            .iter()
            .rev()
            .find(|c| {
                failed(c) && (c.kind == Some(Kind::Crashed) || c.ended_by == Some(EndedBy::Exit))
            })
            .map(|c| c.caused_by.clone().unwrap_or_else(|| c.id.clone()));
        results[i].caused_by = start_root.clone().or(crash);
    }
    // A follower never points at itself.
    for c in results.iter_mut() {
        if c.caused_by.as_deref() == Some(c.id.as_str()) {
            c.caused_by = None;
        }
    }
}
