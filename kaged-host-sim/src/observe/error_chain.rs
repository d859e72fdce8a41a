//! An error and its causes, flattened to one line (for audit details and
//! the command line's error messages).

/// `what`: `err`, then every cause, on one line.
///
/// ```
/// let e = std::io::Error::other("disk\n full");
/// assert_eq!(kaged_host_sim::one_line("cannot write", &e), "cannot write: disk full");
/// ```
pub fn one_line(what: &str, err: &dyn std::error::Error) -> String {
    let mut s = format!("{what}: {err}");
    let mut cur = err.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
