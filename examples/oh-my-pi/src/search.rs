//! `presets.search` ranking: a query's words against a preset's name, tags
//! and description.
//!
//! Per query word: the name equal to it 4, one of the name's `-` parts
//! equal to it 3, the name containing it 2; a tag equal to it 2, a tag
//! containing it 1; a description word equal to it 1, the description
//! containing it 0.5. A preset's score is the sum over the words; presets
//! scoring 0 are left out. Ties: installed first, then by name.

/// The most words of a query that count.
pub const MAX_WORDS: usize = 8;

/// The query's lowercase words (split on anything not a letter, digit or
/// `-`), at most [`MAX_WORDS`], without duplicates.
///
/// ```
/// use kaged_example_oh_my_pi::search::words;
/// assert_eq!(words("Web, TypeScript web!"), ["web", "typescript"]);
/// ```
pub fn words(query: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in query
        .split(|c: char| !(c.is_alphanumeric() || c == '-'))
        .map(|w| w.trim_matches('-').to_lowercase())
        .filter(|w| !w.is_empty())
    {
        if !out.contains(&w) {
            out.push(w);
        }
        if out.len() == MAX_WORDS {
            break;
        }
    }
    out
}

/// The score of one preset for `words` (see the module docs).
///
/// ```
/// use kaged_example_oh_my_pi::search::score;
/// let tags = vec!["web".to_string()];
/// assert_eq!(score(&["web".into()], "web-dev", &tags, "Web apps."), 3.0 + 2.0 + 1.0);
/// assert_eq!(score(&["rust".into()], "web-dev", &tags, "Web apps."), 0.0);
/// ```
pub fn score(words: &[String], name: &str, tags: &[String], description: &str) -> f64 {
    let description = description.to_lowercase();
    let desc_words: Vec<&str> = description
        .split(|c: char| !(c.is_alphanumeric() || c == '-'))
        .filter(|w| !w.is_empty())
        .collect();
    words
        .iter()
        .map(|w| {
            let w = w.as_str();
            let name_score = if name == w {
                4.0
            } else if name.split('-').any(|p| p == w) {
                3.0
            } else if name.contains(w) {
                2.0
            } else {
                0.0
            };
            let tag_score = if tags.iter().any(|t| t == w) {
                2.0
            } else if tags.iter().any(|t| t.contains(w)) {
                1.0
            } else {
                0.0
            };
            let desc_score = if desc_words.contains(&w) {
                1.0
            } else if description.contains(w) {
                0.5
            } else {
                0.0
            };
            name_score + tag_score + desc_score
        })
        .sum()
}
