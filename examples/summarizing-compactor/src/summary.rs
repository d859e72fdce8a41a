//! The compaction itself, as pure functions: which messages to summarise,
//! the summary text, and the `CompactorResult` (built with the SDK's
//! `CompactorPlan`, so that always-keep messages stay in place).
//!
//! Deterministic, no LLM: one line per summarised message, its role and
//! first sentence, under a header that counts the messages per role; the
//! whole summary never exceeds `max_summary_chars` characters.

use std::collections::HashSet;

use kaged_plugin_sdk::protocol::{
    always_keep_ids, CompactParams, CompactorPlan, CompactorResult, Message, MessageRole,
};

use crate::config::Config;

/// Longest first sentence shown per message, in characters.
pub const SENTENCE_CHARS: usize = 160;

/// `text` cut to at most `max` characters, with `…` when cut.
pub fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max.saturating_sub(1)).collect();
    format!("{}…", cut.trim_end())
}

/// The first sentence of `text`: up to the first `.`, `!` or `?` followed
/// by whitespace (or the first line break), whitespace collapsed, at most
/// [`SENTENCE_CHARS`] characters.
pub fn first_sentence(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut end = line.len();
    let mut chars = line.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if matches!(c, '.' | '!' | '?') && chars.peek().is_some_and(|(_, n)| n.is_whitespace()) {
            end = i + c.len_utf8();
            break;
        }
    }
    let sentence = line[..end].split_whitespace().collect::<Vec<_>>().join(" ");
    truncate(&sentence, SENTENCE_CHARS)
}

/// The ids to summarise: compacted messages that are not always-keep (in
/// either list, so a repeated id is never superseded) and not among the
/// last `keep_last_n` compacted messages.
pub fn to_summarise(p: &CompactParams, keep_last_n: usize) -> Vec<&Message> {
    let keep = always_keep_ids(p);
    let n = p.messages_being_compacted.len().saturating_sub(keep_last_n);
    p.messages_being_compacted[..n]
        .iter()
        .filter(|m| !m.always_keep && !keep.contains(m.id.as_str()))
        .collect()
}

/// The summary of `messages`, at most `max_chars` characters.
pub fn summary_text(messages: &[&Message], max_chars: usize) -> String {
    let count = |r: MessageRole| messages.iter().filter(|m| m.role == r).count();
    let per_role: Vec<String> = [
        MessageRole::User,
        MessageRole::Assistant,
        MessageRole::Tool,
        MessageRole::System,
    ]
    .into_iter()
    .filter(|r| count(*r) > 0)
    .map(|r| format!("{} {}", count(r), r.as_str()))
    .collect();
    let header = format!(
        "[Summary of {} earlier message{}: {}]",
        messages.len(),
        if messages.len() == 1 { "" } else { "s" },
        per_role.join(", ")
    );
    let mut text = truncate(&header, max_chars);
    for (i, m) in messages.iter().enumerate() {
        let line = format!("\n- {}: {}", m.role.as_str(), first_sentence(&m.content));
        let rest = messages.len() - i - 1;
        let tail = if rest > 0 {
            format!("\n- … and {rest} more")
        } else {
            String::new()
        };
        let used = text.chars().count();
        if used + line.chars().count() + tail.chars().count() <= max_chars {
            text.push_str(&line);
            continue;
        }
        let more = format!("\n- … and {} more", messages.len() - i);
        if used + more.chars().count() <= max_chars {
            text.push_str(&more);
        }
        break;
    }
    text
}

/// An id for the summary message that no message uses.
fn fresh_id(p: &CompactParams) -> String {
    let used: HashSet<&str> = p
        .messages_being_compacted
        .iter()
        .chain(&p.messages_remaining)
        .map(|m| m.id.as_str())
        .collect();
    let base = format!("summary_{}", p.context.request_id);
    let mut id = base.clone();
    let mut n = 1;
    while used.contains(id.as_str()) {
        n += 1;
        id = format!("{base}_{n}");
    }
    id
}

/// The designated compactor's answer: the summarised messages replaced by
/// one `system` summary message where the first of them stood; every other
/// message (always-keep ones, the last `keep_last_n`, `messages_remaining`)
/// kept in order.
pub fn compact(p: &CompactParams, config: &Config) -> CompactorResult {
    let chosen = to_summarise(p, config.keep_last_n as usize);
    let total = p.messages_being_compacted.len();
    if chosen.is_empty() {
        let mut result = CompactorPlan::new(p).build();
        result.summary = Some(format!(
            "Nothing to summarise: kept all {total} compacted messages."
        ));
        return result;
    }
    let text = summary_text(&chosen, config.max_summary_chars as usize);
    let ids: Vec<String> = chosen.iter().map(|m| m.id.clone()).collect();
    let summary_id = fresh_id(p);
    let mut result = CompactorPlan::new(p)
        .summarise(ids, text)
        .summary_id(summary_id.clone())
        .build();
    result.summary = Some(format!(
        "Summarised {} of {total} compacted messages into {summary_id}; kept {} verbatim.",
        chosen.len(),
        total - chosen.len()
    ));
    result
}

/// `post_compact` hints: the first sentences of the last (up to 5) user
/// messages that were compacted away, oldest first.
pub fn retain_hints(p: &CompactParams) -> Vec<String> {
    let users: Vec<String> = p
        .messages_being_compacted
        .iter()
        .filter(|m| m.role == MessageRole::User && !m.always_keep)
        .map(|m| first_sentence(&m.content))
        .filter(|s| !s.is_empty())
        .collect();
    users[users.len().saturating_sub(5)..]
        .iter()
        .map(|s| format!("user asked: {s}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sentences() {
        assert_eq!(first_sentence("Deploy it. Then test."), "Deploy it.");
        assert_eq!(first_sentence("\n  Is v1.2 out?  yes"), "Is v1.2 out?");
        assert_eq!(first_sentence("line one\nline two"), "line one");
        assert_eq!(first_sentence(""), "");
        assert_eq!(
            first_sentence(&"é".repeat(400)).chars().count(),
            SENTENCE_CHARS
        );
    }

    #[test]
    fn the_summary_counts_roles_and_respects_the_limit() {
        let ms: Vec<Message> = (0..30)
            .map(|i| {
                let role = if i % 2 == 0 {
                    MessageRole::User
                } else {
                    MessageRole::Assistant
                };
                Message::new(
                    format!("m{i}"),
                    role,
                    format!("Message number {i} says something. More."),
                )
            })
            .collect();
        let refs: Vec<&Message> = ms.iter().collect();
        let full = summary_text(&refs[..2], 2000);
        assert_eq!(
            full,
            "[Summary of 2 earlier messages: 1 user, 1 assistant]\n- user: Message number 0 says something.\n- assistant: Message number 1 says something."
        );
        let short = summary_text(&refs, 200);
        assert!(short.chars().count() <= 200, "{short}");
        assert!(short.ends_with("more"), "{short}");
        assert!(summary_text(&refs, 10).chars().count() <= 10);
    }
}
