//! `cargo kaged new`: write a new plugin package ([`template`]), build it,
//! and write its `kaged-plugin.yaml` from `--print-manifest`, so that the
//! package's own tests (manifest drift, conformance) pass as it is.

mod options;
pub mod template;

pub use options::NewOptions;

use std::path::{Path, PathBuf};

use kaged_plugin_protocol::manifest::MANIFEST_FILE;
use kaged_plugin_protocol::names::{plugin_name_problem, BUILTIN_TOOL_NAMESPACES};

use crate::cargo::{build, print_manifest};
use crate::error::KagedError;
use template::KitSource;

/// A package `cargo kaged new` created.
#[derive(Debug, Clone)]
pub struct Created {
    /// Its directory.
    pub dir: PathBuf,
    /// The plugin's name.
    pub name: String,
}

impl Created {
    /// What to do next, for the terminal.
    pub fn next_steps(&self) -> String {
        format!(
            "Created plugin `{name}` in {dir}\n\nNext:\n  cd {dir}\n  cargo test          # its tests, the conformance suite among them\n  cargo kaged test    # pack, install a copy as the daemon would, certify the copy\n  cargo kaged pack    # target/kaged/{name}, ready for `plugin install`",
            name = self.name,
            dir = self.dir.display()
        )
    }
}

/// Create the package in `dir` (which must not exist, or be empty), build
/// it, and write its manifest.
pub fn scaffold(o: &NewOptions, dir: &Path) -> Result<Created, KagedError> {
    check_name(&o.name)?;
    let kit = match &o.kit_path {
        None => KitSource::CratesIo(env!("CARGO_PKG_VERSION").to_string()),
        Some(p) => {
            let kit = std::fs::canonicalize(p).map_err(KagedError::io_at(p))?;
            if !kit.join("kaged-plugin-sdk/Cargo.toml").is_file()
                || !kit.join("conformance/Cargo.toml").is_file()
            {
                return Err(KagedError::NotAKit { dir: p.clone() });
            }
            KitSource::Path(kit)
        }
    };
    let occupied = std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_some());
    if occupied || dir.is_file() {
        return Err(KagedError::Exists {
            dir: dir.to_path_buf(),
        });
    }
    let standalone = inside_workspace(dir);
    let files = [
        ("Cargo.toml", template::cargo_toml(o, &kit, standalone)),
        ("kaged-plugin.base.yaml", template::base_yaml(o)),
        ("src/main.rs", template::main_rs(o)),
        ("tests/manifest_drift.rs", template::drift_test(o)),
        ("tests/conformance.rs", template::conformance_test(o)),
        (".gitignore", template::GITIGNORE.to_string()),
        ("README.md", template::readme(o)),
    ];
    for (rel, text) in &files {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(KagedError::io_at(parent))?;
        }
        std::fs::write(&path, text).map_err(KagedError::io_at(&path))?;
    }
    if let KitSource::Path(kit) = &kit {
        // The checkout's tested dependency versions, as a starting point.
        let lock = kit.join("Cargo.lock");
        if lock.is_file() {
            let to = dir.join("Cargo.lock");
            std::fs::copy(&lock, &to).map_err(KagedError::io_at(&to))?;
        }
    }
    eprintln!("cargo-kaged: building {} to generate its manifest", o.name);
    let binary = build(&o.name, &o.name, "dev", dir)?;
    let manifest = print_manifest(&binary).map_err(|why| KagedError::NoManifest {
        binary: binary.clone(),
        why,
    })?;
    let path = dir.join(MANIFEST_FILE);
    std::fs::write(&path, manifest).map_err(KagedError::io_at(&path))?;
    Ok(Created {
        dir: dir.to_path_buf(),
        name: o.name.clone(),
    })
}

/// A plugin name that also makes a tool namespace (two characters at
/// least) and is no built-in one.
fn check_name(name: &str) -> Result<(), KagedError> {
    let problem = plugin_name_problem(name)
        .or_else(|| {
            (name.len() < 2).then(|| {
                format!("plugin name `{name}` is too short: its tools are called `{name}.<tool>`, which needs two characters")
            })
        })
        .or_else(|| {
            BUILTIN_TOOL_NAMESPACES.contains(&name).then(|| {
                format!("plugin name `{name}` is a built-in tool namespace; choose another")
            })
        });
    match problem {
        Some(problem) => Err(KagedError::BadName { problem }),
        None => Ok(()),
    }
}

/// Whether an ancestor of `dir` has a `Cargo.toml` with a `[workspace]`
/// (the new package would be taken for a member it is not).
fn inside_workspace(dir: &Path) -> bool {
    let abs = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    abs.ancestors().skip(1).any(|a| {
        std::fs::read_to_string(a.join("Cargo.toml"))
            .is_ok_and(|t| t.lines().any(|l| l.trim() == "[workspace]"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_cannot_name_a_plugin_and_its_tools_are_refused() {
        for bad in ["Hello", "x", "file", "a_b", "-x", ""] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
        for good in ["hello", "my-plugin2", "ab"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
    }
}
