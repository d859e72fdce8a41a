//! `kaged-conformance` command line (being built).
fn main() {}
