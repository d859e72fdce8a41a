//! An error and its causes as text, written once for every crate that
//! reports errors to a person or over the wire.
//!
//! ```
//! use kaged_plugin_protocol::error_chain;
//! #[derive(Debug, thiserror::Error)]
//! #[error("cannot load the manifest")]
//! struct Load(#[source] std::io::Error);
//! let err = Load(std::io::Error::other("permission denied"));
//! assert_eq!(error_chain::causes(&err), ["permission denied"]);
//! assert_eq!(error_chain::chain(&err), "cannot load the manifest: permission denied");
//! assert_eq!(
//!     error_chain::one_line("error: install failed", &err),
//!     "error: install failed: cannot load the manifest: permission denied"
//! );
//! ```

use std::error::Error;

/// The messages of `err`'s causes (its `source()` chain), nearest first,
/// without `err`'s own message.
pub fn causes(err: &dyn Error) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = err.source();
    while let Some(c) = cur {
        out.push(c.to_string());
        cur = c.source();
    }
    out
}

/// `err` and every cause, joined by `": "`: `"a: b: c"`.
pub fn chain(err: &dyn Error) -> String {
    let mut s = err.to_string();
    for cause in causes(err) {
        s.push_str(": ");
        s.push_str(&cause);
    }
    s
}

/// `what: err: cause: ...` on one line: [`chain`] after `what`, with every
/// run of whitespace (newlines included) collapsed to one space.
pub fn one_line(what: &str, err: &dyn Error) -> String {
    format!("{what}: {}", chain(err))
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}
