//! `kaged-host-sim storage (tables | uninstall) NAME --storage-db PATH [--json]`:
//! what a plugin keeps in the brokered database, and the cleanup of
//! plugin-host.md § "Cleanup on uninstall" (every object with the plugin's
//! prefix dropped, audited as `plugin.uninstalled`).
//!
//! ```text
//! $ kaged-host-sim storage tables oh-my-pi --storage-db kaged.sqlite3
//! history
//! presets
//! $ kaged-host-sim storage uninstall oh-my-pi --storage-db kaged.sqlite3
//! dropped index plugin_oh_my_pi_presets_by_installed (presets_by_installed)
//! dropped table plugin_oh_my_pi_history (history)
//! dropped table plugin_oh_my_pi_presets (presets)
//! oh-my-pi: 3 storage object(s) dropped
//! ```

use std::path::Path;
use std::process::ExitCode;

use clap::Subcommand;
use kaged_plugin_protocol::names::is_plugin_name;
use serde_json::json;

use super::{one_line, CliError};
use kaged_host_core::{AuditEvent, AuditLog};
use kaged_host_storage::StorageBroker;
use kaged_host_storage::{storage_prefix, unprefix};

/// The `storage` subcommands.
#[derive(Debug, Subcommand)]
pub enum StorageCommand {
    /// List the plugin's tables, unprefixed (as the plugin names them).
    Tables {
        /// The plugin name (as in its manifest).
        name: String,
        /// Print one JSON object `{"plugin", "tables"}` instead.
        #[arg(long)]
        json: bool,
    },
    /// Drop every table, view, index and trigger with the plugin's prefix
    /// (plugin-host.md § Cleanup on uninstall); audits `plugin.uninstalled`.
    Uninstall {
        /// The plugin name (as in its manifest).
        name: String,
        /// Print one JSON object `{"plugin", "dropped": [{"type", "name"}]}` instead.
        #[arg(long)]
        json: bool,
    },
}

/// Open the existing database `db` (never create one here: a typo would
/// otherwise "succeed" on an empty file).
fn open(db: Option<&Path>, command: &str) -> Result<StorageBroker, CliError> {
    let Some(db) = db else {
        return Err(CliError::Usage(format!(
            "storage {command} needs --storage-db PATH (the database the plugins used)"
        )));
    };
    open_existing(db)
}

/// Open the database file `db`, which must exist (exit 2 when it does not,
/// 1 when it is no storage database).
pub(super) fn open_existing(db: &Path) -> Result<StorageBroker, CliError> {
    if !db.is_file() {
        return Err(CliError::Usage(format!(
            "no such storage database: {}",
            db.display()
        )));
    }
    StorageBroker::open(db).map_err(|e| {
        CliError::Failed(one_line(
            &format!("cannot open storage database {}", db.display()),
            &e,
        ))
    })
}

fn check_name(name: &str) -> Result<(), CliError> {
    if is_plugin_name(name) {
        Ok(())
    } else {
        Err(CliError::Usage(format!(
            "invalid plugin name {name:?} (lowercase letters, digits and single hyphens)"
        )))
    }
}

/// Run a `storage` subcommand against `db`, auditing to `audit`.
pub(super) fn run(
    db: Option<&Path>,
    audit: &AuditLog,
    command: &StorageCommand,
) -> Result<ExitCode, CliError> {
    match command {
        StorageCommand::Tables { name, json } => {
            check_name(name)?;
            let broker = open(db, "tables")?;
            let tables = broker.tables(name).map_err(|e| {
                CliError::Failed(one_line(&format!("cannot list the tables of {name}"), &e))
            })?;
            if *json {
                kaged_host_core::outln!("{}", json!({"plugin": name, "tables": tables}));
            } else {
                for t in &tables {
                    kaged_host_core::outln!("{t}");
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        StorageCommand::Uninstall { name, json } => {
            check_name(name)?;
            let broker = open(db, "uninstall")?;
            let dropped = broker.uninstall_objects(name).map_err(|e| {
                CliError::Failed(one_line(
                    &format!("cannot drop the storage of {name} (nothing was dropped)"),
                    &e,
                ))
            })?;
            let names: Vec<&str> = dropped.iter().map(|o| o.name.as_str()).collect();
            audit.emit(
                AuditEvent::Uninstalled,
                name,
                json!({"storage_prefix": storage_prefix(name), "dropped_tables": names}),
            );
            if *json {
                let objects: Vec<_> = dropped
                    .iter()
                    .map(|o| json!({"type": o.kind, "name": o.name}))
                    .collect();
                kaged_host_core::outln!("{}", json!({"plugin": name, "dropped": objects}));
            } else {
                let prefix = storage_prefix(name);
                for o in &dropped {
                    kaged_host_core::outln!(
                        "dropped {} {} ({})",
                        o.kind,
                        o.name,
                        unprefix(&o.name, &prefix)
                    );
                }
                kaged_host_core::outln!("{name}: {} storage object(s) dropped", dropped.len());
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
