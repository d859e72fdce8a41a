//! `cargo kaged test`: pack the plugin into a temporary directory, install
//! the packed directory the way the daemon does (a copy in a plugin store,
//! refused unless self-contained), and run the conformance suite on the
//! installed copy (caged unless `--cage off`), with every report format of
//! `kaged-conformance run` and the package's conformance profile
//! (`kaged-conformance.yaml`, which packing leaves out) unless
//! `--conformance-profile` names another.

use std::path::Path;

use kaged_conformance::pack::install_packed;
use kaged_conformance::{run_dir, SuiteArgs};

use crate::error::KagedError;
use crate::packing::{build_and_pack, PackOptions};

/// Pack, install and certify; the suite's exit status (0, or 1 when a
/// MUST case failed). Progress goes to stderr, the report where `suite`
/// says.
pub fn certify(pack: &PackOptions, suite: &SuiteArgs, cwd: &Path) -> Result<i32, KagedError> {
    // Where none of the plugin's grants reaches (the store in it would be
    // refused by install otherwise).
    let package = crate::cargo::find_package(pack.package.as_deref(), cwd)?;
    let scratch = kaged_host_engine::scratch_store_dir(&package.dir)
        .map_err(KagedError::io_at(&std::env::temp_dir()))?;
    let options = PackOptions {
        out: Some(scratch.path().join("packed")),
        ..pack.clone()
    };
    let packed = build_and_pack(&options, cwd)?;
    let installed = install_packed(&packed.dir, &scratch.path().join("store"))?;
    eprintln!(
        "cargo-kaged: packed {} {} ({} profile) and installed a copy at {}; running the conformance suite on it",
        packed.name,
        packed.version,
        pack.profile,
        installed.display()
    );
    let mut suite = suite.clone();
    if suite.conformance_profile.is_none() {
        suite.conformance_profile = kaged_conformance::testing::profile_of(&package.dir);
    }
    Ok(run_dir(&installed, &suite)?)
}
