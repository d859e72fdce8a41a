//! The host a command runs its plugins in: the audit log of `--audit`,
//! the transcript of `--transcript`, the storage broker of `--storage-db`
//! (with `--storage-quota`),
//! the cage mode and time scale, and waiting for storage requests still in
//! flight when the command ends.

use std::path::Path;
use std::sync::Arc;

use kaged_host_core::{one_line, AuditLog, HostConfig, HostSim, InFlight, InFlightWaiter};
use kaged_host_storage::{BrokerHandler, StorageBroker};

use super::{caging, wire, CliError, GlobalOpts};

impl GlobalOpts {
    /// Write `--transcript FILE` in the normal form, when that is its form,
    /// from what `host` recorded running the plugins in `dirs`.
    pub(super) fn finish_transcript(&self, host: &HostSim, dirs: &[&Path]) -> Result<(), CliError> {
        wire::finish(
            self.transcript.as_deref(),
            self.transcript_form,
            &host.config().transcript,
            dirs,
        )
    }
}

/// The audit log of `--audit FILE` (also kept in memory), or memory only.
pub(super) fn audit_for(global: &GlobalOpts) -> Result<AuditLog, CliError> {
    Ok(match &global.audit {
        Some(p) => audit_file(p)?.with_memory(),
        None => AuditLog::memory(),
    })
}

/// The audit log of a long-running command (`up`): the `--audit FILE`
/// only, or nothing kept; its events are watched as they happen, and
/// keeping them all in memory would grow without bound.
pub(super) fn audit_unkept(global: &GlobalOpts) -> Result<AuditLog, CliError> {
    match &global.audit {
        Some(p) => audit_file(p),
        None => Ok(AuditLog::discard()),
    }
}

fn audit_file(p: &std::path::Path) -> Result<AuditLog, CliError> {
    AuditLog::to_file(p).map_err(|e| {
        CliError::Usage(one_line(
            &format!("cannot open audit file {}", p.display()),
            &e,
        ))
    })
}

/// A host whose plugins get the `--storage-db` broker (or a temporary one),
/// and a waiter for the storage requests it is still answering.
pub(super) fn host_for(
    global: &GlobalOpts,
    memory: bool,
) -> Result<(HostSim, InFlightWaiter), CliError> {
    host_with(global, audit_for(global)?, memory)
}

/// [`host_for`] with the given audit log.
pub(super) fn host_with(
    global: &GlobalOpts,
    audit: AuditLog,
    memory: bool,
) -> Result<(HostSim, InFlightWaiter), CliError> {
    let transcript = wire::open(global.transcript.as_deref(), global.transcript_form, memory)?;
    let broker = match &global.storage_db {
        Some(p) => StorageBroker::open(p).map_err(|e| {
            CliError::Usage(one_line(
                &format!("cannot open storage database {}", p.display()),
                &e,
            ))
        })?,
        None => StorageBroker::open_temp().map_err(|e| {
            CliError::Failed(one_line("cannot create a temporary storage database", &e))
        })?,
    }
    .with_quota(global.storage_quota);
    let handler = InFlight::new(Arc::new(BrokerHandler::new(broker)));
    let in_flight = handler.waiter();
    let host = HostSim::new(
        HostConfig::default()
            .with_time_scale(global.time_scale)
            .with_audit(audit)
            .with_transcript(transcript)
            .with_storage(Arc::new(handler))
            .with_cage(global.cage)
            .with_no_sandbox(global.no_sandbox)
            .with_config_root(
                global
                    .config_root
                    .clone()
                    .or_else(caging::default_config_root),
            ),
    );
    Ok((host, in_flight))
}

/// Let the storage requests still being answered finish (and audit, e.g.
/// a late `plugin.storage_denied`) before the command exits, for at most
/// the request timeout.
pub(super) async fn settled<T>(in_flight: &InFlightWaiter, global: &GlobalOpts, outcome: T) -> T {
    let limit = kaged_host_core::Timeouts::defaults(global.time_scale).request;
    if !in_flight.settle(limit).await {
        tracing::warn!(
            "{} storage request(s) still unanswered after {limit:?}",
            in_flight.count()
        );
    }
    outcome
}

pub(super) fn require_dir(dir: &Path) -> Result<(), CliError> {
    if dir.is_dir() {
        Ok(())
    } else {
        Err(CliError::Usage(format!(
            "no such plugin directory: {}",
            dir.display()
        )))
    }
}
