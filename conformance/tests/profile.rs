//! The conformance profile (`kaged-conformance.yaml`, docs/conformance.md
//! § Conformance profiles) end to end: a stdlib Python plugin with a
//! profile has every method called with every example of its profile (the
//! case transcripts hold each call, the details each answer); without a
//! profile the report names the methods called with `{}` only; `--conformance-profile`
//! names a profile kept elsewhere.

mod support;

use std::path::Path;

use kaged_conformance::catalogue::{METHODS_EXAMPLES, METHODS_INVALID_PARAMS, PROFILE_VALID};
use kaged_conformance::report::{render_human, Status};
use kaged_conformance::selection::{Pattern, Selection};
use kaged_conformance::{run_suite, Options};
use kaged_plugin_protocol::profile::{Profile, PROFILE_FILE};
use serde_json::Value;
use support::{broken, options, own_fixture};

/// The params of every request for `method` in a case transcript, with
/// the `_context` the host adds taken out.
fn params_sent(transcript: &Path, method: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(transcript)
        .unwrap_or_else(|e| panic!("{}: {e}", transcript.display()));
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|record| {
            let msg = record.get("msg").cloned().unwrap_or(record);
            (msg["method"] == method && msg.get("id").is_some()).then(|| {
                let mut p = msg["params"].clone();
                if let Some(o) = p.as_object_mut() {
                    o.remove("_context");
                }
                p
            })
        })
        .collect()
}

#[test]
fn a_profiled_python_plugin_has_every_method_called_with_its_examples() {
    let dir = own_fixture("profiled");
    let tmp = tempfile::tempdir().expect("tempdir");
    let opts = Options {
        transcript_dir: Some(tmp.path().to_path_buf()),
        ..options()
    };
    let r = run_suite(&dir, &opts).expect("the suite runs");
    assert!(broken(&r).is_empty(), "{}", render_human(&r, false, true));
    let profile = Profile::load(&dir.join(PROFILE_FILE)).expect("the fixture's profile");
    assert_eq!(
        profile.methods.keys().collect::<Vec<_>>(),
        ["kv.count", "kv.get", "kv.put"]
    );
    for (method, entry) in &profile.methods {
        let id = METHODS_EXAMPLES.instance_id(method);
        let case = r.case(&id);
        assert_eq!(case.status, Status::Pass, "{id}: {}", case.detail);
        let sent = params_sent(&tmp.path().join(format!("{id}.jsonl")), method);
        let examples: Vec<&Value> = entry.examples.iter().map(|e| &e.params).collect();
        assert_eq!(
            sent.iter().collect::<Vec<_>>(),
            examples,
            "{id}: one call per example, in order"
        );
        if !entry.invalid.is_empty() {
            let id = METHODS_INVALID_PARAMS.instance_id(method);
            let sent = params_sent(&tmp.path().join(format!("{id}.jsonl")), method);
            let invalid: Vec<&Value> = entry.invalid.iter().map(|e| &e.params).collect();
            assert_eq!(sent.iter().collect::<Vec<_>>(), invalid, "{id}");
            assert_eq!(r.case(&id).status, Status::Pass, "{}", r.case(&id).detail);
        }
    }
    // The details show what each call answered: kv.get reads what kv.put's
    // examples stored, kv.count runs as an agent.
    let put = &r.case(&METHODS_EXAMPLES.instance_id("kv.put")).detail;
    assert!(
        put.contains(r#"kv.put({"key":"colour","value":"blue"}) answered {"stored":"colour"}"#),
        "{put}"
    );
    let get = &r.case(&METHODS_EXAMPLES.instance_id("kv.get")).detail;
    assert!(
        get.contains(r#"answered {"key":"colour","value":"blue"}"#),
        "{get}"
    );
    let count = &r.case(&METHODS_EXAMPLES.instance_id("kv.count")).detail;
    assert!(
        count.contains("as an agent answered {\"count\":2}"),
        "{count}"
    );
    let refused = &r.case(&METHODS_INVALID_PARAMS.instance_id("kv.put")).detail;
    assert!(refused.contains("answered -32602"), "{refused}");
    // kv.keys has no entry: called with {} only, and the report says so.
    let keys = r.case(&METHODS_EXAMPLES.instance_id("kv.keys"));
    assert_eq!(keys.status, Status::Skip);
    assert!(
        keys.detail.contains(
            "kaged-conformance.yaml has no entry for kv.keys: kv.keys was only called with {}"
        ),
        "{}",
        keys.detail
    );
    let valid = r.case(PROFILE_VALID.id);
    assert_eq!(valid.status, Status::Pass, "{}", valid.detail);
    assert!(
        valid.detail.starts_with("kaged-conformance.yaml (profile 1): 3 method(s), 5 example(s), 2 invalid call(s); not in it: kv.keys called with {} only (methods.answers)"),
        "{}",
        valid.detail
    );
}

/// The `profiled` fixture copied to `tmp` without its profile.
fn without_profile(tmp: &Path) -> std::path::PathBuf {
    let copy = tmp.join("profiled");
    std::fs::create_dir(&copy).expect("mkdir");
    for f in ["kaged-plugin.yaml", "plugin.py", "cproto.py"] {
        std::fs::copy(own_fixture("profiled").join(f), copy.join(f)).expect("copy");
    }
    copy
}

#[test]
fn without_a_profile_the_report_names_the_methods_called_with_empty_params() {
    let only = Options {
        selection: Selection {
            only: vec![Pattern::new("profile.*"), Pattern::new("methods.*")],
            skip: Vec::new(),
        },
        ..options()
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let r = run_suite(&without_profile(tmp.path()), &only).expect("the suite runs");
    assert!(broken(&r).is_empty(), "{}", render_human(&r, false, true));
    let valid = r.case(PROFILE_VALID.id);
    assert_eq!(valid.status, Status::Skip);
    assert!(
        valid
            .detail
            .starts_with("no kaged-conformance.yaml beside the manifest: kv.put, kv.get, kv.count, kv.keys called with {} only"),
        "{}",
        valid.detail
    );
    for m in ["kv.put", "kv.get", "kv.count", "kv.keys"] {
        let c = r.case(&METHODS_EXAMPLES.instance_id(m));
        assert_eq!(c.status, Status::Skip);
        assert_eq!(
            c.detail,
            format!(
                "no kaged-conformance.yaml: {m} was only called with {{}} (methods.answers[{m}])"
            )
        );
    }
}

#[test]
fn the_profile_option_names_a_profile_kept_elsewhere() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let copy = without_profile(tmp.path());
    let only = |profile| Options {
        selection: Selection {
            only: vec![Pattern::new("profile.*"), Pattern::new("methods.examples*")],
            skip: Vec::new(),
        },
        profile,
        ..options()
    };
    let elsewhere = own_fixture("profiled").join(PROFILE_FILE);
    let r = run_suite(&copy, &only(Some(elsewhere))).expect("the suite runs");
    assert!(broken(&r).is_empty(), "{}", render_human(&r, false, true));
    assert_eq!(
        r.case(&METHODS_EXAMPLES.instance_id("kv.put")).status,
        Status::Pass
    );

    let missing = tmp.path().join("nowhere.yaml");
    let r = run_suite(&copy, &only(Some(missing))).expect("the suite runs");
    let valid = r.case(PROFILE_VALID.id);
    assert_eq!(valid.status, Status::Fail);
    assert!(
        valid
            .detail
            .ends_with("1 problem(s): no such file (named by --conformance-profile)"),
        "{}",
        valid.detail
    );
}
