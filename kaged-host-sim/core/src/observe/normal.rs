//! The normal form of a wire transcript: the same exchange gives the same
//! bytes run after run, so transcripts can be snapshot-tested (insta from
//! Rust, golden files from any language's CI). The rules (also in
//! `docs/protocol.md` § Normal-form transcripts):
//!
//! 1. **Steps.** The transcript is cut into steps at the marks the driver
//!    set ([`Transcript::mark_step`](super::transcript::Transcript::mark_step):
//!    one per script step); with no marks it is one step. A message belongs
//!    to the step during which it was recorded.
//! 2. **Order within a step.** First what the host sent, in the order it
//!    sent it, each request directly followed by the plugin's answer (the
//!    first answer with its id, wherever it arrived); then what the plugin
//!    sent on its own in that step (notifications, its requests each
//!    directly followed by the host's answer, answers to nothing), sorted
//!    by their normalised text (stable). Nothing depends on how the host's
//!    and the plugin's messages interleaved, or on the order in which a
//!    concurrent plugin finished its calls. A message the plugin sends
//!    after answering a step's last request may fall into the next step.
//! 3. **Ids.** Renumbered per direction in order of first appearance in
//!    that order, from 1: the host's requests 1, 2, ...; the plugin's own
//!    requests 1, 2, ...; an answer carries its request's new id, so
//!    pairing is kept. An answer to no request keeps its id (`null` too).
//! 4. **Values.** `ts`, `duration_ms`, `pid` and `cage_id` members are
//!    removed; `request_id` and `daemon_version` values become
//!    `"[request_id]"` / `"[daemon_version]"`; every string containing
//!    one of the [`NormalOptions::paths`] (the plugin directory, the
//!    temporary directory, HOME) has it replaced by its placeholder
//!    (`[plugin_dir]`, `[tmp]`, `[home]`), longest path first.
//! 5. **Stderr** is left out, or with [`NormalOptions::keep_stderr`] kept
//!    as a separate list in arrival order after the messages.
//! 6. **Keys** of every object are sorted.
//!
//! ```
//! use kaged_host_core::normal::{normal_form, NormalOptions};
//! use kaged_host_core::{Direction, Transcript};
//! let t = Transcript::memory();
//! t.record(Direction::HostToPlugin, br#"{"jsonrpc":"2.0","id":7,"method":"a.b"}"#);
//! t.record(Direction::HostToPlugin, br#"{"jsonrpc":"2.0","id":8,"method":"a.b"}"#);
//! // A concurrent plugin answers the second call first.
//! t.record(Direction::PluginToHost, br#"{"jsonrpc":"2.0","id":8,"result":2}"#);
//! t.record(Direction::PluginToHost, br#"{"jsonrpc":"2.0","id":7,"result":1}"#);
//! let n = normal_form(&t.records(), &t.steps(), &NormalOptions::default());
//! let lines: Vec<String> = n.lines().collect();
//! assert_eq!(lines[0], r#"{"dir":"host>plugin","msg":{"id":1,"jsonrpc":"2.0","method":"a.b"}}"#);
//! assert_eq!(lines[1], r#"{"dir":"plugin>host","msg":{"id":1,"jsonrpc":"2.0","result":1}}"#);
//! assert_eq!(lines[3], r#"{"dir":"plugin>host","msg":{"id":2,"jsonrpc":"2.0","result":2}}"#);
//! ```

use std::collections::HashMap;
use std::path::Path;

use serde_json::{json, Map, Value};

use super::transcript::{Direction, Transcript, TranscriptRecord};

mod item;
use item::{kind, Item, Kind};

/// Members removed everywhere.
pub const REMOVED_KEYS: [&str; 4] = ["ts", "duration_ms", "pid", "cage_id"];
/// Members whose values become `"[key]"`.
pub const PLACEHOLDER_KEYS: [&str; 2] = ["request_id", "daemon_version"];

/// The form a transcript file is written in (`--transcript-form`).
///
/// ```
/// use kaged_host_core::normal::TranscriptForm;
/// assert_eq!("normal".parse::<TranscriptForm>(), Ok(TranscriptForm::Normal));
/// assert!("pretty".parse::<TranscriptForm>().unwrap_err().contains("raw, normal"));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TranscriptForm {
    /// Every record as it happens (ADDENDUM §9), stderr included.
    #[default]
    Raw,
    /// The normal form: the same bytes run after run.
    Normal,
}

impl std::str::FromStr for TranscriptForm {
    type Err = String;

    fn from_str(s: &str) -> Result<TranscriptForm, String> {
        match s {
            "raw" => Ok(TranscriptForm::Raw),
            "normal" => Ok(TranscriptForm::Normal),
            other => Err(format!(
                "unknown transcript form {other:?} (expected one of: raw, normal)"
            )),
        }
    }
}

impl std::fmt::Display for TranscriptForm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TranscriptForm::Raw => "raw",
            TranscriptForm::Normal => "normal",
        })
    }
}

/// How to normalise.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NormalOptions {
    /// Keep stderr lines, as a separate list after the messages.
    pub keep_stderr: bool,
    /// Absolute paths and their placeholders, e.g. (`/home/me`, `[home]`).
    pub paths: Vec<(String, String)>,
}

impl NormalOptions {
    /// The placeholders of a run of the plugin in `plugin_dir`: the
    /// directory (as given and canonical) is `[plugin_dir]`, the temporary
    /// directory `[tmp]`, `$HOME` `[home]`.
    pub fn for_plugin(plugin_dir: &Path) -> NormalOptions {
        let mut paths = Vec::new();
        let mut add = |p: &Path, name: &str| {
            let s = p.display().to_string();
            if p.is_absolute() && s.len() > 1 && !paths.iter().any(|(q, _)| q == &s) {
                paths.push((s, name.to_string()));
            }
        };
        if let Ok(abs) = std::path::absolute(plugin_dir) {
            add(&abs, "[plugin_dir]");
        }
        if let Ok(canonical) = plugin_dir.canonicalize() {
            add(&canonical, "[plugin_dir]");
        }
        let tmp = std::env::temp_dir();
        add(&tmp, "[tmp]");
        if let Ok(canonical) = tmp.canonicalize() {
            add(&canonical, "[tmp]");
        }
        if let Some(home) = std::env::var_os("HOME") {
            add(Path::new(&home), "[home]");
        }
        NormalOptions {
            keep_stderr: false,
            paths,
        }
    }

    /// The same, with the paths longest first: a path inside another one
    /// (the plugin directory in the temporary one) is replaced first.
    fn longest_first(&self) -> NormalOptions {
        let mut sorted = self.clone();
        sorted
            .paths
            .sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
        sorted
    }

    /// The same, keeping stderr.
    pub fn with_stderr(mut self) -> NormalOptions {
        self.keep_stderr = true;
        self
    }
}

/// A normal-form transcript.
#[derive(Debug, Clone, PartialEq)]
pub struct NormalTranscript {
    /// The messages, each `{"dir", "msg"}`.
    pub messages: Vec<Value>,
    /// The step of each message (same length as `messages`): 0 before the
    /// first step began (the handshake), then 1, 2, … (not written to a
    /// golden file; a golden diff names the step of each change).
    pub steps: Vec<usize>,
    /// The stderr lines, when kept.
    pub stderr: Option<Vec<String>>,
}

impl NormalTranscript {
    /// One JSON line per message, then (when kept) one
    /// `{"dir": "plugin!stderr", "msg": line}` per stderr line.
    pub fn lines(&self) -> impl Iterator<Item = String> + '_ {
        let stderr = self
            .stderr
            .iter()
            .flatten()
            .map(|l| json!({"dir": Direction::PluginStderr.as_str(), "msg": l}).to_string());
        self.messages.iter().map(Value::to_string).chain(stderr)
    }

    /// [`NormalTranscript::lines`], each ended by `\n`.
    pub fn to_jsonl(&self) -> String {
        self.lines().map(|l| l + "\n").collect()
    }

    /// Every line as a JSON value (for `insta::assert_json_snapshot!`).
    pub fn to_values(&self) -> Vec<Value> {
        self.lines()
            .filter_map(|l| serde_json::from_str(&l).ok())
            .collect()
    }
}

/// The normal form of `records` cut at `steps` (the `seq` after which
/// each step begins; see [`Transcript::steps`](super::transcript::Transcript::steps)).
pub fn normal_form(
    records: &[TranscriptRecord],
    steps: &[u64],
    opts: &NormalOptions,
) -> NormalTranscript {
    let opts = &opts.longest_first();
    let wire: Vec<&TranscriptRecord> = records
        .iter()
        .filter(|r| r.dir != Direction::PluginStderr)
        .collect();
    // Pair each request with the first later answer of its id, coming the
    // other way.
    let mut answered: Vec<bool> = vec![false; wire.len()];
    let mut items: Vec<(usize, Item)> = Vec::new();
    for (i, r) in wire.iter().enumerate() {
        let k = kind(r);
        if k == Kind::Answer && answered[i] {
            continue;
        }
        let mut answer = None;
        if matches!(k, Kind::HostRequest | Kind::PluginRequest) {
            let j = (i + 1..wire.len()).find(|&j| {
                !answered[j]
                    && wire[j].dir != r.dir
                    && kind(wire[j]) == Kind::Answer
                    && wire[j].msg.get("id") == r.msg.get("id")
            });
            if let Some(j) = j {
                answered[j] = true;
                answer = Some(wire[j]);
            }
        }
        let step = steps.partition_point(|&s| s < r.seq);
        items.push((
            step,
            Item {
                first: r,
                answer,
                kind: k,
            },
        ));
    }
    // Within a step: the host's items in order, then the plugin's sorted.
    let mut ordered: Vec<(usize, &Item)> = Vec::with_capacity(items.len());
    let last_step = items.iter().map(|(s, _)| *s).max().unwrap_or(0);
    for step in 0..=last_step {
        let in_step = items.iter().filter(|(s, _)| *s == step).map(|(_, it)| it);
        let (host, mut plugin): (Vec<&Item>, Vec<&Item>) =
            in_step.partition(|it| it.first.dir == Direction::HostToPlugin);
        plugin.sort_by_cached_key(|it| sort_key(it, opts));
        ordered.extend(host.into_iter().map(|it| (step, it)));
        ordered.extend(plugin.into_iter().map(|it| (step, it)));
    }
    // Renumber per direction in that order.
    let mut host_ids: HashMap<String, u64> = HashMap::new();
    let mut plugin_ids: HashMap<String, u64> = HashMap::new();
    let mut messages = Vec::new();
    let mut message_steps = Vec::new();
    for (step, it) in ordered {
        let new_id = match it.kind {
            Kind::HostRequest => Some(next(&mut host_ids, &it.first.msg["id"])),
            Kind::PluginRequest => Some(next(&mut plugin_ids, &it.first.msg["id"])),
            _ => None,
        };
        for r in std::iter::once(it.first).chain(it.answer) {
            let mut msg = clean(&r.msg, opts);
            if let (Some(id), Some(obj)) = (new_id, msg.as_object_mut()) {
                obj.insert("id".into(), json!(id));
            }
            messages.push(json!({"dir": r.dir.as_str(), "msg": msg}));
            message_steps.push(step);
        }
    }
    let stderr = opts.keep_stderr.then(|| {
        records
            .iter()
            .filter(|r| r.dir == Direction::PluginStderr)
            .map(|r| {
                let line = r
                    .msg
                    .as_str()
                    .map_or_else(|| r.msg.to_string(), str::to_string);
                replace_paths(&line, opts)
            })
            .collect()
    });
    NormalTranscript {
        messages,
        steps: message_steps,
        stderr,
    }
}

/// The normal form of everything `t` kept in memory, cut at its steps.
pub fn of(t: &Transcript, opts: &NormalOptions) -> NormalTranscript {
    normal_form(&t.records(), &t.steps(), opts)
}

fn next(ids: &mut HashMap<String, u64>, id: &Value) -> u64 {
    let n = ids.len() as u64 + 1;
    *ids.entry(id.to_string()).or_insert(n)
}

/// The sort key of a plugin item: its normalised text without ids.
fn sort_key(it: &Item, opts: &NormalOptions) -> String {
    let strip = |r: &TranscriptRecord| {
        let mut v = clean(&r.msg, opts);
        if let Some(o) = v.as_object_mut() {
            if matches!(it.kind, Kind::PluginRequest) {
                o.remove("id");
            }
        }
        v.to_string()
    };
    let answer = it.answer.map(strip).unwrap_or_default();
    format!("{}\n{answer}", strip(it.first))
}

/// `v` with the value rules applied and keys sorted (`opts.paths` longest
/// first).
fn clean(v: &Value, opts: &NormalOptions) -> Value {
    match v {
        Value::Object(o) => {
            let mut keys: Vec<&String> = o
                .keys()
                .filter(|k| !REMOVED_KEYS.contains(&k.as_str()))
                .collect();
            keys.sort();
            let mut out = Map::new();
            for k in keys {
                let val = &o[k];
                let val = if PLACEHOLDER_KEYS.contains(&k.as_str()) && !val.is_null() {
                    Value::String(format!("[{k}]"))
                } else {
                    clean(val, opts)
                };
                out.insert(k.clone(), val);
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| clean(x, opts)).collect()),
        Value::String(s) => Value::String(replace_paths(s, opts)),
        other => other.clone(),
    }
}

/// `s` with every path of `opts` replaced (`opts.paths` longest first,
/// see [`NormalOptions::longest_first`]).
fn replace_paths(s: &str, opts: &NormalOptions) -> String {
    let mut out = s.to_string();
    for (p, name) in &opts.paths {
        if out.contains(p.as_str()) {
            out = out.replace(p.as_str(), name);
        }
    }
    out
}
