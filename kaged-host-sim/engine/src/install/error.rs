//! Why an install, upgrade or uninstall did not happen.

use std::path::{Path, PathBuf};

use kaged_plugin_protocol::manifest::MANIFEST_FILE;

use kaged_host_storage::BrokerError;

use super::store_guard::StoreGrant;

/// Why an install, upgrade or uninstall did not happen.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// Step 1: there is no manifest at the given path.
    #[error("{} has no {MANIFEST_FILE}", dir.display())]
    NoManifest {
        /// The directory given.
        dir: PathBuf,
    },
    /// Step 2: the manifest does not validate.
    #[error("the manifest in {} is invalid:\n{report}", dir.display())]
    InvalidManifest {
        /// The directory given.
        dir: PathBuf,
        /// Every problem, one per line.
        report: String,
    },
    /// Step 2: `command[0]` leaves the plugin directory (ADDENDUM §14):
    /// the copy the store makes could not start.
    #[error(
        "{name} is not self-contained: `command[0]` `{command}` leaves the plugin directory \
         {}, so the installed copy could not start it; pack the plugin first \
         (`cargo kaged pack` puts the binary under bin/ and points `command` at it)",
        dir.display()
    )]
    NotSelfContained {
        /// The plugin.
        name: String,
        /// The directory given.
        dir: PathBuf,
        /// `command[0]` as the manifest writes it.
        command: String,
    },
    /// `command` names a file under a directory install never copies
    /// (`.git/`): the copy could not start.
    #[error(
        "{name} runs `{command}`, which is under {dir}: install never copies {dir} \
         (version control history), so the installed copy could not start it; \
         move the file out of {dir}"
    )]
    CommandNotShipped {
        /// The plugin.
        name: String,
        /// The path `command` names.
        command: String,
        /// The directory never copied.
        dir: String,
    },
    /// A project-declared package's source could not be fetched.
    #[error("cannot fetch {source_text}: {message}")]
    Fetch {
        /// The source as declared (resolved).
        source_text: String,
        /// Why.
        message: String,
    },
    /// The package offered does not meet the project's `version:`
    /// requirement: refused before anything is installed.
    #[error("{name} {version} does not meet the project's requirement `{required}`; nothing was installed")]
    VersionUnmet {
        /// The plugin.
        name: String,
        /// The version its manifest declares.
        version: String,
        /// The project's requirement.
        required: String,
    },
    /// The plugin directory's `.kagedignore` cannot be read or has a line
    /// that is not a gitignore pattern.
    #[error(
        "{}{}: {message}",
        path.display(),
        if *line > 0 { format!(" line {line}") } else { String::new() }
    )]
    KagedIgnore {
        /// The file.
        path: PathBuf,
        /// The line (from 1; 0 for the whole file).
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The source directory could not be walked.
    #[error("cannot list the files of {}: {message}", dir.display())]
    Walk {
        /// The directory given.
        dir: PathBuf,
        /// Why.
        message: String,
    },
    /// A path capability reaches the plugin store (the store root or what
    /// it owns: the installed copies, the consent record): an installed
    /// copy is read-only to its own cage whatever the grants.
    #[error(
        "{name} asks `{}`, which reaches {} (the plugin store {}): an installed copy \
         is read-only to its own cage whatever the grants, so no grant may cover the store or \
         a copy in it; narrow the grant to a path outside the store (it resolves to {})",
        grant.capability, grant.covers.display(), store.display(), grant.path.display()
    )]
    GrantCoversStore {
        /// The plugin.
        name: String,
        /// The grant: its capability, host path and what of the store it
        /// reaches.
        grant: Box<StoreGrant>,
        /// The store root.
        store: PathBuf,
    },
    /// Step 3: the same version is already installed.
    #[error("{name} {version} is already installed")]
    AlreadyInstalled {
        /// The plugin.
        name: String,
        /// Its installed version.
        version: String,
    },
    /// Step 5: the operator declined.
    #[error("the operator declined to install {name} {version}")]
    Declined {
        /// The plugin.
        name: String,
        /// The version offered.
        version: String,
    },
    /// Uninstall of a plugin that is not installed.
    #[error("{name} is not installed")]
    NotInstalled {
        /// The plugin.
        name: String,
    },
    /// Uninstall while sessions use the plugin, without `force`.
    #[error(
        "plugin {name} is active in {sessions} session(s); stop sessions first, or use --force"
    )]
    ActiveSessions {
        /// The plugin.
        name: String,
        /// How many sessions use it.
        sessions: usize,
    },
    /// The store's `config.toml` is unreadable.
    #[error("plugin registry {}: {message}", path.display())]
    Registry {
        /// The registry file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// Dropping the plugin's storage objects failed.
    #[error("dropping the storage of {name}")]
    Storage {
        /// The plugin.
        name: String,
        /// The broker's error.
        #[source]
        source: BrokerError,
    },
    /// A file operation failed.
    #[error("{}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

impl InstallError {
    /// For `map_err`: an I/O error at `path`.
    pub(crate) fn io_at(path: &Path) -> impl FnOnce(std::io::Error) -> InstallError {
        let path = path.to_path_buf();
        move |source| InstallError::Io { path, source }
    }
}
