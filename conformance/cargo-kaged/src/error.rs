//! [`KagedError`]: why a `cargo kaged` command could not do its job.

use std::path::PathBuf;

/// Why a `cargo kaged` command failed (exit status 2).
#[derive(Debug, thiserror::Error)]
pub enum KagedError {
    /// A program could not be started.
    #[error("cannot run {program}")]
    Spawn {
        /// The program.
        program: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A cargo command failed (its own messages are above).
    #[error("{what} failed (see cargo's messages above)")]
    Cargo {
        /// The command.
        what: String,
    },
    /// `cargo metadata` printed something unexpected.
    #[error("cannot read cargo metadata: {message}")]
    Metadata {
        /// What was wrong.
        message: String,
    },
    /// `-p NAME` names no package of the workspace.
    #[error("no package `{name}` in this workspace (packages: {known})")]
    NoSuchPackage {
        /// The name given.
        name: String,
        /// The workspace's packages.
        known: String,
    },
    /// No `-p`, and the current directory is in no single package.
    #[error("the workspace has several packages; choose one with -p ({known})")]
    WhichPackage {
        /// The workspace's packages.
        known: String,
    },
    /// The package has no binary target.
    #[error("package `{package}` has no binary target: a plugin is a program")]
    NoBinary {
        /// The package.
        package: String,
    },
    /// The package has several binaries, none named like the package.
    #[error("package `{package}` has several binaries ({bins}) and none is named `{package}`")]
    SeveralBinaries {
        /// The package.
        package: String,
        /// Its binaries.
        bins: String,
    },
    /// cargo built nothing we could find.
    #[error("cargo reported no executable for binary `{bin}` of package `{package}`")]
    NoExecutable {
        /// The package.
        package: String,
        /// The binary.
        bin: String,
    },
    /// The built plugin printed no manifest and the package has none.
    #[error(
        "{} --print-manifest: {why}; and the package has no kaged-plugin.yaml to pack instead",
        binary.display()
    )]
    NoManifest {
        /// The built plugin.
        binary: PathBuf,
        /// Why `--print-manifest` gave nothing.
        why: String,
    },
    /// Packing or installing failed.
    #[error(transparent)]
    Pack(#[from] kaged_conformance::pack::PackError),
    /// The conformance suite could not run.
    #[error(transparent)]
    Suite(#[from] kaged_conformance::CliError),
    /// `cargo kaged new`: the name is not a plugin name.
    #[error("{problem}")]
    BadName {
        /// What is wrong with it.
        problem: String,
    },
    /// `cargo kaged new`: the directory exists and is not empty.
    #[error("{} already exists and is not empty", dir.display())]
    Exists {
        /// The directory.
        dir: PathBuf,
    },
    /// `--kit-path` is not a checkout of the kaged plugin kit.
    #[error(
        "{} is not a checkout of the kaged plugin kit (no kaged-plugin-sdk/Cargo.toml and conformance/Cargo.toml)",
        dir.display()
    )]
    NotAKit {
        /// The directory given.
        dir: PathBuf,
    },
    /// A file operation failed.
    #[error("{}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

impl KagedError {
    /// For `map_err`: an I/O error at `path`.
    pub(crate) fn io_at(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> KagedError {
        let path = path.to_path_buf();
        move |source| KagedError::Io { path, source }
    }
}
