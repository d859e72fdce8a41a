//! `kaged-host-sim plugin (install | install-project | consent | uninstall |
//! enable | disable | list)`:
//! the install flow of plugin-host.md § Install flow over a plugin store
//! directory (`--store DIR`, default `$KAGED_HOME`), see
//! [`kaged_host_engine::PluginStore`].
//!
//! ```text
//! $ kaged-host-sim plugin install ./oh-my-pi --store ~/.kaged --yes
//! Validating manifest...
//!   name: oh-my-pi
//!   ...
//! ✓ Installed oh-my-pi 0.1.0 into ~/.kaged/plugins/oh-my-pi (3 files, 1.9 MiB)
//!   → enable with: kaged-host-sim plugin enable oh-my-pi --store ~/.kaged
//! $ kaged-host-sim plugin uninstall oh-my-pi --store ~/.kaged --active-sessions 1
//! error: plugin oh-my-pi is active in 1 session(s); stop sessions first, or use --force
//! ```
//!
//! `--active-sessions N` simulates a count of sessions (no daemon to ask):
//! it only decides whether `--force` is needed. The command runs no plugin,
//! so it stops none; the library's [`PluginStore::uninstall`] shuts down the
//! running sessions its caller hands it.
//!
//! Consent: `--yes`, or a `y` typed at the prompt when stdin is a
//! terminal; without either the install is refused (exit 2), so CI never
//! hangs on a prompt. What was consented is checked at every start (a
//! manifest asking more does not start); `plugin consent NAME` asks again
//! and `plugin list` shows a refused plugin (see [`super::consent`]).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Subcommand;

use super::consent::ask;
use super::{one_line, CliError};
use kaged_host_core::AuditLog;
use kaged_host_engine::{InstallError, PluginStore};
use kaged_host_sim::daemon::link::{DaemonLink, LinkError, Restart};

/// The `plugin` subcommands.
#[derive(Debug, Subcommand)]
pub enum PluginCommand {
    /// Validate PATH, show what it asks for, and copy it into the store on
    /// consent (an upgrade shows the capability diff). Installed plugins
    /// stay disabled until enabled.
    Install {
        /// The plugin directory (holding kaged-plugin.yaml).
        path: PathBuf,
        /// The plugin store (default: $KAGED_HOME).
        #[arg(long, value_name = "DIR")]
        store: Option<PathBuf>,
        /// Consent without asking.
        #[arg(long, short = 'y')]
        yes: bool,
        /// Record a project-driven install for the project FILE declares
        /// (`local = false`: it starts only under that project, enabled).
        #[arg(long, value_name = "FILE")]
        for_project: Option<PathBuf>,
    },
    /// Project-load-driven install: every package the project FILE declares
    /// that the store lacks is installed from the declaration's `source:`
    /// (a path relative to the project file) on consent, as a
    /// project-driven install (`local = false`); one without a source, or
    /// with a git source (not fetched here), is left pending. Exit 1 while
    /// any is pending or misses its `version:` requirement.
    InstallProject {
        /// The project file.
        project: PathBuf,
        /// The plugin store (default: $KAGED_HOME).
        #[arg(long, value_name = "DIR")]
        store: Option<PathBuf>,
        /// Consent to every install without asking.
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// Ask consent again for what the installed copy of NAME asks now (its
    /// manifest asks more than was consented, so it does not start): on
    /// consent, that becomes the record, and a running daemon that refused
    /// the plugin enables it.
    Consent {
        /// The plugin name.
        name: String,
        /// The plugin store (default: $KAGED_HOME).
        #[arg(long, value_name = "DIR")]
        store: Option<PathBuf>,
        /// Consent without asking.
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// Remove an installed plugin, its local-config entry and (with
    /// --storage-db) every storage object with its prefix.
    Uninstall {
        /// The plugin name.
        name: String,
        /// The plugin store (default: $KAGED_HOME).
        #[arg(long, value_name = "DIR")]
        store: Option<PathBuf>,
        /// Simulate N sessions using the plugin (there is no daemon to ask):
        /// a count only, which makes --force necessary. This command runs
        /// no plugin, so a forced uninstall has no process to stop.
        #[arg(long, value_name = "N", default_value_t = 0)]
        active_sessions: usize,
        /// Uninstall even while sessions use the plugin.
        #[arg(long)]
        force: bool,
    },
    /// Record the operator's enable.
    Enable {
        /// The plugin name.
        name: String,
        /// The plugin store (default: $KAGED_HOME).
        #[arg(long, value_name = "DIR")]
        store: Option<PathBuf>,
    },
    /// Record the operator's disable.
    Disable {
        /// The plugin name.
        name: String,
        /// The plugin store (default: $KAGED_HOME).
        #[arg(long, value_name = "DIR")]
        store: Option<PathBuf>,
    },
    /// List the installed plugins: name, version, state (why one does not
    /// start: `disabled (capability overreach: ...)`, then the command that
    /// re-consents), scope, source, the consented manifest's digest.
    List {
        /// The plugin store (default: $KAGED_HOME).
        #[arg(long, value_name = "DIR")]
        store: Option<PathBuf>,
    },
}

/// The store at `store` (or `$KAGED_HOME`), showing `config:/` grants
/// under `config_root` in the consent prompt.
fn open_store_at(
    store: Option<&Path>,
    audit: &AuditLog,
    config_root: Option<PathBuf>,
) -> Result<PluginStore, CliError> {
    Ok(open_store(store, audit)?.with_config_root(config_root))
}

fn open_store(store: Option<&Path>, audit: &AuditLog) -> Result<PluginStore, CliError> {
    let root = match store {
        Some(s) => s.to_path_buf(),
        None => std::env::var_os("KAGED_HOME")
            .map(PathBuf::from)
            .ok_or_else(|| {
                CliError::Usage("plugin commands need --store DIR (or KAGED_HOME)".into())
            })?,
    };
    PluginStore::open(&root, audit.clone()).map_err(|e| {
        CliError::Usage(one_line(
            &format!("cannot open plugin store {}", root.display()),
            &e,
        ))
    })
}

fn failed(what: &str, e: InstallError) -> CliError {
    match e {
        InstallError::InvalidManifest { report, .. } => CliError::Failed(format!(
            "{what}: invalid manifest: {}",
            report.replace('\n', "; ")
        )),
        InstallError::Io { .. } | InstallError::Registry { .. } | InstallError::Storage { .. } => {
            CliError::Failed(one_line(what, &e))
        }
        other => CliError::Failed(other.to_string()),
    }
}

/// Run a `plugin` subcommand.
pub async fn run(
    cmd: &PluginCommand,
    audit: &AuditLog,
    storage_db: Option<&Path>,
    config_root: Option<PathBuf>,
) -> Result<ExitCode, CliError> {
    match cmd {
        PluginCommand::Install {
            path,
            store,
            yes,
            for_project,
        } => {
            if !path.is_dir() {
                return Err(CliError::Usage(format!(
                    "no such plugin directory: {}",
                    path.display()
                )));
            }
            let store = open_store_at(store.as_deref(), audit, config_root.clone())?;
            let project_id = match for_project {
                Some(file) => Some(
                    kaged_host_engine::agents::Project::load(file)
                        .map_err(|e| CliError::Usage(one_line("--for-project", &e)))?
                        .id,
                ),
                None => None,
            };
            kaged_host_core::outln!("Validating manifest...");
            let mut no_terminal = false;
            let mut upgrade = false;
            let consent = |plan: &kaged_host_engine::InstallPlan| {
                upgrade = plan.upgrade.is_some();
                kaged_host_core::out!("{}", plan.render());
                if *yes {
                    return true;
                }
                match ask(plan) {
                    Some(answer) => answer,
                    None => {
                        no_terminal = true;
                        false
                    }
                }
            };
            let result = match &project_id {
                Some(id) => store.install_for_project(path, id, None, consent),
                None => store.install(path, consent),
            };
            match result {
                Ok(entry) => {
                    let dir = store.plugin_dir(&entry.name);
                    let size = store
                        .installed_size(&entry.name)
                        .map(|s| format!(" ({s})"))
                        .unwrap_or_default();
                    kaged_host_core::outln!(
                        "✓ Installed {} {} into {}{size}",
                        entry.name,
                        entry.installed,
                        dir.display()
                    );
                    if !entry.enabled {
                        kaged_host_core::outln!(
                            "  → enable with: kaged-host-sim plugin enable {} --store {}",
                            entry.name,
                            store.root().display()
                        );
                    }
                    if upgrade {
                        restart_in_daemon(store.root(), &entry.name).await?;
                    }
                    Ok(ExitCode::SUCCESS)
                }
                Err(InstallError::Declined { .. }) if no_terminal => Err(CliError::Usage(
                    "consent needed: stdin is not a terminal, pass --yes to install without asking"
                        .into(),
                )),
                Err(e) => Err(failed("install", e)),
            }
        }
        PluginCommand::InstallProject {
            project,
            store,
            yes,
        } => {
            let store = open_store_at(store.as_deref(), audit, config_root.clone())?;
            super::install_project::run(project, &store, *yes)
        }
        PluginCommand::Consent { name, store, yes } => {
            let store = open_store_at(store.as_deref(), audit, config_root.clone())?;
            super::consent::reconsent(&store, name, *yes).await
        }
        PluginCommand::Uninstall {
            name,
            store,
            active_sessions,
            force,
        } => {
            let store = open_store_at(store.as_deref(), audit, config_root.clone())?;
            let broker = storage_db.map(super::storage::open_existing).transpose()?;
            // No plugin process runs in this command: nothing to hand over.
            let gone = store
                .uninstall(name, *active_sessions, *force, &[], broker.as_ref())
                .await
                .map_err(|e| failed("uninstall", e))?;
            if *active_sessions > 0 {
                kaged_host_core::outln!(
                    "  {active_sessions} simulated session(s): no plugin process runs here, none stopped"
                );
            }
            kaged_host_core::outln!("✓ Removed plugin files");
            kaged_host_core::outln!("✓ Removed local config entry");
            if !gone.dropped.is_empty() {
                kaged_host_core::outln!(
                    "✓ Dropped {} storage object(s): {}",
                    gone.dropped.len(),
                    gone.dropped.join(", ")
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        PluginCommand::Enable { name, store } | PluginCommand::Disable { name, store } => {
            let enable = matches!(cmd, PluginCommand::Enable { .. });
            open_store(store.as_deref(), audit)?
                .set_enabled(name, enable)
                .map_err(|e| failed("plugin", e))?;
            kaged_host_core::outln!("✓ {} {name}", if enable { "Enabled" } else { "Disabled" });
            Ok(ExitCode::SUCCESS)
        }
        PluginCommand::List { store } => {
            let store = open_store_at(store.as_deref(), audit, config_root)?;
            for p in store.list().map_err(|e| failed("list", e))? {
                for row in super::consent::list_rows(&store, &p) {
                    kaged_host_core::outln!("{row}");
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// After an upgrade: restart the plugin in the `up` serving this store, when
/// one runs it (plugin-host.md § Upgrade; `daemon::link`).
async fn restart_in_daemon(store: &Path, name: &str) -> Result<(), CliError> {
    let Some(link) = DaemonLink::read(store) else {
        return Ok(());
    };
    match link.restart_if_running(name).await {
        Ok(Restart::NotRunning) => Ok(()),
        Ok(Restart::Restarted { state, version }) => {
            kaged_host_core::outln!("  Plugin was running; restarting...");
            match state.as_str() {
                "running" => kaged_host_core::outln!("✓ {name} restarted ({version})"),
                other => kaged_host_core::outln!(
                    "  {name} is {other} after the restart (see the daemon's log)"
                ),
            }
            Ok(())
        }
        // A daemon that went away without removing its file: nothing runs.
        Err(LinkError::Unreachable { .. }) => Ok(()),
        Err(e) => Err(CliError::Failed(one_line(
            &format!("upgraded, but the running daemon did not restart {name}"),
            &e,
        ))),
    }
}
