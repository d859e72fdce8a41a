//! `cargo kaged pack`: build the plugin (release by default), take its
//! manifest from `--print-manifest` (or, for a plugin not built on the SDK,
//! the package's `kaged-plugin.yaml`), and write a self-contained plugin
//! directory ([`kaged_conformance::pack`]).

use std::path::{Path, PathBuf};

use kaged_conformance::pack::{pack, PackInput, Packed};
use kaged_host_engine::packed_dir;
use kaged_plugin_protocol::manifest::{Manifest, MANIFEST_FILE};

use crate::cargo::{build, find_package, print_manifest, Package};
use crate::error::KagedError;

/// What to pack and where.
#[derive(Debug, Clone)]
pub struct PackOptions {
    /// `-p`: the package (default: the one around the current directory).
    pub package: Option<String>,
    /// The cargo profile to build with (`release` by default).
    pub profile: String,
    /// Where the packed directory goes: `OUT/<plugin name>` (default
    /// `<target dir>/kaged`).
    pub out: Option<PathBuf>,
}

/// Build, then pack into `<out>/<plugin name>`; the
/// packed plugin. Progress goes to stderr.
pub fn build_and_pack(options: &PackOptions, cwd: &Path) -> Result<Packed, KagedError> {
    let package = find_package(options.package.as_deref(), cwd)?;
    let binary = build(&package.name, &package.bin, &options.profile, cwd)?;
    let manifest = manifest_of(&package, &binary)?;
    let name = Manifest::from_yaml_str(&manifest)
        .map(|m| m.name)
        .map_err(kaged_conformance::pack::PackError::Manifest)?;
    let dir = pack_dir(options.out.as_deref(), &package, &name);
    let input = PackInput {
        manifest: &manifest,
        binary: &binary,
        source_dir: &package.dir,
    };
    let packed = pack(&input, &dir)?;
    for w in &packed.warnings {
        eprintln!("cargo-kaged: warning: {w}");
    }
    Ok(packed)
}

/// Where plugin `name` of `package` is packed: `OUT/<name>` with `--out`,
/// else the engine's [`packed_dir`] under the package's target directory
/// (`cargo metadata`'s `target_directory`), where install looks for it.
pub fn pack_dir(out: Option<&Path>, package: &Package, name: &str) -> PathBuf {
    match out {
        Some(out) => out.join(name),
        None => packed_dir(&package.target_dir, name),
    }
}

/// The manifest to pack: what the built plugin prints with
/// `--print-manifest`, else the package's checked-in `kaged-plugin.yaml`
/// (with a warning saying so).
fn manifest_of(package: &Package, binary: &Path) -> Result<String, KagedError> {
    match print_manifest(binary) {
        Ok(text) if Manifest::from_yaml_str(&text).is_ok() => Ok(text),
        outcome => {
            let why = match outcome {
                Ok(_) => "what it printed is not a manifest".to_string(),
                Err(why) => why,
            };
            let file = package.dir.join(MANIFEST_FILE);
            match std::fs::read_to_string(&file) {
                Ok(text) => {
                    eprintln!(
                        "cargo-kaged: warning: {} --print-manifest: {why}; packing {} instead",
                        binary.display(),
                        file.display()
                    );
                    Ok(text)
                }
                Err(_) => Err(KagedError::NoManifest {
                    binary: binary.to_path_buf(),
                    why,
                }),
            }
        }
    }
}
