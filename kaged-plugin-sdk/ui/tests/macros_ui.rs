//! Compile-time behaviour of `#[kaged_plugin]` (trybuild): every mistake is
//! a compile error pointing at the offending token. What must compile is
//! tested as ordinary tests (`kaged-plugin-sdk/tests/macro_features.rs`,
//! `macro_crate_path.rs`): one passing case would make trybuild build
//! (not check) every dependency and every case. Regenerate the expected output
//! with `TRYBUILD=overwrite cargo test -p kaged-plugin-sdk-ui` and read the
//! `.stderr` files before committing them.

#[test]
fn ui() {
    // trybuild's cargo builds the cases as an author's build would, not
    // linted by the wrapper `.ci/run` gives the kit's own build (its
    // diagnostics are what the .stderr files hold):
    // kaged_test_support::command::LINT_WRAPPER_ENV, named here since a
    // dev-dependency would be built into every case. The only test of its
    // binary: nothing else reads the environment meanwhile.
    for var in ["RUSTC_WORKSPACE_WRAPPER", "CLIPPY_ARGS"] {
        std::env::remove_var(var);
    }
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*.rs");
}
