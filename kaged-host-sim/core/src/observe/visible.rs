//! Plugin text made safe to print: every control character rendered
//! visibly, so that a line a plugin wrote cannot move the operator's cursor,
//! rewrite a line already printed (`\r`), change colours or send terminal
//! commands (`ESC`), ring the bell, or hide text (`NUL`, the bidirectional
//! overrides). What the daemon prints or audits of a plugin's stderr goes
//! through [`visible`].
//!
//! ```
//! use kaged_host_core::visible::visible;
//! assert_eq!(visible("ok\tdone"), "ok\tdone");
//! assert_eq!(visible("x\recho: plugin.spawned"), "x\\recho: plugin.spawned");
//! assert_eq!(visible("\x1b[2J\x07\0"), "\\x1b[2J\\x07\\x00");
//! assert_eq!(visible("a\u{9b}b\u{202e}c"), "a\\u{9b}b\\u{202e}c");
//! ```

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` is rendered escaped: the C0 controls but tab, DEL, the C1
/// controls (`U+0080`–`U+009F`: some terminals read `U+009B` as CSI) and
/// the bidirectional embeddings, overrides and isolates (`U+202A`–`U+202E`,
/// `U+2066`–`U+2069`), which reorder what is shown.
pub fn is_escaped(c: char) -> bool {
    (c.is_control() && c != '\t')
        || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// `s` with every [escaped](is_escaped) character written out: `\r`,
/// `\n`, `\x1b` (and every other C0 control and DEL as `\xNN`), the C1
/// controls and bidirectional marks as `\u{NNNN}`. Tabs stay. A string with
/// none is returned as it is.
pub fn visible(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_escaped) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            c if is_escaped(c) && (c as u32) < 0x80 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if is_escaped(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_that_moves_the_terminal_survives() {
        let every: String = (0u32..0x3000).filter_map(char::from_u32).collect();
        let shown = visible(&every);
        assert!(
            !shown.chars().any(is_escaped),
            "an escaped character was left"
        );
        assert!(!shown.contains('\r') && !shown.contains('\x1b'));
        // Plain text, tabs and non-ASCII letters are left alone.
        assert!(matches!(visible("état\tok"), Cow::Borrowed("état\tok")));
    }
}
