//! What a test needs from the machine (a tool, a browser, a built binary):
//! under `CI=true` its absence is a failure, never a silent pass
//! (`.ci/run` installs what the tests need); elsewhere the test is skipped,
//! saying so on stderr.
//!
//! ```
//! use kaged_test_support::ci::required_in_ci;
//! assert_eq!(required_in_ci("a tool", Ok::<_, String>(7)), Some(7));
//! if std::env::var("CI").as_deref() != Ok("true") {
//!     assert_eq!(required_in_ci::<u8>("a tool", Err("not installed".into())), None);
//! }
//! ```

/// `found`'s value; its absence (`Err(why)`): under `CI=true` a panic
/// naming `what` and why, elsewhere `None` after saying on stderr that
/// `what` is skipped and why.
pub fn required_in_ci<T>(what: &str, found: Result<T, String>) -> Option<T> {
    match found {
        Ok(t) => Some(t),
        Err(why) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("CI=true and no {what}: {why}")
        }
        Err(why) => {
            eprintln!("SKIPPED (not CI): {what}: {why}");
            None
        }
    }
}
