//! Which cases run: `--only` / `--skip` patterns and the `--known-failing`
//! baseline.

use std::collections::BTreeSet;
use std::path::Path;

/// A case-id pattern: `*` matches any run of characters, everything else
/// is literal (`handshake.*`, `methods.answers[*]`, `*.no_flood`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern(String);

impl Pattern {
    /// A pattern from its text.
    pub fn new(text: impl Into<String>) -> Pattern {
        Pattern(text.into())
    }

    /// Whether `id` matches.
    ///
    /// ```
    /// use kaged_conformance::selection::Pattern;
    /// assert!(Pattern::new("handshake.*").matches("handshake.name_matches"));
    /// assert!(Pattern::new("methods.answers[*]").matches("methods.answers[presets.list]"));
    /// assert!(!Pattern::new("handshake").matches("handshake.name_matches"));
    /// ```
    pub fn matches(&self, id: &str) -> bool {
        glob(self.0.as_bytes(), id.as_bytes())
    }
}

fn glob(p: &[u8], s: &[u8]) -> bool {
    // Iterative wildcard match with backtracking on the last `*`.
    let (mut pi, mut si) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while si < s.len() {
        if pi < p.len() && p[pi] != b'*' && p[pi] == s[si] {
            pi += 1;
            si += 1;
        } else if pi < p.len() && p[pi] == b'*' {
            star = Some(pi);
            mark = si;
            pi += 1;
        } else if let Some(st) = star {
            pi = st + 1;
            mark += 1;
            si = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// `--only` and `--skip` together.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// When non-empty, only ids matching one of these run.
    pub only: Vec<Pattern>,
    /// Ids matching one of these are skipped.
    pub skip: Vec<Pattern>,
}

impl Selection {
    /// Why `id` is not selected, or `None` when it runs.
    pub fn excluded(&self, id: &str) -> Option<String> {
        if !self.only.is_empty() && !self.only.iter().any(|p| p.matches(id)) {
            return Some("not selected by --only".into());
        }
        self.skip
            .iter()
            .find(|p| p.matches(id))
            .map(|p| format!("skipped by --skip {}", p.0))
    }
}

/// How the detail of a stale baseline entry starts: the case is listed as
/// known-failing but passes.
pub const STALE_DETAIL: &str = "stale baseline entry";

/// The known-failing baseline: case ids (or patterns) expected to fail.
#[derive(Debug, Clone, Default)]
pub struct Baseline {
    entries: Vec<Pattern>,
    /// The file it came from, for messages.
    pub source: String,
}

/// A baseline file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("cannot read the known-failing baseline {path}: {source}")]
pub struct BaselineError {
    path: String,
    source: std::io::Error,
}

impl Baseline {
    /// Read a baseline: one case id or pattern per line; `#` starts a
    /// comment; blank lines are ignored.
    pub fn load(path: &Path) -> Result<Baseline, BaselineError> {
        let text = std::fs::read_to_string(path).map_err(|source| BaselineError {
            path: path.display().to_string(),
            source,
        })?;
        Ok(Baseline::parse(&text, &path.display().to_string()))
    }

    /// Parse baseline text.
    pub fn parse(text: &str, source: &str) -> Baseline {
        let entries = text
            .lines()
            .map(|l| l.split('#').next().unwrap_or_default().trim())
            .filter(|l| !l.is_empty())
            .map(Pattern::new)
            .collect();
        Baseline {
            entries,
            source: source.into(),
        }
    }

    /// Whether `id` is listed.
    pub fn lists(&self, id: &str) -> bool {
        self.entries.iter().any(|p| p.matches(id))
    }

    /// The entries that list `id`, as written (a pattern with `*` lists
    /// many).
    pub fn entries_listing(&self, id: &str) -> Vec<&str> {
        self.entries
            .iter()
            .filter(|p| p.matches(id))
            .map(|p| p.0.as_str())
            .collect()
    }

    /// A baseline file listing `ids` (the `--known-failing` format), with
    /// a header comment naming `plugin` and what wrote it (`by`).
    ///
    /// ```
    /// use kaged_conformance::selection::Baseline;
    /// let text = Baseline::render("my-plugin 1.0.0", "kaged-conformance init", ["protocol.batch_rejected"]);
    /// assert!(text.ends_with("protocol.batch_rejected\n"));
    /// assert!(Baseline::parse(&text, "t").lists("protocol.batch_rejected"));
    /// ```
    pub fn render<'a>(plugin: &str, by: &str, ids: impl IntoIterator<Item = &'a str>) -> String {
        let mut text = format!(
            "# Known-failing cases of {plugin}, written by {by}.\n\
             # Use with --known-failing: a listed case that fails is a warning; one that\n\
             # passes again is reported stale (remove its line).\n"
        );
        for id in ids {
            text.push_str(id);
            text.push('\n');
        }
        text
    }

    /// Entries that matched none of `ids` (reported so a baseline stays tidy).
    pub fn unmatched<'a>(&'a self, ids: &BTreeSet<String>) -> Vec<&'a str> {
        self.entries
            .iter()
            .filter(|p| !ids.iter().any(|id| p.matches(id)))
            .map(|p| p.0.as_str())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        assert!(Pattern::new("*").matches("anything.at_all"));
        assert!(Pattern::new("*.no_flood").matches("notifications.no_flood"));
        assert!(Pattern::new("a*b*c").matches("axxbyyc"));
        assert!(!Pattern::new("a*b*c").matches("axxbyy"));
        assert!(Pattern::new("protocol.ping").matches("protocol.ping"));
        assert!(!Pattern::new("protocol.ping").matches("protocol.ping2"));
    }

    #[test]
    fn selection_and_baseline() {
        let sel = Selection {
            only: vec![Pattern::new("protocol.*")],
            skip: vec![Pattern::new("protocol.batch*")],
        };
        assert!(sel.excluded("protocol.ping").is_none());
        assert!(sel
            .excluded("handshake.name_matches")
            .unwrap()
            .contains("--only"));
        assert!(sel
            .excluded("protocol.batch_rejected")
            .unwrap()
            .contains("--skip"));
        let b = Baseline::parse(
            "# known\nprotocol.not_initialized  # old SDK\n\nmethods.answers[*]\n",
            "b.txt",
        );
        assert!(b.lists("protocol.not_initialized"));
        assert!(b.lists("methods.answers[x.y]"));
        assert!(!b.lists("protocol.ping"));
        let ids: BTreeSet<String> = ["protocol.not_initialized".to_string()].into();
        assert_eq!(b.unmatched(&ids), vec!["methods.answers[*]"]);
    }
}
