//! Asking cargo: which package and binary to build (`cargo metadata`),
//! building it (`cargo build --message-format=json`, for the executable's
//! path), and running the built plugin with `--print-manifest`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use kaged_plugin_protocol::manifest::PRINT_MANIFEST_FLAG;

use serde_json::Value;

use crate::error::KagedError;

/// How long a built plugin may take to print its manifest.
const PRINT_MANIFEST_LIMIT: Duration = Duration::from_secs(30);

/// The `cargo` to run: the one that ran us (`$CARGO`), else `cargo`.
pub fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// A binary package of the workspace around the current directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    /// The package name.
    pub name: String,
    /// Its directory (where its `Cargo.toml` is).
    pub dir: PathBuf,
    /// The binary target to build.
    pub bin: String,
    /// The workspace's target directory.
    pub target_dir: PathBuf,
}

/// The package `-p NAME` names, or (without `-p`) the package whose
/// directory holds the current directory, or the workspace's only package.
pub fn find_package(name: Option<&str>, cwd: &Path) -> Result<Package, KagedError> {
    let out = cargo()
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(cwd)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|source| KagedError::Spawn {
            program: "cargo metadata".into(),
            source,
        })?;
    if !out.status.success() {
        return Err(KagedError::Cargo {
            what: "cargo metadata".into(),
        });
    }
    let meta: Value = serde_json::from_slice(&out.stdout).map_err(|e| KagedError::Metadata {
        message: e.to_string(),
    })?;
    let target_dir = meta["target_directory"]
        .as_str()
        .map(PathBuf::from)
        .ok_or_else(|| KagedError::Metadata {
            message: "no target_directory".into(),
        })?;
    let packages: Vec<(String, PathBuf, Vec<String>)> = meta["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let name = p["name"].as_str()?.to_string();
            let dir = Path::new(p["manifest_path"].as_str()?)
                .parent()?
                .to_path_buf();
            let bins = p["targets"]
                .as_array()?
                .iter()
                .filter(|t| {
                    t["kind"]
                        .as_array()
                        .is_some_and(|k| k.iter().any(|k| k == "bin"))
                })
                .filter_map(|t| t["name"].as_str().map(str::to_string))
                .collect();
            Some((name, dir, bins))
        })
        .collect();
    let chosen = match name {
        Some(n) => packages
            .iter()
            .find(|(name, _, _)| name == n)
            .ok_or_else(|| KagedError::NoSuchPackage {
                name: n.to_string(),
                known: names(&packages),
            })?,
        None => {
            let cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
            let around = packages
                .iter()
                .filter(|(_, dir, _)| cwd.starts_with(dir))
                .max_by_key(|(_, dir, _)| dir.components().count());
            match (around, packages.as_slice()) {
                (Some(p), _) => p,
                (None, [only]) => only,
                (None, _) => {
                    return Err(KagedError::WhichPackage {
                        known: names(&packages),
                    })
                }
            }
        }
    };
    let (name, dir, bins) = chosen.clone();
    let bin = match bins.as_slice() {
        [] => return Err(KagedError::NoBinary { package: name }),
        [one] => one.clone(),
        several => several
            .iter()
            .find(|b| **b == name)
            .cloned()
            .ok_or_else(|| KagedError::SeveralBinaries {
                package: name.clone(),
                bins: several.join(", "),
            })?,
    };
    Ok(Package {
        name,
        dir,
        bin,
        target_dir,
    })
}

fn names(packages: &[(String, PathBuf, Vec<String>)]) -> String {
    packages
        .iter()
        .map(|(n, _, _)| n.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Build `bin` of `package` with `profile` (cargo's diagnostics go to our
/// stderr) from `cwd`; the executable's path.
pub fn build(package: &str, bin: &str, profile: &str, cwd: &Path) -> Result<PathBuf, KagedError> {
    let out = cargo()
        .args(["build", "--message-format=json-render-diagnostics"])
        .args(["--profile", profile, "-p", package, "--bin", bin])
        .current_dir(cwd)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|source| KagedError::Spawn {
            program: "cargo build".into(),
            source,
        })?;
    if !out.status.success() {
        return Err(KagedError::Cargo {
            what: format!("cargo build --profile {profile} -p {package}"),
        });
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == bin)
        .filter_map(|m| m["executable"].as_str().map(PathBuf::from))
        .next_back()
        .ok_or_else(|| KagedError::NoExecutable {
            package: package.to_string(),
            bin: bin.to_string(),
        })
}

/// What `binary --print-manifest` printed on stdout, or why there is
/// nothing (it failed, timed out or printed nothing).
pub fn print_manifest(binary: &Path) -> Result<String, String> {
    kaged_conformance::print_flag(binary, PRINT_MANIFEST_FLAG, None, PRINT_MANIFEST_LIMIT).map_err(
        |e| match e {
            kaged_conformance::PrintError::Empty => {
                "it printed nothing (a plugin built on kaged-plugin-sdk prints its manifest)".into()
            }
            e => e.to_string(),
        },
    )
}
