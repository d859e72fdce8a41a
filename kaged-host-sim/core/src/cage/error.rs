//! Why a cage could not be compiled: every message names the capability
//! (or the base entry) and the path at fault, so that an operator can fix
//! the manifest or the filesystem without reading code.

use std::path::PathBuf;

/// Why a cage policy could not be compiled (the plugin does not start).
#[derive(Debug, thiserror::Error)]
pub enum CageError {
    /// A capability entry does not parse (the validator reports it too).
    #[error("capability `{entry}` is invalid: {message}")]
    BadCapability {
        /// The entry as written.
        entry: String,
        /// What is wrong with it.
        message: String,
    },
    /// A granted path resolves (through a symlink) outside the declared
    /// path (plugin-host.md § Paths; ADDENDUM §13).
    #[error(
        "`{capability}`: {declared} resolves to {resolved}, outside the declared path; \
         the plugin does not start (declare the resolved path instead)"
    )]
    Escapes {
        /// The capability, canonical.
        capability: String,
        /// The declared path (lexically normalised).
        declared: PathBuf,
        /// Where its symlinks lead.
        resolved: PathBuf,
    },
    /// A granted path is one the cage never binds: `/`, `/etc` (ADDENDUM
    /// §13: never all of `/etc`), or `/proc`, `/dev` and anything under
    /// them (the cage's own kernel views).
    #[error("`{capability}`: {path} cannot be granted ({why})")]
    Forbidden {
        /// The capability, canonical.
        capability: String,
        /// The path.
        path: PathBuf,
        /// Why that path is never bound.
        why: &'static str,
    },
    /// A `config:/` or `project:/` path with no root to resolve it against.
    #[error("`{capability}`: {prefix} paths need the {root} root, which this host was not given")]
    NoRoot {
        /// The capability, canonical.
        capability: String,
        /// `config:/` or `project:/`.
        prefix: &'static str,
        /// `operator's config` or `project`.
        root: &'static str,
    },
    /// A path went through more than 40 symlinks (or a loop).
    #[error("`{capability}`: {path} has a symlink loop (more than 40 links)")]
    SymlinkLoop {
        /// The capability (or base entry) being resolved.
        capability: String,
        /// The path.
        path: PathBuf,
    },
    /// The install directory does not exist or is not a directory.
    #[error("plugin directory {dir} cannot be caged: {why}")]
    InstallDir {
        /// The directory.
        dir: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// The filesystem could not be inspected (other than "not found").
    #[error("`{what}`: cannot inspect {path}")]
    Inspect {
        /// The capability or base entry being resolved.
        what: String,
        /// The path.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// `--cage require` (or [`CageMode::Require`](super::CageMode)), and
    /// bwrap cannot cage here.
    #[error("the cage is required (--cage require) but plugins cannot be caged here: {reason}")]
    Unavailable {
        /// Why (bwrap missing, or failing to make a sandbox).
        reason: String,
    },
    /// The cage's descriptors (the seccomp program, the info pipe) could
    /// not be made.
    #[error("cannot set up the cage: {what}")]
    Setup {
        /// What failed.
        what: &'static str,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A filtered network (`net:HOST:PORT`, `net:HOST:*`) cannot be
    /// enforced on this machine (another architecture than x86_64 and
    /// aarch64): the plugin does not start rather than run unfiltered.
    #[error("`net:` grants cannot be enforced here: {why}; the plugin does not start")]
    NetFilter {
        /// Why.
        why: String,
    },
    /// A bind source changed between compile and spawn: it is gone, or a
    /// symlink now stands in its path (ADDENDUM §16: a source is resolved
    /// once, and the cage mounts what was resolved, or nothing).
    #[error(
        "`{because}`: {path} changed after the cage was compiled (it is gone, or a symlink \
         now stands in its path); the plugin does not start"
    )]
    SourceChanged {
        /// Why the bind is there (capabilities, `install dir`, `system`...).
        because: String,
        /// The source as resolved at compile time.
        path: PathBuf,
        /// What opening it said (`ELOOP` for a link, `ENOENT`...).
        #[source]
        source: std::io::Error,
    },
    /// A grant lies inside a writable grant (ADDENDUM §16: "a grant nested
    /// inside another writable grant is a manifest or project error"):
    /// whoever can write the outer path could swap a parent of the inner
    /// one while the cage is built.
    #[error(
        "`{inner}` ({inner_path}) lies inside the writable grant `{outer}` ({outer_path}); \
         a grant nested in a writable grant is refused: declare one of them only"
    )]
    NestedInWritable {
        /// The nested grant (or `install dir`, `command`).
        inner: String,
        /// Its path.
        inner_path: PathBuf,
        /// The writable grant around it.
        outer: String,
        /// Its path.
        outer_path: PathBuf,
    },
    /// An `exec:BIN:P` binary is not one executable file (ADDENDUM §16).
    #[error("`{capability}`: {path} {why}; `exec:` binds one executable file")]
    ExecNotExecutable {
        /// The capability, canonical.
        capability: String,
        /// Where the binary was found.
        path: PathBuf,
        /// `is a directory`, `is not executable`.
        why: &'static str,
    },
    /// A bind source could not be staged for the plugin's own uid
    /// (`cage::stage`: a copy of its mount, idmapped for grants).
    #[error("cannot stage {path} for the plugin's own uid")]
    Stage {
        /// The source.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The plugin id range (`$KAGED_PLUGIN_IDS`) is not valid.
    #[error("the plugin id range is not valid: {0}")]
    PluginIds(String),
    /// The seccomp profile could not be compiled to BPF.
    #[error("the default seccomp profile does not compile for {arch}: {message}")]
    Seccomp {
        /// The target architecture.
        arch: &'static str,
        /// The compiler's message.
        message: String,
    },
}

impl CageError {
    /// `what` could not be inspected at `path`.
    pub(crate) fn inspect(what: &str, path: &std::path::Path, source: std::io::Error) -> CageError {
        CageError::Inspect {
            what: what.to_string(),
            path: path.to_path_buf(),
            source,
        }
    }
}
