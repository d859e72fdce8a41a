//! `kaged-host-sim plugin install-project FILE [--store DIR] [--yes]`:
//! plugin-host.md § Install flow, "Project-load-driven install" and
//! "Source resolution", from the command line.
//!
//! ```text
//! $ kaged-host-sim plugin install-project ./project.yaml --store ~/.kaged
//! @kaged/notes: not installed; source ./vendor/notes
//! Validating manifest...
//!   name: notes
//!   ...
//! Install notes? [y/N] y
//! ✓ Installed notes 1.2.0 for the project (project-driven: local = false)
//! @kaged/memory: not installed; source not specified: install it by hand with `plugin install PATH --for-project`
//! 1 plugin(s) pending: the project cannot load until they are installed
//! ```
//!
//! Each missing package is shown with its source and installed only on
//! consent (`--yes`, or `y` at the prompt on a terminal). A `./relative`
//! source is copied into the store; a git source is named but not fetched
//! (the simulator fetches nothing from the network); no source leaves the
//! operator to provide a path. A package already installed is checked
//! against the declaration's `version:` requirement.

use std::path::Path;
use std::process::ExitCode;

use super::consent::asker;
use super::{one_line, CliError};
use kaged_host_engine::agents::resolve::version_meets;
use kaged_host_engine::agents::{DeclaredPackage, Project};
use kaged_host_engine::{InstallError, PluginStore};

/// What became of one declared package.
enum Outcome {
    Present,
    Installed,
    Pending,
}

/// Install what `project` declares and `store` lacks; see the module docs.
pub(super) fn run(project: &Path, store: &PluginStore, yes: bool) -> Result<ExitCode, CliError> {
    let loaded = Project::load(project).map_err(|e| CliError::Usage(one_line("project", &e)))?;
    let installed = store
        .list()
        .map_err(|e| CliError::Failed(one_line("cannot list the store", &e)))?;
    let mut pending = 0;
    for declared in loaded.declared_packages() {
        let have = installed.iter().find(|p| p.name == declared.plugin_name());
        let outcome = match have {
            Some(p) => present(&declared, &p.installed),
            None => install(&declared, store, yes)?,
        };
        match outcome {
            Outcome::Present | Outcome::Installed => {}
            Outcome::Pending => pending += 1,
        }
    }
    if pending > 0 {
        kaged_host_core::outln!(
            "{pending} plugin(s) pending: the project cannot load until they are installed"
        );
        return Ok(ExitCode::from(1));
    }
    kaged_host_core::outln!("✓ Every plugin the project declares is installed");
    Ok(ExitCode::SUCCESS)
}

/// An installed package: does it meet the `version:` requirement?
fn present(declared: &DeclaredPackage, version: &str) -> Outcome {
    match &declared.version {
        Some(required) if !version_meets(version, required) => {
            kaged_host_core::outln!(
                "{}: {version} is installed, the project requires `{required}`: upgrade it with `plugin install PATH`",
                declared.package
            );
            Outcome::Pending
        }
        _ => {
            kaged_host_core::outln!("{}: {version} installed", declared.package);
            Outcome::Present
        }
    }
}

/// A missing package: install it from its source, on consent.
fn install(
    declared: &DeclaredPackage,
    store: &PluginStore,
    yes: bool,
) -> Result<Outcome, CliError> {
    let package = &declared.package;
    let Some(source) = &declared.source else {
        kaged_host_core::outln!(
            "{package}: not installed; source not specified: install it by hand with `plugin install PATH --for-project`"
        );
        return Ok(Outcome::Pending);
    };
    if source.contains("://") || source.starts_with("git+") {
        kaged_host_core::outln!(
            "{package}: not installed; source {source}: fetching git sources is not simulated: clone it and run `plugin install PATH --for-project`"
        );
        return Ok(Outcome::Pending);
    }
    let dir = Path::new(source);
    if !dir.is_dir() {
        kaged_host_core::outln!("{package}: not installed; source {source} is not a directory");
        return Ok(Outcome::Pending);
    }
    kaged_host_core::outln!("{package}: not installed; source {source}");
    kaged_host_core::outln!("Validating manifest...");
    let mut no_terminal = false;
    let result = store.install(dir, false, asker(yes, &mut no_terminal));
    match result {
        Ok(entry) => {
            kaged_host_core::outln!(
                "✓ Installed {} {} for the project (project-driven: local = false)",
                entry.name,
                entry.installed
            );
            Ok(match &declared.version {
                Some(required) if !version_meets(&entry.installed, required) => {
                    kaged_host_core::outln!(
                        "{package}: {} does not meet the project's `{required}`",
                        entry.installed
                    );
                    Outcome::Pending
                }
                _ => Outcome::Installed,
            })
        }
        Err(InstallError::Declined { .. }) => {
            let why = match no_terminal {
                true => "consent needed: stdin is not a terminal, pass --yes",
                false => "declined",
            };
            kaged_host_core::outln!("{package}: not installed ({why})");
            Ok(Outcome::Pending)
        }
        Err(e) => {
            kaged_host_core::outln!("{package}: not installed: {}", one_line("install", &e));
            Ok(Outcome::Pending)
        }
    }
}
