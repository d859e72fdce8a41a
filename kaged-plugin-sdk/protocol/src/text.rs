//! Text for a person, written once for both sides: a long value cut to a
//! report line's length.
//!
//! ```
//! use kaged_plugin_protocol::text::cut;
//! assert_eq!(cut("abcdef", 3), "abc…");
//! assert_eq!(cut("ab", 3), "ab");
//! assert_eq!(cut("ééé", 2), "éé…");
//! ```

/// Cut `s` to at most `max` chars, marking the cut with `…`.
pub fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}
