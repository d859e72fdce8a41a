//! The tools' argument and result types. The argument types' field docs
//! become the `parameters_schema` descriptions the model reads.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::entry::Entry;

/// Largest `content` accepted by `retain`, in bytes.
pub const MAX_CONTENT_BYTES: usize = 256 * 1024;
/// `recall`'s default `limit`.
pub const DEFAULT_LIMIT: u32 = 10;
/// The domain error code of `forget` for an id that names no entry.
pub const ENTRY_NOT_FOUND: i64 = -32010;

/// Arguments of `retain`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Retain {
    /// The information to remember, as markdown. One fact per entry recalls best.
    #[schemars(length(min = 1, max = 65536), regex(pattern = r"\S"))]
    pub content: String,
    /// Where it came from or why it matters (optional).
    #[serde(default)]
    pub context: Option<String>,
    /// Labels to find it again (e.g. `deploy`, `preferences`).
    #[serde(default)]
    #[schemars(inner(
        length(min = 1, max = 64),
        regex(pattern = r"^[^\x00-\x1f]*[^\s\x00-\x1f][^\x00-\x1f]*$")
    ))]
    pub tags: Vec<String>,
}

/// `retain`'s answer.
#[derive(Debug, Serialize)]
pub struct Retained {
    /// The new entry's id (for `forget`).
    pub id: String,
    /// When it was stored (RFC 3339).
    pub created_at: String,
    /// Its tags, the configured ones included.
    pub tags: Vec<String>,
    /// Its file, relative to the store root.
    pub file: String,
}

/// Arguments of `recall`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Recall {
    /// Words to look for; entries matching more of them rank first, newer
    /// entries break ties. `*` lists the newest entries.
    pub query: String,
    /// Only entries carrying every one of these tags.
    #[serde(default)]
    #[schemars(inner(
        length(min = 1, max = 64),
        regex(pattern = r"^[^\x00-\x1f]*[^\s\x00-\x1f][^\x00-\x1f]*$")
    ))]
    pub tags: Vec<String>,
    /// How many entries to return at most (default 10).
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u32>,
}

/// One recalled entry.
#[derive(Debug, Serialize)]
pub struct Hit {
    /// The entry id.
    pub id: String,
    /// The remembered text.
    pub content: String,
    /// Its tags.
    pub tags: Vec<String>,
    /// Its context, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// `tool`, `transcript` or `compaction`.
    pub source: &'static str,
    /// When it was stored (RFC 3339).
    pub created_at: String,
    /// Relevance: term coverage plus a recency bonus (higher is better).
    pub score: f64,
}

impl Hit {
    /// A ranked entry as answered.
    pub fn new(e: Entry, score: f64) -> Hit {
        Hit {
            id: e.id,
            content: e.content,
            tags: e.tags,
            context: e.context,
            source: e.source.as_str(),
            created_at: e.created_at,
            score,
        }
    }
}

/// `recall`'s answer.
#[derive(Debug, Serialize)]
pub struct Recalled {
    /// The matching entries, best first.
    pub entries: Vec<Hit>,
}

/// Arguments of `forget`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Forget {
    /// The id of the entry to delete, as returned by `retain` or `recall`.
    #[schemars(extend("pattern" = "^[0-9]{8}T[0-9]{9}Z-[0-9]{4}$", "examples" = ["20261122T211030123Z-0000"]))]
    pub id: String,
}

/// `forget`'s answer.
#[derive(Debug, Serialize)]
pub struct Forgotten {
    /// The deleted entry's id.
    pub id: String,
    /// Always true (an unknown id is an error).
    pub forgotten: bool,
}

/// Arguments of `list_tags` (none).
// The explicit empty `properties` makes the SDK's argument validator name
// an unexpected argument (without it the error says only "False schema
// does not allow 1", at the root).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("properties" = {}))]
pub struct ListTags {}

/// One tag and how many entries carry it.
#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct TagCount {
    /// The tag.
    pub tag: String,
    /// Entries carrying it.
    pub count: usize,
}

/// `list_tags`'s answer.
#[derive(Debug, Serialize)]
pub struct Tags {
    /// Tags, most used first (then by name).
    pub tags: Vec<TagCount>,
    /// Entries in this memory.
    pub entries: usize,
}

/// Count the tags of `entries`, most used first, then by name.
pub fn count_tags(entries: &[Entry]) -> Vec<TagCount> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for e in entries {
        let mut seen: Vec<&str> = Vec::new();
        for t in &e.tags {
            if !seen.contains(&t.as_str()) {
                seen.push(t);
                *counts.entry(t).or_default() += 1;
            }
        }
    }
    let mut out: Vec<TagCount> = counts
        .into_iter()
        .map(|(tag, count)| TagCount {
            tag: tag.to_string(),
            count,
        })
        .collect();
    out.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.tag.cmp(&b.tag)));
    out
}

/// Merge tag lists, keeping the first occurrence of each.
pub fn merge_tags<'a>(lists: impl IntoIterator<Item = &'a [String]>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in lists.into_iter().flatten() {
        let t = t.trim();
        if !out.iter().any(|o| o == t) {
            out.push(t.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::Source;

    #[test]
    fn tags_are_counted_once_per_entry_and_sorted() {
        let e = |tags: &[&str]| Entry {
            id: String::new(),
            created_at: String::new(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            context: None,
            source: Source::Tool,
            content: String::new(),
        };
        let counts = count_tags(&[e(&["b", "a", "a"]), e(&["b"]), e(&[])]);
        let flat: Vec<(&str, usize)> = counts.iter().map(|c| (c.tag.as_str(), c.count)).collect();
        assert_eq!(flat, [("b", 2), ("a", 1)]);
    }

    #[test]
    fn merged_tags_keep_order_and_drop_repeats() {
        let a = vec!["x".to_string(), " y ".to_string()];
        let b = vec!["y".to_string(), "z".to_string()];
        assert_eq!(merge_tags([a.as_slice(), b.as_slice()]), ["x", "y", "z"]);
    }

    #[test]
    fn an_unexpected_list_tags_argument_is_named() {
        let schema = kaged_plugin_sdk::tool::schema_for::<ListTags>();
        let v = kaged_plugin_sdk::tool::ArgsValidator::new(&schema);
        let e = v
            .validate(&serde_json::json!({"surprise": 1}))
            .expect_err("refused");
        assert!(e.to_string().contains("surprise"), "{e} / {schema}");
    }

    #[test]
    fn schemas_describe_the_fields() {
        let s = kaged_plugin_sdk::tool::schema_for::<Recall>();
        assert_eq!(s["required"], serde_json::json!(["query"]));
        assert!(s["properties"]["query"]["description"]
            .as_str()
            .is_some_and(|d| d.contains("Words")));
        assert_eq!(s["properties"]["limit"]["maximum"], 100);
    }
}
