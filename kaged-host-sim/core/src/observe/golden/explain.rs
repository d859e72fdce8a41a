//! What changed between a golden file and a run, said the way a reader
//! looks for it: the step, the message (its direction and what it is) and
//! the JSON path of each changed value, before the unified diff.
//!
//! Messages are aligned by their shape (direction, kind, method), so a
//! message the run added or lost shows as such instead of shifting every
//! later comparison.

use serde_json::Value;
use similar::{capture_diff_slices, Algorithm, DiffTag};

use super::markers::matches;
use crate::normal::NormalTranscript;

/// The most changes listed (the unified diff below shows everything).
const MAX_CHANGES: usize = 20;
/// A value shown in a change is cut to this many characters.
const SHOWN_CHARS: usize = 80;

/// The change list: one paragraph per differing message.
pub(super) fn explain(want: &[Value], actual: &NormalTranscript) -> String {
    let got = actual.to_values();
    let shape = |vs: &[Value]| vs.iter().map(shape_of).collect::<Vec<_>>();
    let (ws, gs) = (shape(want), shape(&got));
    let mut out: Vec<String> = Vec::new();
    let mut add = |s: String| {
        if out.len() < MAX_CHANGES {
            out.push(s);
        } else if out.len() == MAX_CHANGES {
            out.push("… (more below)".to_string());
        }
    };
    for op in capture_diff_slices(Algorithm::Myers, &ws, &gs) {
        let (tag, old, new) = op.as_tag_tuple();
        if tag == DiffTag::Equal {
            for (o, n) in old.zip(new) {
                let (w, g) = (&want[o], &got[n]);
                if !matches(w, g) {
                    let mut changes = Vec::new();
                    paths(w, g, "$".to_string(), &mut changes);
                    add(format!(
                        "{}:\n{}",
                        place(&got, actual, n),
                        changes
                            .iter()
                            .map(|c| format!("  {c}\n"))
                            .collect::<String>()
                            .trim_end()
                    ));
                }
            }
            continue;
        }
        // Lost (golden only), then added (this run only).
        let why = if tag == DiffTag::Delete {
            " (the run sent no such message here)"
        } else {
            ""
        };
        let at = new.start;
        for o in old {
            add(format!(
                "{}: only in the golden file{why}",
                place_golden(&want[o], &got, actual, at)
            ));
        }
        for n in new {
            add(format!("{}: only in this run", place(&got, actual, n)));
        }
    }
    out.join("\n")
}

/// What a message is, for alignment: direction, kind and method.
fn shape_of(v: &Value) -> String {
    let dir = v.get("dir").and_then(Value::as_str).unwrap_or("?");
    let msg = v.get("msg").unwrap_or(v);
    match (msg.get("method").and_then(Value::as_str), msg.get("id")) {
        (Some(m), Some(_)) => format!("{dir} request {m}"),
        (Some(m), None) => format!("{dir} notification {m}"),
        (None, _) => format!("{dir} answer"),
    }
}

/// "step 3 (`py-notes.recall`), message 9 (plugin>host: the answer to
/// host request 5, `py-notes.recall`)".
fn place(got: &[Value], actual: &NormalTranscript, i: usize) -> String {
    let step = actual.steps.get(i).copied();
    format!(
        "{}, message {} ({})",
        step_label(got, actual, step, i),
        i + 1,
        describe(&got[i], got, i)
    )
}

/// A golden-only message, placed at the step of the run's message where
/// it would have been.
fn place_golden(w: &Value, got: &[Value], actual: &NormalTranscript, at: usize) -> String {
    let step = actual
        .steps
        .get(at)
        .or_else(|| actual.steps.last())
        .copied();
    format!(
        "{}, a message ({})",
        step_label(got, actual, step, at),
        describe(w, &[], 0)
    )
}

/// "the handshake", "after `initialized`" (what the plugin sent once told
/// the handshake is over, before the first step), or "step N (`METHOD`)"
/// named by the first thing the host sent in it; `at` is the message's
/// place in the run.
fn step_label(got: &[Value], actual: &NormalTranscript, step: Option<usize>, at: usize) -> String {
    let Some(step) = step else {
        return "after the last step".to_string();
    };
    if step == 0 {
        let initialized = got.iter().position(|v| {
            v.get("dir").and_then(Value::as_str) == Some("host>plugin")
                && v["msg"].get("method").and_then(Value::as_str) == Some("initialized")
        });
        return match initialized {
            Some(p) if p < at => "after `initialized`".to_string(),
            _ => "the handshake".to_string(),
        };
    }
    let first = actual
        .steps
        .iter()
        .position(|&s| s == step)
        .and_then(|i| {
            got[i..]
                .iter()
                .zip(&actual.steps[i..])
                .take_while(|(_, &s)| s == step)
                .find(|(v, _)| v.get("dir").and_then(Value::as_str) == Some("host>plugin"))
        })
        .and_then(|(v, _)| v["msg"].get("method").and_then(Value::as_str));
    match first {
        Some(m) => format!("step {step} (`{m}`)"),
        None => format!("step {step}"),
    }
}

/// "host>plugin: request 5, `py-notes.recall`", "plugin>host: the answer
/// to host request 5, `py-notes.recall`".
fn describe(v: &Value, all: &[Value], i: usize) -> String {
    let dir = v.get("dir").and_then(Value::as_str).unwrap_or("?");
    let msg = v.get("msg").unwrap_or(v);
    let id = msg.get("id").map(Value::to_string);
    match (msg.get("method").and_then(Value::as_str), id) {
        (Some(m), Some(id)) => format!("{dir}: request {id}, `{m}`"),
        (Some(m), None) => format!("{dir}: notification `{m}`"),
        (None, Some(id)) => {
            // The request it answers: the latest one before it with its id,
            // sent the other way.
            let method = all[..i.min(all.len())].iter().rev().find_map(|r| {
                let rm = r.get("msg")?;
                (r.get("dir").and_then(Value::as_str) != Some(dir)
                    && rm.get("id").map(Value::to_string).as_deref() == Some(id.as_str()))
                .then(|| rm.get("method").and_then(Value::as_str))
                .flatten()
            });
            let from = if dir == "plugin>host" {
                "host"
            } else {
                "plugin"
            };
            match method {
                Some(m) => format!("{dir}: the answer to {from} request {id}, `{m}`"),
                None => format!("{dir}: the answer to {from} request {id}"),
            }
        }
        (None, None) => format!("{dir}: a message"),
    }
}

fn shown(v: &Value) -> String {
    kaged_plugin_protocol::text::cut(&v.to_string(), SHOWN_CHARS)
}

/// Every place where `actual` breaks `golden`, as `PATH: golden X, actual
/// Y` (markers in `golden` match as they do in the comparison).
fn paths(golden: &Value, actual: &Value, at: String, out: &mut Vec<String>) {
    if matches(golden, actual) {
        return;
    }
    match (golden, actual) {
        (Value::Object(g), Value::Object(a)) => {
            let mut keys: Vec<&String> = g.keys().chain(a.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let path = format!("{at}.{k}");
                match (g.get(k), a.get(k)) {
                    (Some(gv), Some(av)) => paths(gv, av, path, out),
                    (Some(gv), None) => {
                        out.push(format!("{path}: only in the golden file ({})", shown(gv)))
                    }
                    (None, Some(av)) => {
                        out.push(format!("{path}: only in this run ({})", shown(av)))
                    }
                    (None, None) => {}
                }
            }
        }
        (Value::Array(g), Value::Array(a)) => {
            for (i, (gv, av)) in g.iter().zip(a).enumerate() {
                paths(gv, av, format!("{at}[{i}]"), out);
            }
            if g.len() != a.len() {
                out.push(format!(
                    "{at}: {} item(s) in the golden file, {} in this run",
                    g.len(),
                    a.len()
                ));
            }
        }
        _ => out.push(format!(
            "{at}: golden {}, actual {}",
            shown(golden),
            shown(actual)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn transcript(messages: Vec<Value>, steps: Vec<usize>) -> NormalTranscript {
        NormalTranscript {
            messages,
            steps,
            stderr: None,
        }
    }

    #[test]
    fn a_changed_value_is_named_by_step_message_and_path() {
        let call =
            json!({"dir": "host>plugin", "msg": {"id": 1, "method": "notes.recall", "params": {}}});
        let answer = |text: &str| json!({"dir": "plugin>host", "msg": {"id": 1, "result": {"notes": [{"text": text}]}}});
        let actual = transcript(vec![call.clone(), answer("Wednesday")], vec![1, 1]);
        let text = explain(&[call, answer("Tuesday")], &actual);
        assert_eq!(
            text,
            "step 1 (`notes.recall`), message 2 (plugin>host: the answer to host request 1, `notes.recall`):\n  \
             $.msg.result.notes[0].text: golden \"Tuesday\", actual \"Wednesday\""
        );
    }

    #[test]
    fn a_message_the_run_added_or_lost_is_said_so_and_the_rest_still_lines_up() {
        let m = |dir: &str, method: &str| json!({"dir": dir, "msg": {"method": method, "params": {"n": 1}}});
        let want = [m("plugin>host", "a.one"), m("plugin>host", "a.two")];
        let actual = transcript(
            vec![
                m("plugin>host", "a.new"),
                m("plugin>host", "a.one"),
                m("plugin>host", "a.two"),
            ],
            vec![0, 0, 0],
        );
        assert_eq!(
            explain(&want, &actual),
            "the handshake, message 1 (plugin>host: notification `a.new`): only in this run"
        );
        // What the plugin sends once told `initialized` is its own part.
        let told = json!({"dir": "host>plugin", "msg": {"method": "initialized", "params": {}}});
        let after = transcript(
            vec![
                told.clone(),
                m("plugin>host", "a.new"),
                m("plugin>host", "a.one"),
            ],
            vec![0, 0, 0],
        );
        assert_eq!(
            explain(&[told, m("plugin>host", "a.one")], &after),
            "after `initialized`, message 2 (plugin>host: notification `a.new`): only in this run"
        );
        let lost = transcript(vec![m("plugin>host", "a.two")], vec![2]);
        assert_eq!(
            explain(&want, &lost),
            "step 2, a message (plugin>host: notification `a.one`): only in the golden file (the run sent no such message here)"
        );
    }
}
