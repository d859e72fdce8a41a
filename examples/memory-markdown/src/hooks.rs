//! What the hooks write and say, as plain functions: transcript rendering,
//! the idle buffer that honours `retain_every_n_turns`, and the
//! session-start text.

use std::collections::HashSet;

use kaged_plugin_sdk::protocol::{Message, MessageRole, Transcript};

use crate::config::Isolation;
use crate::entry::{Entry, Source};

/// Longest line shown per entry at session start, in characters.
pub const INJECT_LINE_CHARS: usize = 200;

/// A message as markdown: `**role**: content`.
pub fn render_message(m: &Message) -> String {
    format!("**{}**: {}", m.role.as_str(), m.content)
}

/// Messages as markdown, one paragraph each.
pub fn render_messages<'a>(ms: impl IntoIterator<Item = &'a Message>) -> String {
    ms.into_iter()
        .map(render_message)
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// User turns in a plain-string transcript: lines starting `user:` (any
/// case), at least one.
pub fn text_turns(text: &str) -> u32 {
    let n = text
        .lines()
        .filter(|l| l.trim_start().to_lowercase().starts_with("user:"))
        .count();
    u32::try_from(n).unwrap_or(u32::MAX).max(1)
}

/// The not-yet-saved part of one session's idle transcripts.
#[derive(Debug, Default)]
pub struct IdleBuffer {
    /// Message ids already buffered or saved (a host that resends the whole
    /// session transcript does not duplicate it).
    seen: HashSet<String>,
    /// Rendered paragraphs waiting to be saved.
    parts: Vec<String>,
    /// User turns in `parts`.
    turns: u32,
}

impl IdleBuffer {
    /// Add a transcript; the text to save when `every` user turns have
    /// accumulated (the buffer is then emptied).
    pub fn push(&mut self, transcript: &Transcript, every: u32) -> Option<String> {
        match transcript {
            Transcript::Messages(ms) => {
                for m in ms {
                    if self.seen.insert(m.id.clone()) {
                        self.parts.push(render_message(m));
                        if m.role == MessageRole::User {
                            self.turns += 1;
                        }
                    }
                }
            }
            Transcript::Text(t) if !t.trim().is_empty() => {
                self.parts.push(t.trim_end().to_string());
                self.turns += text_turns(t);
            }
            Transcript::Text(_) => {}
        }
        (self.turns >= every.max(1)).then(|| self.take()).flatten()
    }

    /// Whatever is buffered (`None` when nothing is), emptying the buffer.
    pub fn take(&mut self) -> Option<String> {
        self.turns = 0;
        let parts = std::mem::take(&mut self.parts);
        (!parts.is_empty()).then(|| parts.join("\n\n"))
    }
}

/// The first non-empty line of `text`, at most `max` characters (with `…`).
pub fn headline(text: &str, max: usize) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    if line.chars().count() <= max {
        line.to_string()
    } else {
        let cut: String = line.chars().take(max.saturating_sub(1)).collect();
        format!("{}…", cut.trim_end())
    }
}

/// The session-start text: the `n` newest entries retained with the tool,
/// newest first, and a pointer to the rest; `None` when there are none.
pub fn session_start_text(entries: &[Entry], n: usize, isolation: Isolation) -> Option<String> {
    let retained: Vec<&Entry> = entries
        .iter()
        .filter(|e| e.source == Source::Tool)
        .collect();
    if n == 0 || retained.is_empty() {
        return None;
    }
    let who = match isolation {
        Isolation::Agent => "agent",
        Isolation::Project => "project",
    };
    let mut text = format!("Known about this {who}:\n");
    for e in retained.iter().rev().take(n) {
        text.push_str(&format!("- {}", headline(&e.content, INJECT_LINE_CHARS)));
        if !e.tags.is_empty() {
            text.push_str(&format!(" [{}]", e.tags.join(", ")));
        }
        text.push('\n');
    }
    let rest = entries.len() - retained.len().min(n);
    if rest > 0 {
        text.push_str(&format!(
            "({rest} more in memory: search with memory-markdown.recall)\n"
        ));
    }
    Some(text.trim_end().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(id: &str, role: MessageRole, text: &str) -> Message {
        Message::new(id, role, text)
    }

    #[test]
    fn the_idle_buffer_saves_every_n_user_turns_without_duplicates() {
        let mut b = IdleBuffer::default();
        let first = Transcript::Messages(vec![
            msg("1", MessageRole::User, "hi"),
            msg("2", MessageRole::Assistant, "hello"),
        ]);
        assert_eq!(b.push(&first, 2), None);
        let again = Transcript::Messages(vec![
            msg("1", MessageRole::User, "hi"),
            msg("2", MessageRole::Assistant, "hello"),
            msg("3", MessageRole::User, "bye"),
        ]);
        let saved = b.push(&again, 2).expect("two user turns");
        assert_eq!(
            saved,
            "**user**: hi\n\n**assistant**: hello\n\n**user**: bye"
        );
        assert_eq!(b.push(&again, 2), None, "already saved");
        assert_eq!(b.take(), None);
    }

    #[test]
    fn plain_text_transcripts_count_user_lines() {
        assert_eq!(text_turns("user: a\nassistant: b\nUser: c"), 2);
        assert_eq!(text_turns("no roles at all"), 1);
        let mut b = IdleBuffer::default();
        assert_eq!(b.push(&Transcript::Text("user: a\n".into()), 2), None);
        assert_eq!(
            b.push(&Transcript::Text("user: b".into()), 2).as_deref(),
            Some("user: a\n\nuser: b")
        );
    }

    #[test]
    fn session_start_lists_the_newest_retained_entries() {
        let e = |id: &str, source, content: &str| Entry {
            id: id.into(),
            created_at: String::new(),
            tags: if id == "3" {
                vec!["lang".into()]
            } else {
                vec![]
            },
            context: None,
            source,
            content: content.into(),
        };
        let entries = vec![
            e("1", Source::Tool, "Uses bun 1.x"),
            e("2", Source::Transcript, "**user**: hi"),
            e(
                "3",
                Source::Tool,
                "\n  Prefers TypeScript strict mode\nmore",
            ),
        ];
        let text = session_start_text(&entries, 5, Isolation::Project).expect("some");
        assert_eq!(
            text,
            "Known about this project:\n- Prefers TypeScript strict mode [lang]\n- Uses bun 1.x\n(1 more in memory: search with memory-markdown.recall)"
        );
        let one = session_start_text(&entries, 1, Isolation::Agent).expect("some");
        assert!(
            one.starts_with("Known about this agent:\n- Prefers") && one.contains("(2 more"),
            "{one}"
        );
        assert_eq!(
            session_start_text(&entries[1..2], 5, Isolation::Agent),
            None
        );
        assert_eq!(session_start_text(&entries, 0, Isolation::Agent), None);
        assert_eq!(
            headline(&"x".repeat(300), 10),
            format!("{}…", "x".repeat(9))
        );
    }
}
