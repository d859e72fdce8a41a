//! The command line's grammar: the global options and every command.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use kaged_host_core::{CageMode, TimeScale};

use super::{cage, plugin, storage, up};

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

impl Cli {
    /// Settle [`GlobalOpts::cage`]: `--cage` when given, else `require`
    /// for `up` (spec §15: "`up` cages or refuses") and `auto` for the
    /// one-shot commands.
    pub fn resolve_cage(mut self) -> Cli {
        self.global.cage = self.global.cage_flag.unwrap_or(match self.command {
            Command::Up(_) => CageMode::Require,
            _ => CageMode::Auto,
        });
        self
    }
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
    pub transcript_form: kaged_host_core::normal::TranscriptForm,
    /// Multiply every timeout and interval by F (0 < F <= 1).
    #[arg(long, global = true, value_name = "F", default_value = "1")]
    pub time_scale: TimeScale,
    /// The SQLite database that brokers `kaged.storage.*` for every plugin
    /// started (created if missing). Default: a fresh temporary database,
    /// removed on exit. Required by `storage`.
    #[arg(long, global = true, value_name = "PATH")]
    pub storage_db: Option<PathBuf>,
    /// The most each plugin's tables and indexes may occupy in the storage
    /// database, in bytes (default 64 MiB): past it a write that grows them
    /// is refused with -32003 and rolled back; reads and deletes still work.
    #[arg(long, global = true, value_name = "BYTES",
          default_value_t = kaged_host_storage::DEFAULT_STORAGE_QUOTA)]
    pub storage_quota: u64,
    /// Run plugins caged in bwrap (ADDENDUM §13): `auto` cages when bwrap
    /// works here and otherwise runs them uncaged with a warning;
    /// `require` refuses to run them uncaged (exit 2); `off` runs them
    /// uncaged, said in every output and audit record. [default: require
    /// for `up` (the running daemon cages or refuses), auto for every
    /// other command]
    #[arg(long = "cage", global = true, value_name = "MODE")]
    pub cage_flag: Option<CageMode>,
    /// `--cage`, or the command's default ([`Cli::resolve_cage`]).
    #[arg(skip)]
    pub cage: CageMode,
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
        /// The method: a custom method, a prefixed tool, a system method,
        /// or a hook (`on_session_start` or `kaged.hook.on_session_start`).
        method: String,
        /// The params, a JSON object. A hook without them gets empty ones
        /// of its shape (no transcript, no messages).
        params: Option<String>,
        /// The call context, a JSON PluginCallContext. Default: daemon-level
        /// for custom methods; for a tool or a hook (always for an agent)
        /// project `kaged-host-sim`, agent `primary`, generated session and
        /// request ids.
        #[arg(long, value_name = "JSON", conflicts_with = "agent")]
        context: Option<String>,
        /// Call as this agent (`primary`, `primary.subagents.researcher`):
        /// a full context with generated session and request ids.
        #[arg(long, value_name = "PATH")]
        agent: Option<String>,
        /// With --agent: the project id (default `kaged-host-sim`).
        #[arg(long, value_name = "ID", requires = "agent")]
        project: Option<String>,
        /// With --agent: the session id (default: generated).
        #[arg(long, value_name = "ID", requires = "agent")]
        session: Option<String>,
        /// Call an installed copy the store has disabled (refused without).
        #[arg(long)]
        force: bool,
        /// The operator's config for the plugin, a JSON object: sent over
        /// the schemas' defaults with the first `config.update`, right
        /// after `initialized`, as the daemon does (default: the defaults
        /// alone, `{}` without any).
        #[arg(long, value_name = "JSON")]
        plugin_config: Option<String>,
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
        /// The operator's config for the plugin, a JSON object: sent over
        /// the schemas' defaults with the first `config.update`, right
        /// after `initialized`, as the daemon does (default: the defaults
        /// alone, `{}` without any).
        #[arg(long, value_name = "JSON")]
        plugin_config: Option<String>,
        /// Calls per phase.
        #[arg(long, value_name = "N", default_value_t = 2000)]
        calls: usize,
        /// Calls in flight in the pipelined phase.
        #[arg(long, value_name = "K", default_value_t = 16)]
        concurrency: usize,
        /// Print one JSON object instead of the human lines.
        #[arg(long)]
        json: bool,
        /// No progress line (drawn on standard error only when it is a
        /// terminal: the calls made, the time so far, the phase).
        #[arg(long, short = 'q')]
        quiet: bool,
    },
    /// Show the cage the plugin in DIR would run in: the policy compiled
    /// from its capabilities and the bwrap command line (ADDENDUM §13).
    Cage(cage::CageArgs),
    /// Run the daemon: every enabled plugin supervised (restart backoff,
    /// health checks), one line per lifecycle event, the HTTP API with
    /// --listen (behind a token); Ctrl-C or SIGTERM shuts every plugin
    /// down gracefully. Plugins run caged or not at all: --cage defaults
    /// to require here.
    Up(up::UpArgs),
}
