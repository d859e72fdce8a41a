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

mod args;
mod bench;
mod cage;
mod caging;
mod call;
mod consent;
mod error;
mod install_project;
mod plugin;
mod project;
mod script;
mod setup;
mod storage;
mod up;
mod wire;
pub use args::{Cli, Command, GlobalOpts};
use error::CliError;
use setup::{audit_for, audit_unkept, host_for, host_with, require_dir, settled};

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use kaged_host_core::one_line;

/// Parse the process arguments and run; returns the exit status.
fn main() -> ExitCode {
    // `bench`'s reference plugin: this binary, answering at once.
    if std::env::args().nth(1).as_deref() == Some(kaged_host_sim::bench::reference::SUBCOMMAND) {
        kaged_host_sim::bench::reference::serve();
        return ExitCode::SUCCESS;
    }
    let cli = match Cli::try_parse() {
        Ok(c) => c.resolve_cage(),
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
    init_tracing(matches!(cli.command, Command::Up(_)));
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

/// The operational log on stderr, filtered by `KAGED_HOST_SIM_LOG`. By
/// default warnings, and for the daemon (`up`) also every stderr line of
/// its plugins, tagged with the plugin's name (plugin-host.md, Transport:
/// "captures stderr line-by-line into the operational log tagged with the
/// plugin name"): `INFO kaged_plugin_stderr: <line> plugin=<name>`.
fn init_tracing(daemon: bool) {
    let default = match daemon {
        true => "warn,kaged_plugin_stderr=info",
        false => "warn",
    };
    let asked = tracing_subscriber::EnvFilter::try_from_env("KAGED_HOST_SIM_LOG").ok();
    // A one-shot command's own warnings read as sentences (`WARN plugin
    // exited unexpectedly plugin="x" info=exit code 1`): no time, no Rust
    // module path, unless KAGED_HOST_SIM_LOG asks for the log.
    let plain = !daemon && asked.is_none();
    let filter = asked.unwrap_or_else(|| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(!plain)
        // Colours on a terminal only: a log file gets plain lines.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .map_event_format(|f| f.with_timer(PlainTimer(!plain)))
        .try_init();
}

/// Run a parsed command line.
pub async fn run(cli: Cli) -> Result<ExitCode, CliError> {
    match cli.command {
        Command::Validate { dir } => {
            require_dir(&dir)?;
            let report = kaged_host_core::validate_dir(&dir);
            let text = report.render_human();
            if !text.is_empty() {
                kaged_host_core::outln!("{text}");
            }
            if report.has_errors() {
                return Ok(ExitCode::from(1));
            }
            if let Some(m) = &report.manifest {
                kaged_host_core::outln!("ok: {} {} is valid", m.name, m.version);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Call {
            dir,
            method,
            params,
            context,
            agent,
            project,
            session,
            force,
            plugin_config,
            json,
        } => {
            require_dir(&dir)?;
            call::refuse_disabled_copy(&dir, force)?;
            caging::check(cli.global.cage).await?;
            let (host, in_flight) = host_for(&cli.global, false)?;
            let host = call::with_plugin_config(host, plugin_config.as_deref())?;
            let request = call::CallRequest {
                method: &method,
                params: params.as_deref(),
                context: context.as_deref(),
                agent: agent.as_deref(),
                project: project.as_deref(),
                session: session.as_deref(),
                json,
            };
            let outcome = call::run(&host, &dir, request).await;
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
                Some(g) => {
                    let failed = outcome != ExitCode::SUCCESS;
                    wire::check_golden(g, update, failed, t, &dirs)?
                }
                None => true,
            };
            Ok(if same { outcome } else { ExitCode::from(1) })
        }
        Command::Bench {
            dir,
            method,
            params,
            context,
            plugin_config,
            calls,
            concurrency,
            json,
            quiet,
        } => {
            require_dir(&dir)?;
            caging::check(cli.global.cage).await?;
            let (host, in_flight) = host_for(&cli.global, false)?;
            let host = call::with_plugin_config(host, plugin_config.as_deref())?;
            let args = bench::BenchArgs {
                method: &method,
                params: params.as_deref(),
                context: context.as_deref(),
                calls,
                concurrency,
                json,
                quiet,
            };
            let outcome = bench::run(&host, &dir, &args).await;
            let outcome = settled(&in_flight, &cli.global, outcome).await;
            cli.global.finish_transcript(&host, &[&dir])?;
            outcome
        }
        Command::Plugin { action } => {
            let audit = audit_for(&cli.global)?;
            let config_root = cli
                .global
                .config_root
                .clone()
                .or_else(caging::default_config_root);
            plugin::run(
                &action,
                &audit,
                cli.global.storage_db.as_deref(),
                config_root,
            )
            .await
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

/// The log's timer: the UTC time, or nothing for a one-shot command.
struct PlainTimer(bool);

impl tracing_subscriber::fmt::time::FormatTime for PlainTimer {
    fn format_time(&self, w: &mut tracing_subscriber::fmt::format::Writer<'_>) -> std::fmt::Result {
        match self.0 {
            true => tracing_subscriber::fmt::time::SystemTime.format_time(w),
            false => Ok(()),
        }
    }
}
