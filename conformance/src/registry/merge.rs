//! Many JSON reports (`run --report json=FILE`, one per plugin and
//! version) as one registry: a row per plugin and version, a cell per
//! case group (the id before its first `.`), certified or not under the
//! policy (passing or not without one), the kind of each failure, and what
//! changed since the previous merge, regressions first. The pages are
//! [`super::page`]'s.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Why the reports cannot be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// A file cannot be read.
    #[error("cannot read {path}")]
    Read {
        /// The file.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A file is not a kaged-conformance JSON report.
    #[error("{path} is not a kaged-conformance JSON report: {message}")]
    NotAReport {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// No report was given.
    #[error("no report to merge")]
    Empty,
}

/// One case group of one plugin: its counts and the kinds of its failures.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cell {
    /// Passed cases.
    pub passed: u32,
    /// Failed cases.
    pub failed: u32,
    /// Warned cases (SHOULD, or excused by a baseline).
    pub warned: u32,
    /// Skipped cases.
    pub skipped: u32,
    /// The failure kinds, each once, sorted.
    pub kinds: Vec<String>,
}

/// What changed for a plugin since the previous merge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// It was good and is not now.
    Regressed,
    /// Not in the previous merge.
    New,
    /// Bad before, good now.
    Fixed,
    /// Another version than before, as good (or as bad) as the last one.
    Updated,
    /// As before.
    Same,
}

/// One plugin and version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// `name-version`.
    pub key: String,
    /// The plugin's name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// `certified` / `not_certified` under a policy; `passing` / `failing`
    /// without one.
    pub outcome: String,
    /// Whether the outcome is good (certified, or passing).
    pub good: bool,
    /// The policy's name, when there was one.
    pub policy: Option<String>,
    /// How the plugin ran (`bwrap`, `unavailable`, `off`).
    pub cage: String,
    /// Counts and kinds by case group.
    pub groups: BTreeMap<String, Cell>,
    /// Each failed case: `id (kind)`.
    pub failures: Vec<String>,
    /// The report, as copied beside the page (`reports/KEY.json`).
    pub report: String,
    /// Since the previous merge.
    pub change: Change,
    /// The version the previous merge is compared with: this one, else
    /// the plugin's newest there; none when the plugin is new.
    #[serde(default)]
    pub previous: Option<String>,
}

/// The merged registry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Merged {
    /// `kaged-registry/1`.
    pub schema: String,
    /// Every case group seen, sorted: the page's columns.
    pub groups: Vec<String>,
    /// The rows, regressions first, then new, fixed and the rest, each by
    /// name and version.
    pub rows: Vec<Row>,
}

/// The index's schema name.
pub const INDEX_SCHEMA: &str = "kaged-registry/1";

fn group_of(id: &str) -> String {
    id.split(['.', '[']).next().unwrap_or(id).to_string()
}

/// One report file as a row (its change not yet known).
fn row_of(v: &Value) -> Result<Row, String> {
    let s = |p: &str| v.pointer(p).and_then(Value::as_str).map(str::to_string);
    let name = s("/plugin/name").ok_or("no plugin.name")?;
    let version = s("/plugin/version").ok_or("no plugin.version")?;
    let cases = v.get("cases").and_then(Value::as_array).ok_or("no cases")?;
    let mut groups: BTreeMap<String, Cell> = BTreeMap::new();
    let mut failures = Vec::new();
    for c in cases {
        let id = c
            .get("id")
            .and_then(Value::as_str)
            .ok_or("a case without an id")?;
        let cell = groups.entry(group_of(id)).or_default();
        let kind = c.get("kind").and_then(Value::as_str).map(str::to_string);
        match c.get("status").and_then(Value::as_str) {
            Some("pass") => cell.passed += 1,
            Some("fail") => {
                cell.failed += 1;
                let k = kind.clone().unwrap_or_else(|| "failure".into());
                failures.push(format!("{id} ({k})"));
                if !cell.kinds.contains(&k) {
                    cell.kinds.push(k);
                    cell.kinds.sort();
                }
            }
            Some("warn") => cell.warned += 1,
            Some("skip") => cell.skipped += 1,
            other => return Err(format!("case {id}: status {other:?}")),
        }
    }
    let failed = v
        .pointer("/summary/failed")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let (outcome, good, policy) = match v.get("certification") {
        Some(c) => {
            let outcome = c
                .get("outcome")
                .and_then(Value::as_str)
                .unwrap_or("not_certified");
            let policy = c
                .pointer("/policy/name")
                .and_then(Value::as_str)
                .map(str::to_string);
            (outcome.to_string(), outcome == "certified", policy)
        }
        None if failed == 0 => ("passing".to_string(), true, None),
        None => ("failing".to_string(), false, None),
    };
    let key = format!("{name}-{version}");
    Ok(Row {
        report: format!("reports/{key}.json"),
        key,
        name,
        version,
        outcome,
        good,
        policy,
        cage: s("/cage").unwrap_or_else(|| "unknown".into()),
        groups,
        failures,
        change: Change::New,
        previous: None,
    })
}

/// A version's order among a plugin's versions: semver's, and a version
/// that is not semver older than any that is, those by their dotted
/// numbers compared as numbers, the rest as text (`0.10` after `0.9.1`).
/// What "newest" means for the comparison with the previous merge and
/// for the badges.
pub(crate) fn version_order(v: &str) -> (Option<semver::Version>, Vec<(u64, String)>) {
    let parts = v
        .split(['.', '-', '+'])
        .map(|p| (p.parse().unwrap_or(0), p.to_string()))
        .collect();
    (semver::Version::parse(v).ok(), parts)
}

/// The plugin's row in the previous merge that `row` is compared with:
/// the same version, else the plugin's newest version there
/// ([`version_order`]).
fn row_before<'a>(previous: &'a Merged, row: &Row) -> Option<&'a Row> {
    previous.rows.iter().find(|r| r.key == row.key).or_else(|| {
        previous
            .rows
            .iter()
            .filter(|r| r.name == row.name)
            .max_by_key(|r| version_order(&r.version))
    })
}

/// What changed from `before` (the plugin's row in the previous merge) to
/// `row`.
fn change_of(before: Option<&Row>, row: &Row) -> Change {
    match before {
        None => Change::New,
        Some(b) if b.good && !row.good => Change::Regressed,
        Some(b) if !b.good && row.good => Change::Fixed,
        Some(b) if b.version != row.version => Change::Updated,
        Some(_) => Change::Same,
    }
}

/// Merge the reports at `paths`, comparing with `previous` (the
/// `index.json` of the last merge, when there is one). Answers the merged
/// registry and each report's text by key (to copy beside the page).
pub fn merge(
    paths: &[PathBuf],
    previous: Option<&Merged>,
) -> Result<(Merged, BTreeMap<String, String>), MergeError> {
    if paths.is_empty() {
        return Err(MergeError::Empty);
    }
    let mut rows: Vec<Row> = Vec::new();
    let mut texts = BTreeMap::new();
    for path in paths {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| MergeError::Read {
            path: shown.clone(),
            source,
        })?;
        let not = |message: String| MergeError::NotAReport {
            path: shown.clone(),
            message,
        };
        let v: Value = serde_json::from_str(&text).map_err(|e| not(e.to_string()))?;
        let row = row_of(&v).map_err(not)?;
        if rows.iter().any(|r| r.key == row.key) {
            return Err(not(format!("{} is in another report too", row.key)));
        }
        texts.insert(row.key.clone(), text);
        rows.push(row);
    }
    for row in &mut rows {
        let before = previous.and_then(|p| row_before(p, row));
        row.previous = before.map(|b| b.version.clone());
        row.change = change_of(before, row);
    }
    rows.sort_by(|a, b| (a.change, &a.name, &a.version).cmp(&(b.change, &b.name, &b.version)));
    let mut groups: Vec<String> = rows.iter().flat_map(|r| r.groups.keys().cloned()).collect();
    groups.sort();
    groups.dedup();
    Ok((
        Merged {
            schema: INDEX_SCHEMA.to_string(),
            groups,
            rows,
        },
        texts,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, version: &str, good: bool) -> Row {
        Row {
            key: format!("{name}-{version}"),
            name: name.into(),
            version: version.into(),
            outcome: if good { "certified" } else { "not_certified" }.into(),
            good,
            policy: None,
            cage: "bwrap".into(),
            groups: BTreeMap::new(),
            failures: Vec::new(),
            report: String::new(),
            change: Change::Same,
            previous: None,
        }
    }

    fn merged(rows: Vec<Row>) -> Merged {
        Merged {
            schema: INDEX_SCHEMA.into(),
            groups: Vec::new(),
            rows,
        }
    }

    #[test]
    fn a_new_version_is_compared_with_the_newest_before_in_semver_order() {
        let before = merged(vec![
            row("a", "0.10.0", true),
            row("a", "0.9.0", false),
            row("a", "not-semver", false),
        ]);
        let now = row("a", "0.11.0", false);
        let b = row_before(&before, &now).map(|r| r.version.as_str());
        assert_eq!(b, Some("0.10.0"));
        assert_eq!(
            change_of(row_before(&before, &now), &now),
            Change::Regressed
        );
        // The same version, when the previous merge has it.
        let again = row("a", "0.9.0", false);
        assert_eq!(row_before(&before, &again).map(|r| r.good), Some(false));
        assert_eq!(change_of(row_before(&before, &again), &again), Change::Same);
    }

    #[test]
    fn versions_order_by_semver_and_the_rest_by_their_numbers() {
        let newer = |a: &str, b: &str| version_order(a) > version_order(b);
        assert!(newer("0.10.0", "0.9.1"));
        assert!(newer("1.0.0", "1.0.0-rc.1"));
        assert!(newer("0.1.0", "2.0"), "not semver: older than any that is");
        assert!(newer("0.10", "0.9"), "among versions that are not semver");
    }

    #[test]
    fn each_change_is_named_by_outcome_then_version() {
        let good = row("a", "0.1.0", true);
        let bad = row("a", "0.1.0", false);
        let cases = [
            (None, row("a", "0.1.0", true), Change::New),
            (Some(&good), row("a", "0.2.0", false), Change::Regressed),
            (Some(&bad), row("a", "0.2.0", true), Change::Fixed),
            (Some(&good), row("a", "0.2.0", true), Change::Updated),
            (Some(&bad), row("a", "0.2.0", false), Change::Updated),
            (Some(&good), row("a", "0.1.0", true), Change::Same),
        ];
        for (before, now, want) in cases {
            assert_eq!(change_of(before, &now), want, "{before:?} -> {now:?}");
        }
        // Regressions sort first, the unchanged last.
        let mut all = [
            Change::Same,
            Change::Updated,
            Change::Fixed,
            Change::New,
            Change::Regressed,
        ];
        all.sort();
        assert_eq!(all[0], Change::Regressed);
        assert_eq!(all[4], Change::Same);
    }
}
