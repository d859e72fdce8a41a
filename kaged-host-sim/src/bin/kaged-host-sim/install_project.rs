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
//! @kaged/memory: not installed; source not specified: install it by hand with `plugin install PATH --for-project FILE`
//! 1 plugin(s) pending: the project cannot load until they are installed
//! ```
//!
//! Each missing package is shown with its source and installed only on
//! consent (`--yes`, or `y` at the prompt on a terminal). A `./relative`
//! source (against the project root) is copied into the store; a git
//! source (`https://`, `git+https://`, `file://`) is cloned with `git`,
//! shallow, at the declared version's tag when there is one
//! ([`PackageSource`]): the fetch itself is what `--yes` (or the operator)
//! consents to first, then the manifest's install prompt. No source leaves
//! the operator to provide a path. The declaration's `version:` is checked
//! before anything is installed, and a package already installed is
//! checked against it too. What is installed is `local = false`, enabled,
//! for this project only.

use std::path::Path;
use std::process::ExitCode;

use super::consent::asker;
use super::{one_line, CliError};
use kaged_host_engine::agents::resolve::version_meets;
use kaged_host_engine::agents::{DeclaredPackage, Project};
use kaged_host_engine::{InstallError, PackageSource, PluginStore};

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
            None => install(&declared, &loaded.id, store, yes)?,
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

/// A missing package: fetch it from its source and install it, on consent.
fn install(
    declared: &DeclaredPackage,
    project_id: &str,
    store: &PluginStore,
    yes: bool,
) -> Result<Outcome, CliError> {
    let package = &declared.package;
    let Some(source) = &declared.source else {
        kaged_host_core::outln!(
            "{package}: not installed; source not specified: install it by hand with `plugin install PATH --for-project FILE`"
        );
        return Ok(Outcome::Pending);
    };
    kaged_host_core::outln!("{package}: not installed; source {source}");
    let parsed = PackageSource::parse(source);
    if let PackageSource::Git { url } = &parsed {
        // Nothing is fetched without the operator's consent (§ Source
        // resolution): the clone itself is asked for first.
        let mut no_terminal = false;
        if !fetch_consent(url, yes, &mut no_terminal) {
            let why = if no_terminal {
                "consent needed: stdin is not a terminal, pass --yes"
            } else {
                "declined"
            };
            kaged_host_core::outln!("{package}: not fetched ({why})");
            return Ok(Outcome::Pending);
        }
        kaged_host_core::outln!("Fetching {url} with git...");
    }
    let fetched = match parsed.fetch(declared.version.as_deref()) {
        Ok(f) => f,
        Err(e) => {
            kaged_host_core::outln!("{package}: not installed: {e}");
            return Ok(Outcome::Pending);
        }
    };
    kaged_host_core::outln!("Validating manifest...");
    let mut no_terminal = false;
    let required = declared.version.as_deref();
    let result = store.install_for_project(
        &fetched.dir,
        project_id,
        required,
        asker(yes, &mut no_terminal),
    );
    match result {
        Ok(entry) => {
            kaged_host_core::outln!(
                "✓ Installed {} {} for the project (project-driven: local = false, enabled for {project_id})",
                entry.name,
                entry.installed
            );
            Ok(Outcome::Installed)
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

/// Ask whether to clone `url` (`--yes` consents; no terminal refuses).
fn fetch_consent(url: &str, yes: bool, no_terminal: &mut bool) -> bool {
    use std::io::{BufRead, IsTerminal, Write};
    if yes {
        return true;
    }
    if !std::io::stdin().is_terminal() {
        *no_terminal = true;
        return false;
    }
    print!("Fetch {url} with git? [y/N] ");
    let _ = std::io::stdout().flush();
    let mut line = String::new();
    let _ = std::io::stdin().lock().read_line(&mut line);
    matches!(line.trim(), "y" | "Y" | "yes")
}
