//! `docs/any-language.md`, the guide for plugins written in any language,
//! stays true:
//! - its snippets are cut from `examples/python-notes` and
//!   `examples/node-notes` (`KAGED_UPDATE_DOCS=1` rewrites them);
//! - every wire line it shows parses as the kit's wire types, each answer
//!   as the answer of the request it pairs with;
//! - its table of session-script keys lists every key of the step types,
//!   and the example script it shows uses every one of them;
//! - both example plugins pass the suite caged, and their golden
//!   transcripts;
//! - the plugin written from the guide's own text (its manifest and its
//!   appendix) passes the suite caged in an empty directory.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use kaged_conformance::report::{render_human, Report, Status};
use kaged_conformance::{run_suite, Options};
use kaged_host_core::cage::CageKind;
use kaged_host_core::golden::{self, Golden};
use kaged_host_core::CageMode;
use kaged_host_engine::scenario::{
    CallStep, CallsStep, Expect, ExpectAuditStep, NotifyStep, Scenario, ScenarioRun, Script,
    SessionStep, WaitStep,
};
use kaged_plugin_protocol::{
    validate_compactor_result, CompactParams, ErrorCode, ExecResult, InitializeParams,
    InitializeResult, InitializedParams, ObserverResult, PluginCallContext, ProjectActivatedParams,
    ProjectDeactivatedParams, QueryResult, RateLimitedParams, ResponsePayload, RpcMessage,
    SchemaResult, SessionIdleParams, SessionStartParams, SessionStartResult, StatusOk,
    StorageParams,
};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

const GUIDE: &str = "docs/any-language.md";
const SNIPPET: &str = "<!-- snippet: ";
const SCRIPT_KEYS: &str = "<!-- script-keys";
/// The example whose manifest and plugin the guide prints in full.
const WHOLE_PLUGIN: (&str, &str) = (
    "examples/python-notes/kaged-plugin.yaml",
    "examples/python-notes/plugin.py",
);
const SCRIPT_EXAMPLE: &str = "examples/python-notes/tests/scenario.yaml";

fn read(rel: &str) -> String {
    std::fs::read_to_string(support::workspace().join(rel))
        .unwrap_or_else(|e| panic!("read {rel}: {e}"))
}

/// A `<!-- snippet: PATH[#REGION] -->` marker and the fenced block after
/// it (line indexes of its opening and closing fence).
struct Snippet {
    source: String,
    region: Option<String>,
    open: usize,
    close: usize,
}

fn snippets(lines: &[&str]) -> Vec<Snippet> {
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(spec) = line
            .strip_prefix(SNIPPET)
            .and_then(|s| s.strip_suffix(" -->"))
        else {
            continue;
        };
        let (source, region) = match spec.split_once('#') {
            Some((s, r)) => (s.to_string(), Some(r.to_string())),
            None => (spec.to_string(), None),
        };
        let open = i + 1;
        assert!(
            lines.get(open).is_some_and(|l| l.starts_with("```")),
            "{GUIDE}:{}: the snippet marker for {spec} is not followed by a fenced block",
            i + 1
        );
        let close = (open + 1..lines.len())
            .find(|&j| lines[j] == "```")
            .unwrap_or_else(|| panic!("{GUIDE}:{}: the block of {spec} is not closed", open + 1));
        out.push(Snippet {
            source,
            region,
            open,
            close,
        });
    }
    out
}

/// The text a snippet shows: the whole file, or the lines between its
/// `guide:begin REGION` and `guide:end REGION` comments, dedented.
fn cut(source: &str, region: Option<&str>) -> String {
    let text = read(source);
    let Some(region) = region else {
        return text.trim_end_matches('\n').to_string();
    };
    let is = |line: &str, what: &str| {
        let t = line.trim();
        (t.starts_with('#') || t.starts_with("//"))
            && t.ends_with(&format!("guide:{what} {region}"))
    };
    let lines: Vec<&str> = text.lines().collect();
    let begin = lines
        .iter()
        .position(|l| is(l, "begin"))
        .unwrap_or_else(|| panic!("{source} has no `guide:begin {region}` comment"));
    let end = (begin..lines.len())
        .find(|&j| is(lines[j], "end"))
        .unwrap_or_else(|| panic!("{source} has no `guide:end {region}` after its begin"));
    let body = &lines[begin + 1..end];
    let indent = body
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    body.iter()
        .map(|l| l.get(indent..).unwrap_or("").trim_end())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The guide with every snippet's block cut afresh from its source.
fn guide_with_fresh_snippets(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = Vec::new();
    let mut next = 0;
    for s in snippets(&lines) {
        out.extend(lines[next..=s.open].iter().map(|l| l.to_string()));
        let fresh = cut(&s.source, s.region.as_deref());
        out.extend(fresh.lines().map(str::to_string));
        next = s.close;
    }
    out.extend(lines[next..].iter().map(|l| l.to_string()));
    out.join("\n") + "\n"
}

/// The body of the snippet showing all of `source`.
fn whole_file_block(text: &str, source: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let s = snippets(&lines)
        .into_iter()
        .find(|s| s.source == source && s.region.is_none())
        .unwrap_or_else(|| panic!("{GUIDE} shows no whole {source}"));
    lines[s.open + 1..s.close].join("\n") + "\n"
}

#[test]
fn the_guide_snippets_are_cut_from_the_examples() {
    let text = read(GUIDE);
    let fresh = guide_with_fresh_snippets(&text);
    if std::env::var_os("KAGED_UPDATE_DOCS").is_some_and(|v| v == "1") {
        std::fs::write(support::workspace().join(GUIDE), &fresh).expect("write the guide");
        return;
    }
    let drifted: Vec<String> = text
        .lines()
        .zip(fresh.lines())
        .enumerate()
        .filter(|(_, (a, b))| a != b)
        .take(5)
        .map(|(i, (a, b))| format!("line {}:\n  guide:   {a}\n  example: {b}", i + 1))
        .collect();
    assert!(
        text == fresh,
        "{GUIDE}'s snippets drifted from the examples (KAGED_UPDATE_DOCS=1 cargo test -p kaged-conformance --test any_language rewrites them):\n{}",
        drifted.join("\n")
    );
}

/// Parse `v` as `T`, and insist it says nothing `T` does not hold (it
/// serializes back to the same JSON).
fn typed<T: DeserializeOwned + Serialize>(what: &str, v: &Value) -> T {
    let t: T = serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{what}: {e}: {v}"));
    let back = serde_json::to_value(&t).expect("serialize");
    assert_eq!(&back, v, "{what}: a field the kit's type does not have");
    t
}

fn check_params(line: &str, method: &str, from_plugin: bool, params: Option<&Value>) {
    let want = |what: &str| -> &Value {
        params.unwrap_or_else(|| panic!("{line}: {method} {what} has params"))
    };
    let no_context = |v: &Value| {
        assert!(
            v.get("_context").is_none(),
            "{line}: {method} carries no _context"
        )
    };
    match method {
        "initialize" => {
            let _: InitializeParams = typed(line, want("always"));
        }
        "initialized" => {
            let _: InitializedParams = typed(line, want("always"));
        }
        "ping" | "shutdown" => assert!(params.is_none(), "{line}: {method} has no params"),
        "config.update" => no_context(want("always")),
        "projects.activated" => {
            let _: ProjectActivatedParams = typed(line, want("always"));
        }
        "projects.deactivated" => {
            let _: ProjectDeactivatedParams = typed(line, want("always"));
        }
        "system.rate_limited" => {
            let _: RateLimitedParams = typed(line, want("always"));
        }
        "kaged.hook.on_session_start" => {
            let _: SessionStartParams = typed(line, want("always"));
        }
        "kaged.hook.on_session_idle" => {
            let _: SessionIdleParams = typed(line, want("always"));
        }
        "kaged.hook.pre_compact" | "kaged.hook.post_compact" => {
            let _: CompactParams = typed(line, want("always"));
        }
        "kaged.storage.schema" => {
            assert!(from_plugin, "{line}: storage calls go plugin → daemon");
            assert_eq!(want("always"), &json!({}), "{line}: schema takes no SQL");
        }
        m if m.starts_with("kaged.storage.") => {
            assert!(from_plugin, "{line}: storage calls go plugin → daemon");
            let _: StorageParams = typed(line, want("always"));
        }
        _ if from_plugin => {
            // A declared notification of the plugin's: any params, no context.
            if let Some(p) = params {
                no_context(p);
            }
        }
        _ => {
            // A tool or custom method: the arguments, and `_context`.
            let ctx = want("a tool call")
                .get("_context")
                .unwrap_or_else(|| panic!("{line}: a call of {method} carries _context"));
            let _: PluginCallContext = typed(line, ctx);
        }
    }
}

fn check_result(line: &str, method: &str, request: &Value, result: &Value) {
    let params = request.get("params").cloned().unwrap_or(Value::Null);
    match method {
        "initialize" => {
            let _: InitializeResult = typed(line, result);
        }
        "ping" | "config.update" | "projects.activated" | "projects.deactivated" => {
            let _: StatusOk = typed(line, result);
        }
        "kaged.hook.on_session_start" => {
            let _: Option<SessionStartResult> = typed(line, result);
        }
        "kaged.hook.on_session_idle" | "kaged.hook.post_compact" => {
            let _: Option<ObserverResult> = typed(line, result);
        }
        "kaged.hook.pre_compact" if params["role"] == "compactor" => {
            let p: CompactParams = typed(line, &params);
            validate_compactor_result(&p, result)
                .unwrap_or_else(|e| panic!("{line}: not a valid compactor result: {e}"));
        }
        "kaged.hook.pre_compact" => {
            let _: Option<ObserverResult> = typed(line, result);
        }
        "kaged.storage.query" => {
            let _: QueryResult = typed(line, result);
        }
        "kaged.storage.exec" => {
            let _: ExecResult = typed(line, result);
        }
        "kaged.storage.schema" => {
            let _: SchemaResult = typed(line, result);
        }
        _ => {}
    }
}

#[test]
fn every_wire_line_of_the_guide_is_a_message_of_the_kit() {
    let text = read(GUIDE);
    let mut in_block = false;
    let mut checked = 0;
    // (sender is the plugin, id) → the request, per block.
    let mut sent: BTreeMap<(bool, String), Value> = BTreeMap::new();
    for (n, raw) in text.lines().enumerate() {
        if raw.starts_with("```") {
            in_block = raw == "```jsonl";
            sent.clear();
            continue;
        }
        if !in_block {
            continue;
        }
        let line = format!("{GUIDE}:{}", n + 1);
        let (from_plugin, json_text) = match (raw.strip_prefix("→ "), raw.strip_prefix("← ")) {
            (Some(j), _) => (false, j),
            (_, Some(j)) => (true, j),
            _ => panic!("{line}: a wire line starts with → (daemon) or ← (plugin)"),
        };
        let value: Value =
            serde_json::from_str(json_text).unwrap_or_else(|e| panic!("{line}: not JSON: {e}"));
        let msg = RpcMessage::from_slice(json_text.as_bytes())
            .unwrap_or_else(|e| panic!("{line}: not a JSON-RPC message: {e:?}"));
        match msg {
            RpcMessage::Request(r) => {
                check_params(&line, &r.method, from_plugin, r.params.as_ref());
                let id = serde_json::to_string(&r.id).expect("id");
                sent.insert((from_plugin, id), value);
            }
            RpcMessage::Notification(n) => {
                check_params(&line, &n.method, from_plugin, n.params.as_ref())
            }
            RpcMessage::Response(r) => {
                let id = serde_json::to_string(&r.id).expect("id");
                let request = sent.get(&(!from_plugin, id.clone())).unwrap_or_else(|| {
                    panic!("{line}: answers id {id}, which no request above sent")
                });
                let method = request["method"].as_str().expect("method").to_string();
                match r.payload {
                    ResponsePayload::Result(v) => check_result(&line, &method, request, &v),
                    ResponsePayload::Error(e) => {
                        assert!(
                            ErrorCode::from_code(e.code).is_some(),
                            "{line}: {} is not a code of the spec",
                            e.code
                        );
                        assert!(
                            !e.message.is_empty(),
                            "{line}: an error says what was wrong"
                        );
                    }
                }
            }
        }
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} wire lines found in {GUIDE}");
}

/// Every key a step of each action can hold, from the step types
/// themselves (each serialized with every field set).
fn step_keys() -> BTreeSet<(String, String)> {
    let ctx = PluginCallContext::agent("p", "primary", "ses_1", "req_1");
    let call = CallStep {
        call: "m".into(),
        params: Some(json!({})),
        context: Some(ctx),
        expect: Some(Expect {
            result: Some(json!({})),
            error: Some(-32602),
        }),
    };
    let steps = [
        SessionStep::Call(call.clone()),
        SessionStep::Calls(CallsStep { calls: vec![call] }),
        SessionStep::Notify(NotifyStep {
            notify: "n".into(),
            params: Some(json!({})),
        }),
        SessionStep::Wait(WaitStep {
            wait: "n".into(),
            timeout_ms: Some(1),
        }),
        SessionStep::ExpectAudit(ExpectAuditStep {
            expect_audit: "e".into(),
            data: Some(json!({})),
        }),
    ];
    let mut keys = BTreeSet::new();
    for step in steps {
        let v = serde_json::to_value(&step).expect("serialize");
        for k in v.as_object().expect("a step is a map").keys() {
            keys.insert((step.action().to_string(), k.clone()));
        }
    }
    keys
}

#[test]
fn the_script_key_table_is_complete_and_the_example_uses_every_key() {
    let text = read(GUIDE);
    let table: BTreeSet<(String, String)> = text
        .lines()
        .skip_while(|l| !l.starts_with(SCRIPT_KEYS))
        .skip(3)
        .take_while(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(|c| c.trim().trim_matches('`')).collect();
            (cells[1].to_string(), cells[2].to_string())
        })
        .collect();
    assert_eq!(table, step_keys(), "{GUIDE}'s script-key table");

    let example = read(SCRIPT_EXAMPLE);
    let script = Script::from_yaml_str(&example).expect("the example script parses");
    let mut used = BTreeSet::new();
    for step in &script.steps {
        let v = serde_json::to_value(step).expect("serialize");
        let mut add = |map: &Value| {
            for k in map.as_object().expect("map").keys() {
                used.insert((step.action().to_string(), k.clone()));
            }
        };
        add(&v);
        if let SessionStep::Calls(c) = step {
            for call in &c.calls {
                let v = serde_json::to_value(SessionStep::Call(call.clone())).expect("serialize");
                for k in v.as_object().expect("map").keys() {
                    used.insert(("call".to_string(), k.clone()));
                }
            }
        }
    }
    let missing: Vec<_> = step_keys().difference(&used).cloned().collect();
    assert!(
        missing.is_empty(),
        "{SCRIPT_EXAMPLE} never uses {missing:?}"
    );
}

/// Run the suite on `dir` caged; every case must pass or be skipped.
fn certified(dir: &Path) -> Report {
    let options = Options {
        cage: CageMode::Require,
        ..Options::default()
    };
    let r = run_suite(dir, &options).expect("the suite runs");
    let bad: Vec<String> = r
        .cases
        .iter()
        .filter(|c| matches!(c.status, Status::Fail | Status::Warn))
        .map(|c| format!("{} {:?}: {}", c.id, c.status, c.detail))
        .collect();
    assert!(
        bad.is_empty(),
        "{}: not certified:\n{}\n{}",
        dir.display(),
        bad.join("\n"),
        render_human(&r, false, true)
    );
    assert_eq!(r.cage, Some(CageKind::Bwrap), "{} ran caged", dir.display());
    r
}

/// The example's session script (`tests/scenario.yaml`), run caged.
fn session(dir: &Path) -> ScenarioRun {
    let script = std::fs::read_to_string(dir.join("tests/scenario.yaml")).expect("its script");
    let script = Script::from_yaml_str(&script).expect("the script parses");
    Scenario::from_script(script)
        .cage(CageMode::Require)
        .run_blocking(dir)
        .expect("the session runs")
}

/// The example's golden session, caged: same transcript as its golden file.
fn golden_holds(dir: &Path) {
    let run = session(dir);
    run.assert_ok();
    let want =
        std::fs::read_to_string(dir.join("tests/scenario.golden.jsonl")).expect("its golden file");
    match golden::compare(&want, &run.transcript).expect("a valid golden file") {
        Golden::Same => {}
        Golden::Differs { diff } => panic!("{}: golden transcript differs:\n{diff}", dir.display()),
    }
}

fn example(test: &str, name: &str) {
    if !kaged_host_core::testing::cage_available_for_blocking(test) {
        return;
    }
    let dir = support::workspace().join("examples").join(name);
    certified(&dir);
    golden_holds(&dir);
}

#[test]
fn the_python_example_is_certified_caged_and_its_golden_transcript_holds() {
    example(
        "the_python_example_is_certified_caged_and_its_golden_transcript_holds",
        "python-notes",
    );
}

#[test]
fn the_node_example_is_certified_caged_and_its_golden_transcript_holds() {
    let node = if Path::new("/usr/bin/node").exists() {
        Ok(())
    } else {
        Err("/usr/bin/node is missing (.ci/run installs Debian's nodejs)".to_string())
    };
    if kaged_test_support::ci::required_in_ci("Node.js", node).is_none() {
        return;
    }
    example(
        "the_node_example_is_certified_caged_and_its_golden_transcript_holds",
        "node-notes",
    );
}

#[test]
fn the_plugin_written_from_the_guide_alone_passes_the_suite_caged() {
    let test = "the_plugin_written_from_the_guide_alone_passes_the_suite_caged";
    if !kaged_host_core::testing::cage_available_for_blocking(test) {
        return;
    }
    let text = read(GUIDE);
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("py-notes");
    std::fs::create_dir(&dir).expect("mkdir");
    std::fs::write(
        dir.join("kaged-plugin.yaml"),
        whole_file_block(&text, WHOLE_PLUGIN.0),
    )
    .expect("write the manifest");
    let plugin = dir.join("plugin.py");
    std::fs::write(&plugin, whole_file_block(&text, WHOLE_PLUGIN.1)).expect("write the plugin");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&plugin, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let r = certified(&dir);
    assert_eq!(r.plugin.name, "py-notes");
}

#[test]
fn a_planted_change_in_a_golden_file_is_named_by_step_and_path() {
    let test = "a_planted_change_in_a_golden_file_is_named_by_step_and_path";
    if !kaged_host_core::testing::cage_available_for_blocking(test) {
        return;
    }
    let dir = support::workspace().join("examples/python-notes");
    let golden = std::fs::read_to_string(dir.join("tests/scenario.golden.jsonl")).expect("golden");
    // The golden file as if the script had once sent `remember` another text.
    let planted = "The band rehearses on Tuesdays.";
    assert!(
        golden.contains(planted),
        "the golden file holds {planted:?}"
    );
    let changed = golden.replacen(planted, "The band rehearses on Mondays.", 1);
    let run = session(&dir);
    let Golden::Differs { diff } = golden::compare(&changed, &run.transcript).expect("valid")
    else {
        panic!("a planted change is found");
    };
    let first = diff.lines().take(2).collect::<Vec<_>>().join("\n");
    assert!(
        first.starts_with("step 2 (`py-notes.remember`), message 12 ")
            && first.contains("host>plugin: request 4, `py-notes.remember`")
            && first.contains("$.msg.params.text: golden \"The band rehearses on Mondays.\", actual \"The band rehearses on Tuesdays.\""),
        "{diff}"
    );
}
