//! An error and its causes on one line, for case details and the command
//! line's last word. The one copy in this crate (the runner and `cli` use
//! it).

use std::error::Error;

/// `e` and each of its sources, joined by `": "` (`outer: cause: root`).
pub(crate) fn error_chain(e: &dyn Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::error_chain;

    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn every_cause_is_on_the_line() {
        let e = Outer(std::io::Error::other("root"));
        assert_eq!(error_chain(&e), "outer: root");
    }
}
