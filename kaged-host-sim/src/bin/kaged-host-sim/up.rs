//! `kaged-host-sim up`: the daemon, running ([`kaged_host_sim::daemon`]).
//!
//! ```text
//! $ kaged-host-sim up --plugins examples --listen 127.0.0.1:7878 --token-file ~/.kaged-token
//! cage: plugins run caged (bwrap)
//! listening: http://127.0.0.1:7878/api/v1/plugins
//! token: written to /home/me/.kaged-token (mode 0600); send it as Authorization: Bearer TOKEN
//! settings: http://127.0.0.1:7878/#token=3f9c...
//! echo: plugin.spawned pid=4242 version=0.1.0 ...
//! ^C
//! shutting down
//! echo: plugin.stopped ...
//! stopped
//! ```

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use kaged_host_core::{one_line, CageMode, HostSim};
use kaged_host_sim::daemon::link::{DaemonLink, DAEMON_FILE};
use kaged_host_sim::daemon::{
    api, discover, lifecycle_line, Daemon, DaemonOptions, PendingInstalls, PluginSource,
};
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::broadcast::error::RecvError;

use super::CliError;

/// The `up` options.
#[derive(Debug, Args)]
pub struct UpArgs {
    /// A plugin store: start its enabled plugins.
    #[arg(long, value_name = "DIR", conflicts_with = "plugins")]
    pub store: Option<PathBuf>,
    /// A directory of plugin directories: start every one.
    #[arg(long, value_name = "DIR")]
    pub plugins: Option<PathBuf>,
    /// A project file, resolved against the plugins: agent contexts for
    /// `?agent=PATH` calls and knobs; its id is listed in `initialize`.
    #[arg(long, value_name = "FILE")]
    pub project: Option<PathBuf>,
    /// Serve the HTTP API on this loopback address (port 0: any free port).
    /// Every request needs the API token made at start (a new one each
    /// time): printed in the settings URL's fragment (`#token=`), and
    /// written to --token-file.
    #[arg(long, value_name = "IP:PORT")]
    pub listen: Option<String>,
    /// With --listen: write the API token to FILE (created with mode
    /// 0600, replacing what was there), for `curl -H "Authorization:
    /// Bearer $(cat FILE)"`.
    #[arg(long, value_name = "FILE", requires = "listen")]
    pub token_file: Option<PathBuf>,
}

fn print_line(record: &kaged_host_core::AuditRecord) {
    if let Some(line) = lifecycle_line(record) {
        kaged_host_core::outln!("{line}");
    }
}

/// The first line: whether plugins run caged.
async fn cage_line(mode: CageMode) -> String {
    if mode == CageMode::Off {
        return "cage: plugins run UNCAGED (--cage off)".into();
    }
    match kaged_host_core::cage::availability().await {
        Ok(_) => "cage: plugins run caged (bwrap)".into(),
        Err(why) => format!("cage: plugins run UNCAGED: {why}"),
    }
}

/// Run the daemon until Ctrl-C or SIGTERM.
pub async fn run(host: HostSim, mode: CageMode, args: &UpArgs) -> Result<ExitCode, CliError> {
    if let Some(p) = args.project.as_ref().filter(|p| !p.is_file()) {
        return Err(CliError::Usage(format!(
            "no such project file: {}",
            p.display()
        )));
    }
    let source = match (&args.store, &args.plugins) {
        (Some(s), _) => PluginSource::Store(s.clone()),
        (None, Some(p)) => PluginSource::Plugins(p.clone()),
        (None, None) => match std::env::var_os("KAGED_HOME") {
            Some(h) => PluginSource::Store(h.into()),
            None => {
                return Err(CliError::Usage(
                    "up needs --store DIR or --plugins DIR".into(),
                ))
            }
        },
    };
    let listen = args
        .listen
        .as_deref()
        .map(api::parse_listen)
        .transpose()
        .map_err(CliError::Usage)?;
    let store = match &source {
        PluginSource::Store(root) => Some(root.clone()),
        PluginSource::Plugins(_) => None,
    };
    let project = match &args.project {
        Some(file) => Some(
            kaged_host_engine::agents::Project::load(file)
                .map_err(|e| CliError::Usage(one_line("project", &e)))?,
        ),
        None => None,
    };
    // A project declaring plugins the store lacks is pending: its consent
    // requests are served until every one is installed (daemon::pending).
    let mut pending = match (&store, &project) {
        (Some(root), Some(project)) => pending_installs(&host, root, project)?,
        _ => None,
    };
    // A project-driven install (`local = false`) starts only for its project.
    let project_id = project.as_ref().map(|p| p.id.clone());
    let mut term = signal(SignalKind::terminate())
        .map_err(|e| CliError::Failed(one_line("cannot watch SIGTERM", &e)))?;
    let mut int = signal(SignalKind::interrupt())
        .map_err(|e| CliError::Failed(one_line("cannot watch SIGINT", &e)))?;
    kaged_host_core::outln!("{}", cage_line(mode).await);
    let mut events = host.config().audit.subscribe();
    let assemble = |pending: &Option<Arc<PendingInstalls>>| -> Result<Arc<Daemon>, CliError> {
        let dirs = discover(&source, project_id.as_deref())
            .map_err(|e| CliError::Usage(one_line("up", &e)))?;
        let options = DaemonOptions {
            project: args.project.clone().filter(|_| pending.is_none()),
            store: store.clone(),
            pending: pending.clone(),
            ..DaemonOptions::default()
        };
        Daemon::with_options(host.clone(), &dirs, options)
            .map_err(|e| CliError::Usage(one_line("up", &e)))
    };
    let mut daemon = assemble(&pending)?;
    print_project(&daemon);
    let cell = api::DaemonCell::new(Arc::clone(&daemon));
    let mut published = None;
    let server = match listen {
        Some(addr) => Some(serve(args, addr, &cell, &source, &mut published)?),
        None => None,
    };
    loop {
        kaged_host_core::outln!("plugins: {}", daemon.names().join(", "));
        daemon.start_all().await;
        let waiting = pending.clone();
        let settled = async move {
            match waiting {
                Some(p) => p.settled().await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(settled);
        let load = loop {
            tokio::select! {
                record = events.recv() => match record {
                    Ok(r) => print_line(&r),
                    Err(RecvError::Lagged(n)) => kaged_host_core::outln!("({n} audit events not shown)"),
                    // No event can come any more: wait for the signal alone.
                    Err(RecvError::Closed) => {
                        tokio::select! {
                            _ = term.recv() => {},
                            _ = int.recv() => {},
                        }
                        break false;
                    }
                },
                _ = &mut settled => break true,
                _ = term.recv() => break false,
                _ = int.recv() => break false,
            }
        };
        if !load {
            break;
        }
        // Every plugin the project declares is installed: load it.
        kaged_host_core::outln!("project: every declared plugin is installed; loading it");
        pending = None;
        let next = assemble(&pending)?;
        let old = cell.replace(Arc::clone(&next));
        old.shutdown().await;
        daemon = next;
        // Said once the API serves the new daemon.
        print_project(&daemon);
    }
    kaged_host_core::outln!("shutting down");
    if let Some(server) = server {
        server.abort();
    }
    daemon.shutdown().await;
    drop(published);
    while let Ok(r) = events.try_recv() {
        print_line(&r);
    }
    kaged_host_core::outln!("stopped");
    Ok(ExitCode::SUCCESS)
}

/// The consent requests `project` needs against the store at `root`,
/// printed; `None` when none is needed.
fn pending_installs(
    host: &HostSim,
    root: &std::path::Path,
    project: &kaged_host_engine::agents::Project,
) -> Result<Option<Arc<PendingInstalls>>, CliError> {
    let store = kaged_host_engine::PluginStore::open(root, host.audit().clone())
        .map_err(|e| CliError::Usage(one_line("up", &e)))?
        .with_config_root(host.config().config_root.clone());
    let pending = PendingInstalls::for_project(store, project, host.audit().clone())
        .map_err(|e| CliError::Usage(one_line("up", &e)))?;
    if let Some(p) = &pending {
        let names: Vec<String> = p.list().iter().map(|r| r.package.clone()).collect();
        kaged_host_core::outln!(
            "project: pending: {} await the operator's consent (GET /api/v1/pending, or the settings page): {}",
            names.len(),
            names.join(", ")
        );
    }
    Ok(pending.map(Arc::new))
}

/// The project line, when one is loaded.
fn print_project(daemon: &Daemon) {
    if let Some(p) = daemon.project() {
        kaged_host_core::outln!(
            "project: {} ({}), agents: {}",
            p.id(),
            p.file().display(),
            p.resolution().agent_paths().join(", ")
        );
    }
}

/// Bind the API on `addr`, print where, publish the link into the store,
/// and serve the daemon in `cell`.
fn serve(
    args: &UpArgs,
    addr: std::net::SocketAddr,
    cell: &api::DaemonCell,
    source: &PluginSource,
    published: &mut Option<kaged_host_sim::daemon::link::Published>,
) -> Result<tokio::task::JoinHandle<std::io::Result<()>>, CliError> {
    let listener = api::bind(addr)
        .map_err(|e| CliError::Failed(one_line(&format!("cannot listen on {addr}"), &e)))?;
    let local = listener
        .local_addr()
        .map_err(|e| CliError::Failed(one_line("cannot listen", &e)))?;
    let token = api::ApiToken::generate()
        .map_err(|e| CliError::Failed(one_line("cannot make the API token", &e)))?;
    kaged_host_core::outln!("listening: http://{local}/api/v1/plugins");
    if let Some(file) = &args.token_file {
        token
            .write_file(file)
            .map_err(|e| CliError::Failed(one_line("up", &e)))?;
        kaged_host_core::outln!(
            "token: written to {} (mode 0600); send it as Authorization: Bearer TOKEN",
            file.display()
        );
    }
    kaged_host_core::outln!("settings: {}", api::page::settings_url(local, &token));
    // `plugin install` on this store reaches this daemon (an upgrade
    // restarts the running plugin): see daemon::link.
    if let PluginSource::Store(store) = source {
        let link = DaemonLink {
            addr: local.to_string(),
            token: token.reveal().to_string(),
        };
        match link.publish(store) {
            Ok(guard) => *published = Some(guard),
            Err(e) => tracing::warn!(error = %e, "cannot write {} into the store", DAEMON_FILE),
        }
    }
    let daemon = cell.get();
    let limits = api::ApiLimits::for_this_process(daemon.host().config().time_scale);
    Ok(tokio::spawn(api::serve_cell(
        cell.clone(),
        listener,
        token,
        limits,
    )))
}
