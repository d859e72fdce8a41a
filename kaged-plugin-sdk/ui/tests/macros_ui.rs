//! Compile-time behaviour of `#[kaged_plugin]` (trybuild): every mistake is
//! a compile error pointing at the offending token. What must compile is
//! tested as ordinary tests (`kaged-plugin-sdk/tests/macro_features.rs`,
//! `macro_crate_path.rs`): one passing case would make trybuild build
//! (not check) every dependency and every case. Regenerate the expected output
//! with `TRYBUILD=overwrite cargo test -p kaged-plugin-sdk-ui` and read the
//! `.stderr` files before committing them.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*.rs");
}
