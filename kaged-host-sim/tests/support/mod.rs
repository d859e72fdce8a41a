//! Helpers shared by the host test binaries of every host crate; each
//! binary includes them with `#[path = ".../kaged-host-sim/tests/support/mod.rs"]
//! mod support;` and finds the fixtures with [`tests_dir`].

/// `kaged-host-sim/tests`, where the fixtures live, from whichever host
/// crate's tests include this module (`kaged-host-sim`, or one of its
/// `core`, `storage`, `engine` crates beside the directory).
#[allow(dead_code)]
pub fn tests_dir() -> std::path::PathBuf {
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    match here.join("tests/fixtures").is_dir() {
        true => here.join("tests"),
        false => here.join("../tests"),
    }
}

pub mod as_nobody;
pub mod firing;
pub mod host;
pub mod projects;
pub mod storage;
