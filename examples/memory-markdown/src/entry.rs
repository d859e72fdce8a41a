//! One memory entry: a markdown file with YAML frontmatter.
//!
//! ```text
//! ---
//! id: "20261122T211030123Z-0001"
//! created_at: "2026-11-22T21:10:30.123Z"
//! tags: ["deploy"]
//! context: "while fixing CI"
//! source: "tool"
//! ---
//! The deploy target is Cloudflare Workers.
//! ```
//!
//! Every frontmatter string is written JSON-quoted (valid YAML), so no
//! value can break out of its line; hand-edited files with plain YAML
//! scalars parse too.

use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// Who wrote an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The `retain` tool: something the agent chose to remember.
    Tool,
    /// An idle session transcript.
    Transcript,
    /// Messages that compaction took out of the context window.
    Compaction,
}

impl Source {
    /// The frontmatter spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Source::Tool => "tool",
            Source::Transcript => "transcript",
            Source::Compaction => "compaction",
        }
    }
}

/// A memory entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Time-based, sortable, unique id (also the file stem).
    pub id: String,
    /// RFC 3339 UTC creation time.
    pub created_at: String,
    /// Labels, in the order given.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Where the information came from, if said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// Who wrote it.
    pub source: Source,
    /// The markdown body.
    #[serde(skip)]
    pub content: String,
}

/// Why a file is not an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError(pub String);

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A tag: non-empty, at most 64 characters, no control characters.
pub fn valid_tag(tag: &str) -> bool {
    !tag.trim().is_empty() && tag.chars().count() <= 64 && !tag.chars().any(char::is_control)
}

/// An id as [`IdGen`] makes them: `YYYYMMDDTHHMMSSmmmZ-NNNN` (digits).
pub fn valid_id(id: &str) -> bool {
    let b = id.as_bytes();
    b.len() == 24
        && b.iter().enumerate().all(|(i, c)| match i {
            8 => *c == b'T',
            18 => *c == b'Z',
            19 => *c == b'-',
            _ => c.is_ascii_digit(),
        })
}

fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

impl Entry {
    /// The file text: frontmatter, then the body.
    pub fn to_markdown(&self) -> String {
        let tags: Vec<String> = self.tags.iter().map(|t| quoted(t)).collect();
        let mut s = format!(
            "---\nid: {}\ncreated_at: {}\ntags: [{}]\n",
            quoted(&self.id),
            quoted(&self.created_at),
            tags.join(", ")
        );
        if let Some(c) = &self.context {
            s.push_str(&format!("context: {}\n", quoted(c)));
        }
        s.push_str(&format!("source: {}\n---\n", quoted(self.source.as_str())));
        s.push_str(&self.content);
        s.push('\n');
        s
    }

    /// Parse a file written by [`Entry::to_markdown`] (or by hand).
    pub fn parse(text: &str) -> Result<Entry, ParseError> {
        let rest = text
            .strip_prefix("---\n")
            .or_else(|| text.strip_prefix("---\r\n"))
            .ok_or_else(|| ParseError("no frontmatter: the file must start with `---`".into()))?;
        let (front, body) = match rest.find("\n---\n") {
            Some(i) => (&rest[..i], &rest[i + 5..]),
            None => match rest.strip_suffix("\n---") {
                Some(f) => (f, ""),
                None => return Err(ParseError("the frontmatter is not closed by `---`".into())),
            },
        };
        let mut entry: Entry =
            serde_saphyr::from_str(front).map_err(|e| ParseError(format!("frontmatter: {e}")))?;
        entry.content = body.strip_suffix('\n').unwrap_or(body).to_string();
        Ok(entry)
    }

    /// The creation time (the Unix epoch if `created_at` does not parse).
    pub fn created(&self) -> SystemTime {
        humantime::parse_rfc3339_weak(&self.created_at).unwrap_or(UNIX_EPOCH)
    }
}

/// Makes ids: the creation time to the millisecond, then a sequence
/// number that keeps ids unique and increasing within a millisecond.
#[derive(Debug, Default)]
pub struct IdGen {
    last: Mutex<(u64, u32)>,
}

impl IdGen {
    /// The next `(id, created_at)` at `now`, never equal to or below a
    /// previous id (a clock that steps back reuses the last millisecond).
    pub fn next(&self, now: SystemTime) -> (String, String) {
        let ms = now
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_millis() as u64;
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        let (ms, seq) = if ms > last.0 {
            (ms, 0)
        } else {
            (last.0, last.1 + 1)
        };
        *last = (ms, seq);
        drop(last);
        let at = UNIX_EPOCH + Duration::from_millis(ms);
        let created_at = humantime::format_rfc3339_millis(at).to_string();
        let digits: String = created_at.chars().filter(char::is_ascii_digit).collect();
        let id = format!("{}T{}Z-{:04}", &digits[..8], &digits[8..], seq % 10_000);
        (id, created_at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Entry {
        Entry {
            id: "20261122T211030123Z-0001".into(),
            created_at: "2026-11-22T21:10:30.123Z".into(),
            tags: vec!["deploy".into(), "with \"quotes\", commas: and ]".into()],
            context: Some("line one\nline two --- not a fence".into()),
            source: Source::Tool,
            content: "# Heading\n\n---\nA body with a fence-like line.\n\n".into(),
        }
    }

    #[test]
    fn frontmatter_round_trips() {
        let e = sample();
        let text = e.to_markdown();
        assert!(
            text.starts_with("---\nid: \"20261122T211030123Z-0001\"\n"),
            "{text}"
        );
        assert_eq!(Entry::parse(&text).expect("parses"), e);
        let bare = Entry {
            context: None,
            tags: vec![],
            content: String::new(),
            ..sample()
        };
        assert_eq!(Entry::parse(&bare.to_markdown()).expect("parses"), bare);
    }

    #[test]
    fn hand_written_files_parse_and_garbage_does_not() {
        let text = "---\nid: 20261122T211030123Z-0002\ncreated_at: 2026-11-22T21:10:30Z\ntags: [a, b]\nsource: compaction\n---\nhello\n";
        let e = Entry::parse(text).expect("plain YAML");
        assert_eq!(
            (e.tags.len(), e.source, e.content.as_str()),
            (2, Source::Compaction, "hello")
        );
        assert!(e.created() > UNIX_EPOCH);
        assert!(Entry::parse("no frontmatter").is_err());
        assert!(Entry::parse("---\nid: x\n").is_err());
        assert!(
            Entry::parse("---\nid: x\n---\nbody").is_err(),
            "missing fields"
        );
    }

    #[test]
    fn ids_are_sortable_unique_and_valid() {
        let g = IdGen::default();
        let t = UNIX_EPOCH + Duration::from_millis(1_795_000_000_123);
        let (a, at) = g.next(t);
        let (b, _) = g.next(t);
        let (c, _) = g.next(t - Duration::from_secs(5));
        let (d, _) = g.next(t + Duration::from_millis(1));
        assert!(a < b && b < c && c < d, "{a} {b} {c} {d}");
        assert!([&a, &b, &c, &d].iter().all(|i| valid_id(i)), "{a}");
        assert_eq!(at, "2026-11-18T11:06:40.123Z");
        assert!(a.starts_with("20261118T110640123Z-"));
        assert!(!valid_id("../etc/passwd") && !valid_id(""));
    }
}
