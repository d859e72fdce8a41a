//! Compile-time behaviour of `#[kaged_plugin]` (trybuild): every feature
//! compiles (and its `main` checks the result), every mistake is a compile
//! error pointing at the offending token. Regenerate the expected output
//! with `TRYBUILD=overwrite cargo test -p kaged-plugin-sdk --test macros_ui`
//! and read the `.stderr` files before committing them.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*.rs");
}
