//! The `kaged-host-sim` command line: `validate`, `call`, `session`,
//! `bench`, `plugin`, `storage`, `cage`, `up`.
//!
//! Exit status: 0 on success, 1 when the plugin or a check failed, 2 for bad
//! usage (unknown flags, bad JSON arguments, missing directories) and for
//! `--cage require` where plugins cannot be caged. Errors are one line on
//! stderr: what was wrong, then the cause chain.
//!
//! Plugins run caged (ADDENDUM §13, `--cage auto|require|off`); every
//! command that runs one says how (`cage: ...`, see [`caging`]).

mod bench;
mod cage;
mod caging;
mod call;
mod error;
mod plugin;
mod project;
mod script;
mod storage;
mod up;
mod wire;
use error::CliError;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand};
use kaged_host_sim::{
    one_line, AuditLog, BrokerHandler, HostConfig, HostSim, InFlight, InFlightWaiter,
    StorageBroker, TimeScale,
};

/// A simulated kaged daemon for plugin authors.
#[derive(Debug, Parser)]
#[command(name = "kaged-host-sim", version, about, propagate_version = true)]
pub struct Cli {
    /// Options shared by every command.
    #[command(flatten)]
    pub global: GlobalOpts,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Options shared by every command.
#[derive(Debug, Args)]
pub struct GlobalOpts {
    /// Append audit events (JSON Lines, ADDENDUM §9) to FILE.
    #[arg(long, global = true, value_name = "FILE")]
    pub audit: Option<PathBuf>,
    /// Write the wire transcript (JSON Lines, ADDENDUM §9) to FILE.
    #[arg(long, global = true, value_name = "FILE")]
    pub transcript: Option<PathBuf>,
    /// The form of --transcript: `raw` (every record as it happens) or
    /// `normal` (deterministic run after run: docs/protocol.md §
    /// Normal-form transcripts), written when the command ends.
    #[arg(long, global = true, value_name = "FORM", default_value = "raw")]
    pub transcript_form: kaged_host_sim::normal::TranscriptForm,
    /// Multiply every timeout and interval by F (0 < F <= 1).
    #[arg(long, global = true, value_name = "F", default_value = "1")]
    pub time_scale: TimeScale,
    /// The SQLite database that brokers `kaged.storage.*` for every plugin
    /// started (created if missing). Default: a fresh temporary database,
    /// removed on exit. Required by `storage`.
    #[arg(long, global = true, value_name = "PATH")]
    pub storage_db: Option<PathBuf>,
    /// Run plugins caged in bwrap (ADDENDUM §13): `auto` cages when bwrap
    /// works here and otherwise runs them uncaged with a warning;
    /// `require` refuses to run them uncaged (exit 2); `off` runs them
    /// uncaged, said in every output and audit record.
    #[arg(long, global = true, value_name = "MODE", default_value = "auto")]
    pub cage: kaged_host_sim::CageMode,
    /// The daemon's flag for subagent development: accepted, recorded in
    /// the audit log (`plugin.no_sandbox_ignored`), and it changes nothing
    /// for plugins, which are always caged (only `--cage off` uncages).
    #[arg(long, global = true)]
    pub no_sandbox: bool,
    /// The operator's config root: `config:/` grants resolve under it and
    /// plugins get it as KAGED_CONFIG_ROOT (default: $KAGED_CONFIG_ROOT,
    /// else $HOME/.config/kaged).
    #[arg(long, global = true, value_name = "DIR")]
    pub config_root: Option<PathBuf>,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate DIR/kaged-plugin.yaml; exit 1 on any error.
    Validate {
        /// The plugin directory.
        dir: PathBuf,
    },
    /// Start the plugin in DIR, call METHOD once, shut it down.
    Call {
        /// The plugin directory.
        dir: PathBuf,
        /// The method (custom method, prefixed tool, system method or hook).
        method: String,
        /// The params, a JSON object.
        params: Option<String>,
        /// The call context, a JSON PluginCallContext. Default: daemon-level
        /// for custom methods; for a tool (always dispatched by an agent)
        /// project `kaged-host-sim`, agent `primary`, session `ses_cli`.
        #[arg(long, value_name = "JSON")]
        context: Option<String>,
        /// Print only the result or error object, as JSON, on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Start the plugin in DIR (or every plugin of a --project) and run a
    /// YAML scenario against it.
    Session {
        /// The plugin directory (not with --project).
        #[arg(required_unless_present = "project", conflicts_with = "project")]
        dir: Option<PathBuf>,
        /// The scenario file.
        #[arg(long, value_name = "FILE")]
        script: PathBuf,
        /// A project file: resolve its agents and start every declared
        /// plugin; steps fire hooks on agent paths.
        #[arg(long, value_name = "FILE")]
        project: Option<PathBuf>,
        /// With --project: a directory of plugin directories, each answering
        /// to its manifest name and `@scope/<name>`.
        #[arg(long, value_name = "DIR", requires = "project")]
        plugins: Option<PathBuf>,
        /// With --project: map a package to a plugin directory (repeatable).
        #[arg(long, value_name = "PACKAGE=DIR", requires = "project")]
        plugin: Vec<String>,
        /// With --project: the operator-local system config, a local.toml
        /// ([plugins."<package>"] tables; ${VAR} substituted from the
        /// environment).
        #[arg(long, value_name = "FILE", requires = "project")]
        local: Option<PathBuf>,
        /// With --project: print each step's outcome as one JSON object.
        #[arg(long, requires = "project")]
        json: bool,
        /// Compare the normal-form transcript with this golden file (JSON
        /// Lines; `"[any]"` and `"[re:PATTERN]"` match varying values);
        /// print a diff and exit 1 when they differ.
        #[arg(long, value_name = "FILE")]
        golden: Option<PathBuf>,
        /// With --golden: write the golden file from this run instead
        /// (also KAGED_UPDATE_GOLDEN=1).
        #[arg(long, requires = "golden")]
        update: bool,
    },
    /// Install, upgrade, uninstall, enable, disable or list plugins in a
    /// plugin store (plugin-host.md § Install flow).
    Plugin {
        /// What to do.
        #[command(subcommand)]
        action: plugin::PluginCommand,
    },
    /// Inspect or clean up a plugin's brokered storage in --storage-db.
    Storage {
        /// What to do with the storage.
        #[command(subcommand)]
        action: storage::StorageCommand,
    },
    /// Measure the plugin in DIR: calls/s one at a time and pipelined,
    /// p50/p99/max latency, its CPU per call and RSS. Exit 1 when a call
    /// failed.
    Bench {
        /// The plugin directory.
        dir: PathBuf,
        /// The method to call (default: ping, which every plugin answers).
        #[arg(long, value_name = "METHOD", default_value = "ping")]
        method: String,
        /// Its params, a JSON object.
        #[arg(long, value_name = "JSON")]
        params: Option<String>,
        /// Its call context, a JSON PluginCallContext (a tool needs one).
        #[arg(long, value_name = "JSON")]
        context: Option<String>,
        /// Calls per phase.
        #[arg(long, value_name = "N", default_value_t = 2000)]
        calls: usize,
        /// Calls in flight in the pipelined phase.
        #[arg(long, value_name = "K", default_value_t = 16)]
        concurrency: usize,
        /// Print one JSON object instead of the human lines.
        #[arg(long)]
        json: bool,
    },
    /// Show the cage the plugin in DIR would run in: the policy compiled
    /// from its capabilities and the bwrap command line (ADDENDUM §13).
    Cage(cage::CageArgs),
    /// Run the daemon: every enabled plugin supervised (restart backoff,
    /// health checks), one line per lifecycle event, the HTTP API with
    /// --listen; Ctrl-C or SIGTERM shuts every plugin down gracefully.
    Up(up::UpArgs),
}

/// Parse the process arguments and run; returns the exit status.
fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                // Never a panic when stdout is closed early (`--help | head`).
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            // clap's first paragraph says what was wrong; keep it on one line.
            let text = e.to_string();
            let first = text.split("\n\n").next().unwrap_or("error: bad usage");
            let first = first.split_whitespace().collect::<Vec<_>>().join(" ");
            eprintln!("{first} (see --help)");
            return ExitCode::from(2);
        }
    };
    init_tracing();
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("{}", one_line("error: cannot start the async runtime", &e));
            return ExitCode::from(1);
        }
    };
    match rt.block_on(run(cli)) {
        Ok(code) => code,
        Err(CliError::Usage(m)) => {
            eprintln!("error: {m}");
            ExitCode::from(2)
        }
        Err(CliError::Failed(m)) => {
            eprintln!("error: {m}");
            ExitCode::from(1)
        }
    }
}

fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("KAGED_HOST_SIM_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

impl GlobalOpts {
    /// Write `--transcript FILE` in the normal form, when that is its form,
    /// from what `host` recorded running the plugins in `dirs`.
    fn finish_transcript(&self, host: &HostSim, dirs: &[&Path]) -> Result<(), CliError> {
        wire::finish(
            self.transcript.as_deref(),
            self.transcript_form,
            &host.config().transcript,
            dirs,
        )
    }
}

/// The audit log of `--audit FILE` (also kept in memory), or memory only.
fn audit_for(global: &GlobalOpts) -> Result<AuditLog, CliError> {
    Ok(match &global.audit {
        Some(p) => audit_file(p)?.with_memory(),
        None => AuditLog::memory(),
    })
}

/// The audit log of a long-running command (`up`): the `--audit FILE`
/// only, or nothing kept; its events are watched as they happen, and
/// keeping them all in memory would grow without bound.
fn audit_unkept(global: &GlobalOpts) -> Result<AuditLog, CliError> {
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
fn host_for(global: &GlobalOpts, memory: bool) -> Result<(HostSim, InFlightWaiter), CliError> {
    host_with(global, audit_for(global)?, memory)
}

/// [`host_for`] with the given audit log.
fn host_with(
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
    };
    let handler = InFlight::new(Arc::new(BrokerHandler::new(broker)));
    let in_flight = handler.waiter();
    let host = HostSim::new(HostConfig {
        time_scale: global.time_scale,
        audit,
        transcript,
        storage_available: true,
        handler: Arc::new(handler),
        cage: global.cage,
        no_sandbox: global.no_sandbox,
        config_root: global
            .config_root
            .clone()
            .or_else(caging::default_config_root),
        ..HostConfig::default()
    });
    Ok((host, in_flight))
}

/// Let the storage requests still being answered finish (and audit, e.g.
/// a late `plugin.storage_denied`) before the command exits, for at most
/// the request timeout.
async fn settled<T>(in_flight: &InFlightWaiter, global: &GlobalOpts, outcome: T) -> T {
    let limit = kaged_host_sim::Timeouts::defaults(global.time_scale).request;
    if !in_flight.settle(limit).await {
        tracing::warn!(
            "{} storage request(s) still unanswered after {limit:?}",
            in_flight.count()
        );
    }
    outcome
}

fn require_dir(dir: &Path) -> Result<(), CliError> {
    if dir.is_dir() {
        Ok(())
    } else {
        Err(CliError::Usage(format!(
            "no such plugin directory: {}",
            dir.display()
        )))
    }
}

/// Run a parsed command line.
pub async fn run(cli: Cli) -> Result<ExitCode, CliError> {
    match cli.command {
        Command::Validate { dir } => {
            require_dir(&dir)?;
            let report = kaged_host_sim::validate_dir(&dir);
            let text = report.render_human();
            if !text.is_empty() {
                println!("{text}");
            }
            if report.has_errors() {
                return Ok(ExitCode::from(1));
            }
            if let Some(m) = &report.manifest {
                println!("ok: {} {} is valid", m.name, m.version);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Call {
            dir,
            method,
            params,
            context,
            json,
        } => {
            require_dir(&dir)?;
            caging::check(cli.global.cage).await?;
            let (host, in_flight) = host_for(&cli.global, false)?;
            let outcome = call::run(
                &host,
                &dir,
                &method,
                params.as_deref(),
                context.as_deref(),
                json,
            )
            .await;
            let outcome = settled(&in_flight, &cli.global, outcome).await;
            cli.global.finish_transcript(&host, &[&dir])?;
            outcome
        }
        Command::Session {
            dir,
            script,
            project,
            plugins,
            plugin,
            local,
            json,
            golden,
            update,
        } => {
            caging::check(cli.global.cage).await?;
            let (host, in_flight) = host_for(&cli.global, golden.is_some())?;
            let (outcome, dirs) = if let Some(project) = project {
                let mut dirs: Vec<PathBuf> = plugins.iter().cloned().collect();
                dirs.extend(
                    plugin
                        .iter()
                        .filter_map(|p| p.split_once('='))
                        .map(|(_, d)| PathBuf::from(d)),
                );
                let args = project::ProjectArgs {
                    project,
                    plugins,
                    plugin,
                    local,
                    json,
                };
                (project::run(&host, &args, &script).await, dirs)
            } else {
                let dir =
                    dir.ok_or_else(|| CliError::Usage("session needs DIR or --project".into()))?;
                require_dir(&dir)?;
                (script::run(&host, &dir, &script).await, vec![dir])
            };
            let outcome = settled(&in_flight, &cli.global, outcome).await?;
            let dirs: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
            let t = &host.config().transcript;
            cli.global.finish_transcript(&host, &dirs)?;
            let same = match &golden {
                Some(g) => wire::check_golden(g, update, t, &dirs)?,
                None => true,
            };
            Ok(if same { outcome } else { ExitCode::from(1) })
        }
        Command::Bench {
            dir,
            method,
            params,
            context,
            calls,
            concurrency,
            json,
        } => {
            require_dir(&dir)?;
            caging::check(cli.global.cage).await?;
            let (host, in_flight) = host_for(&cli.global, false)?;
            let args = bench::BenchArgs {
                method: &method,
                params: params.as_deref(),
                context: context.as_deref(),
                calls,
                concurrency,
                json,
            };
            let outcome = bench::run(&host, &dir, &args).await;
            let outcome = settled(&in_flight, &cli.global, outcome).await;
            cli.global.finish_transcript(&host, &[&dir])?;
            outcome
        }
        Command::Plugin { action } => {
            let audit = audit_for(&cli.global)?;
            plugin::run(&action, &audit, cli.global.storage_db.as_deref()).await
        }
        Command::Storage { action } => {
            let audit = audit_for(&cli.global)?;
            storage::run(cli.global.storage_db.as_deref(), &audit, &action)
        }
        Command::Up(args) => {
            caging::check(cli.global.cage).await?;
            let (host, in_flight) = host_with(&cli.global, audit_unkept(&cli.global)?, false)?;
            let outcome = up::run(host, cli.global.cage, &args).await;
            settled(&in_flight, &cli.global, outcome).await
        }
        Command::Cage(args) => {
            require_dir(&args.dir)?;
            cage::run(&args, cli.global.config_root.clone()).await
        }
    }
}
