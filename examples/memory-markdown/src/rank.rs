//! Recall ranking: simple term matching plus recency.
//!
//! A query is split into lowercase alphanumeric terms. An entry's text is
//! its content, context and tags. For each query term the entry scores 1
//! when the term is one of its words, 0.5 when one of its words starts with
//! the term (terms of 3+ characters), else 0; coverage is the mean over the
//! terms. Repeated matches add a small bonus, and recency (a half-life of
//! 30 days) breaks near-ties:
//!
//! `score = coverage + 0.05 * min(extra occurrences, 4) + 0.2 * 0.5^(age_days / 30)`
//!
//! Entries matching no term are left out. A query without any term (`*`,
//! punctuation) lists entries by recency alone.

use std::collections::HashMap;
use std::time::SystemTime;

use crate::entry::Entry;

/// Recency half-life, in days.
pub const HALF_LIFE_DAYS: f64 = 30.0;

/// The lowercase alphanumeric words of `text`.
pub fn terms(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// `0.5^(age / half-life)`: 1 for now, 0.5 at 30 days.
pub fn recency(created: SystemTime, now: SystemTime) -> f64 {
    let age_days = now
        .duration_since(created)
        .map(|d| d.as_secs_f64() / 86_400.0)
        .unwrap_or(0.0);
    0.5f64.powf(age_days / HALF_LIFE_DAYS)
}

/// The score of `entry` for `query_terms` (deduplicated), or `None` when no
/// term matches. With no terms, the recency component alone.
pub fn score(entry: &Entry, query_terms: &[String], now: SystemTime) -> Option<f64> {
    let fresh = 0.2 * recency(entry.created(), now);
    if query_terms.is_empty() {
        return Some(fresh);
    }
    let mut words: HashMap<String, usize> = HashMap::new();
    let text = [
        entry.content.as_str(),
        entry.context.as_deref().unwrap_or(""),
    ];
    for w in text
        .iter()
        .flat_map(|t| terms(t))
        .chain(entry.tags.iter().flat_map(|t| terms(t)))
    {
        *words.entry(w).or_default() += 1;
    }
    let mut coverage = 0.0;
    let mut extra = 0usize;
    for t in query_terms {
        if let Some(n) = words.get(t) {
            coverage += 1.0;
            extra += n - 1;
        } else if t.chars().count() >= 3 && words.keys().any(|w| w.starts_with(t.as_str())) {
            coverage += 0.5;
        }
    }
    if coverage == 0.0 {
        return None;
    }
    let coverage = coverage / query_terms.len() as f64;
    Some(coverage + 0.05 * extra.min(4) as f64 + fresh)
}

/// The entries matching `query`, best first (ties: newest first), at most
/// `limit`, each with its score rounded to 4 decimals.
pub fn rank(entries: Vec<Entry>, query: &str, limit: usize, now: SystemTime) -> Vec<(Entry, f64)> {
    let mut q = terms(query);
    q.sort();
    q.dedup();
    let mut scored: Vec<(Entry, f64)> = entries
        .into_iter()
        .filter_map(|e| score(&e, &q, now).map(|s| (e, (s * 10_000.0).round() / 10_000.0)))
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| b.0.id.cmp(&a.0.id)));
    scored.truncate(limit);
    scored
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::Source;
    use std::time::Duration;

    const DAY: Duration = Duration::from_secs(86_400);

    fn entry(id: &str, content: &str, tags: &[&str], age_days: u64, now: SystemTime) -> Entry {
        let at = now - DAY * age_days as u32;
        Entry {
            id: id.into(),
            created_at: humantime::format_rfc3339_millis(at).to_string(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            context: None,
            source: Source::Tool,
            content: content.into(),
        }
    }

    fn ids(r: &[(Entry, f64)]) -> Vec<&str> {
        r.iter().map(|(e, _)| e.id.as_str()).collect()
    }

    #[test]
    fn more_matching_terms_rank_higher_and_misses_are_dropped() {
        let now = SystemTime::now();
        let es = vec![
            entry("1", "The deploy target is Cloudflare Workers", &[], 10, now),
            entry("2", "Deploy on Fridays is forbidden", &[], 1, now),
            entry("3", "The cat is named Miso", &[], 0, now),
        ];
        let r = rank(es, "cloudflare deploy", 10, now);
        assert_eq!(ids(&r), ["1", "2"]);
        assert!(r[0].1 > r[1].1);
    }

    #[test]
    fn recency_breaks_ties_and_decays_by_half_in_thirty_days() {
        let now = SystemTime::now();
        let es = vec![
            entry("old", "uses bun", &[], 90, now),
            entry("new", "uses bun", &[], 1, now),
        ];
        assert_eq!(ids(&rank(es, "bun", 10, now)), ["new", "old"]);
        assert!((recency(now - DAY * 30, now) - 0.5).abs() < 1e-9);
        assert!((recency(now, now) - 1.0).abs() < 1e-9);
    }

    #[test]
    fn tags_prefixes_case_and_limit() {
        let now = SystemTime::now();
        let es = vec![
            entry("a", "ESM imports everywhere", &["style"], 0, now),
            entry("b", "Prefers TypeScript strict mode", &[], 0, now),
            entry("c", "typescript again", &[], 0, now),
        ];
        let r = rank(es.clone(), "STYLE", 10, now);
        assert_eq!(ids(&r), ["a"], "a tag matches");
        let r = rank(es.clone(), "typesc", 10, now);
        assert_eq!(r.len(), 2, "prefix match");
        assert!(r[0].1 < 1.0, "a prefix match is worth half");
        assert_eq!(rank(es.clone(), "typescript", 1, now).len(), 1);
        assert_eq!(
            rank(es, "*", 10, now).len(),
            3,
            "no terms: everything by recency"
        );
    }

    #[test]
    fn repeated_matches_add_a_capped_bonus() {
        let now = SystemTime::now();
        let once = entry("x", "rust", &[], 0, now);
        let many = entry("y", &"rust ".repeat(20), &[], 0, now);
        let q = vec!["rust".to_string()];
        let (s1, s2) = (
            score(&once, &q, now).unwrap_or(0.0),
            score(&many, &q, now).unwrap_or(0.0),
        );
        assert!((s2 - s1 - 0.2).abs() < 1e-9, "{s1} {s2}");
    }
}
