//! `conformance/action/action.yml`, the GitHub Action: valid action
//! metadata (a schema of GitHub's action metadata rules for composite
//! actions), every `inputs.X` it uses declared, every flag it passes known
//! to the command it runs (`kaged-conformance run`/`fuzz`, `kaged-host-sim
//! session`), and its run and golden steps, executed as the runner would
//! (their environment, `$GITHUB_OUTPUT`, `$GITHUB_STEP_SUMMARY`): the
//! reports and the job summary written, a golden difference reported.

mod support;

use std::path::Path;

use kaged_test_support::command::assert_success;
use serde_json::{json, Value};
use support::{cmd, own_fixture};

fn action() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("action/action.yml");
    let text = std::fs::read_to_string(&path).expect("action.yml");
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("action.yml is not YAML: {e}"))
}

/// GitHub's action metadata rules for a composite action
/// (docs.github.com, "Metadata syntax for GitHub Actions"), as a schema.
fn metadata_schema() -> Value {
    json!({
        "type": "object",
        "required": ["name", "description", "runs"],
        "properties": {
            "name": {"type": "string", "minLength": 1},
            "description": {"type": "string", "minLength": 1},
            "author": {"type": "string"},
            "branding": {
                "type": "object",
                "properties": {"icon": {"type": "string"}, "color": {"enum": [
                    "white", "black", "yellow", "blue", "green", "orange", "red", "purple", "gray-dark"]}},
                "additionalProperties": false
            },
            "inputs": {
                "type": "object",
                "propertyNames": {"pattern": "^[A-Za-z_][A-Za-z0-9_-]*$"},
                "additionalProperties": {
                    "type": "object",
                    "required": ["description"],
                    "properties": {
                        "description": {"type": "string", "minLength": 1},
                        "required": {"type": "boolean"},
                        "default": {"type": "string"},
                        "deprecationMessage": {"type": "string"}
                    },
                    "additionalProperties": false
                }
            },
            "outputs": {
                "type": "object",
                "additionalProperties": {
                    "type": "object",
                    "required": ["description", "value"],
                    "properties": {"description": {"type": "string"}, "value": {"type": "string"}},
                    "additionalProperties": false
                }
            },
            "runs": {
                "type": "object",
                "required": ["using", "steps"],
                "properties": {
                    "using": {"const": "composite"},
                    "steps": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "properties": {
                                "name": {"type": "string"}, "id": {"type": "string"},
                                "if": {"type": "string"}, "run": {"type": "string"},
                                "shell": {"type": "string"}, "uses": {"type": "string"},
                                "with": {"type": "object"},
                                "env": {"type": "object", "additionalProperties": {"type": "string"}},
                                "working-directory": {"type": "string"},
                                "continue-on-error": {"type": ["boolean", "string"]}
                            },
                            "additionalProperties": false,
                            "oneOf": [
                                {"required": ["run", "shell"], "not": {"required": ["uses"]}},
                                {"required": ["uses"], "not": {"required": ["run"]}}
                            ]
                        }
                    }
                },
                "additionalProperties": false
            }
        },
        "additionalProperties": false
    })
}

#[test]
fn action_yml_is_valid_composite_action_metadata() {
    let action = action();
    let validator = jsonschema::validator_for(&metadata_schema()).expect("a valid schema");
    let errors: Vec<String> = validator
        .iter_errors(&action)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "action.yml: {errors:#?}");
    let inputs = action["inputs"].as_object().expect("inputs");
    for want in [
        "plugin-dir",
        "time-scale",
        "known-failing",
        "strict",
        "cage",
        "max-failures",
        "jobs",
    ] {
        assert!(inputs.contains_key(want), "input {want}");
    }
    assert_eq!(action["inputs"]["plugin-dir"]["required"], true);

    // Every `inputs.X` and `steps.ID` the action uses exists.
    let text = action.to_string();
    let used = regex::Regex::new(r"inputs\.([A-Za-z0-9_-]+)").expect("regex");
    for c in used.captures_iter(&text) {
        assert!(
            inputs.contains_key(&c[1]),
            "inputs.{} is used but not declared",
            &c[1]
        );
    }
    let ids: Vec<&str> = action["runs"]["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .filter_map(|s| s["id"].as_str())
        .collect();
    let steps = regex::Regex::new(r"steps\.([A-Za-z0-9_-]+)\.").expect("regex");
    for c in steps.captures_iter(&text) {
        assert!(
            ids.contains(&&c[1]),
            "steps.{} is used but no step has that id",
            &c[1]
        );
    }
}

fn step(id: &str) -> (String, serde_json::Map<String, Value>) {
    let action = action();
    let step = action["runs"]["steps"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["id"] == id))
        .cloned()
        .unwrap_or_else(|| panic!("the step with id {id}"));
    (
        step["run"].as_str().expect("a script").to_string(),
        step["env"].as_object().cloned().unwrap_or_default(),
    )
}

#[test]
fn every_flag_the_action_passes_is_known_to_kaged_conformance() {
    let flags = regex::Regex::new(r"(^|[\s(])(--[a-z][a-z-]*)").expect("regex");
    let host_sim = support::kit_binary("kaged-host-sim");
    let mut checks: Vec<(&str, std::process::Command, &str)> = Vec::new();
    for (id, command) in [("run", "run"), ("fuzz", "fuzz")] {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_kaged-conformance"));
        c.args([command, "--help"]);
        checks.push((id, c, command));
    }
    if let Some(bin) = &host_sim {
        let mut c = std::process::Command::new(bin);
        c.args(["session", "--help"]);
        checks.push(("golden", c, "kaged-host-sim session"));
    }
    for (id, mut help_cmd, command) in checks {
        let (script, _) = step(id);
        let help = help_cmd.output().expect("--help");
        let help = String::from_utf8_lossy(&help.stdout);
        for c in flags.captures_iter(&script) {
            let flag = &c[2];
            assert!(
                help.contains(&format!("{flag} ")) || help.contains(&format!("{flag}\n")),
                "{flag} is not a flag of `{command}`"
            );
        }
    }
}

/// What a step left: its `$GITHUB_OUTPUT` and `$GITHUB_STEP_SUMMARY`.
struct Ran {
    outputs: String,
    summary: String,
    _tmp: tempfile::TempDir,
}

/// Run the step `id` with bash as the runner would, its `${{ inputs.X }}`
/// from `inputs` (and a `${{ steps.S.outputs.O }}` from its key
/// `steps.S.outputs.O` there), the kit's binaries first on `PATH`.
fn run_with(id: &str, inputs: &Value) -> Ran {
    let (script, env) = step(id);
    let tmp = tempfile::tempdir().expect("tempdir");
    let (output, summary) = (tmp.path().join("output"), tmp.path().join("summary"));
    let path = support::kit_path();
    let mut cmd = std::process::Command::new("bash");
    cmd.args(["-e", "-c", &script])
        .env("PATH", path)
        .env("RUNNER_TEMP", tmp.path())
        .env("GITHUB_OUTPUT", &output)
        .env("GITHUB_STEP_SUMMARY", &summary);
    for (k, v) in &env {
        // `${{ inputs.x }}` as the runner substitutes it.
        let expr = v.as_str().unwrap_or_default();
        let expr = expr.trim_start_matches("${{ ").trim_end_matches(" }}");
        let name = expr.strip_prefix("inputs.").unwrap_or(expr);
        let value = match &inputs[name] {
            Value::String(s) => s.clone(),
            // An input the test leaves out takes the action's default.
            Value::Null => action()["inputs"][name]["default"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            other => other.to_string(),
        };
        cmd.env(k, value);
    }
    let out = cmd.output().expect("bash");
    assert_success("the action's step (it must not fail itself)", &out);
    Ran {
        outputs: std::fs::read_to_string(&output).expect("$GITHUB_OUTPUT"),
        summary: std::fs::read_to_string(&summary).unwrap_or_default(),
        _tmp: tmp,
    }
}

/// The run step, executed by bash as the runner would: the reports, the
/// outputs and the job summary are written, and the exit code is kept.
#[test]
fn the_run_step_writes_the_reports_and_the_job_summary() {
    let inputs = json!({
        "plugin-dir": own_fixture("hook-errors"), "time-scale": "1", "known-failing": "",
        "strict": "false", "cage": "auto", "max-failures": "", "jobs": "2",
    });
    // `_tmp` is kept: the reports are in it.
    let Ran {
        outputs,
        summary,
        _tmp,
    } = run_with("run", &inputs);
    assert!(outputs.contains("exit-code=1\n"), "{outputs}");
    let dir = outputs
        .lines()
        .find_map(|l| l.strip_prefix("report-dir="))
        .expect("report-dir");
    for f in ["junit.xml", "summary.md", "report.html", "report.json"] {
        assert!(Path::new(dir).join(f).is_file(), "{f} written");
    }
    assert!(
        summary.starts_with("## kaged-conformance: hook-errors"),
        "{summary}"
    );
}

/// The golden step on the Python example: its golden file holds (exit 0);
/// a planted change fails it (exit 1), and the job summary names the step
/// and the JSON path of the change.
#[test]
fn the_golden_step_checks_a_golden_transcript_and_says_what_changed() {
    if support::kit_binary("kaged-host-sim").is_none() {
        return;
    }
    let example = support::workspace().join("examples/python-notes");
    let cage = if kaged_host_core::testing::cage_available_for_blocking(
        "the_golden_step_checks_a_golden_transcript_and_says_what_changed",
    ) {
        "require"
    } else {
        "off"
    };
    let inputs = |golden: &Path, script: &str| {
        json!({"plugin-dir": example, "time-scale": "1", "cage": cage,
               "golden": golden, "script": script})
    };
    let golden = example.join("tests/scenario.golden.jsonl");
    // `script` left empty: the golden file's name gives it.
    let ran = run_with("golden", &inputs(&golden, ""));
    assert!(ran.outputs.contains("exit-code=0\n"), "{}", ran.outputs);
    assert!(ran.summary.is_empty(), "{}", ran.summary);

    let tmp = tempfile::tempdir().expect("tempdir");
    let planted = tmp.path().join("planted.golden.jsonl");
    let text = std::fs::read_to_string(&golden).expect("golden");
    std::fs::write(
        &planted,
        text.replacen(
            "The band rehearses on Tuesdays.",
            "The band rehearses on Mondays.",
            1,
        ),
    )
    .expect("write");
    let script = example.join("tests/scenario.yaml");
    let ran = run_with("golden", &inputs(&planted, &script.display().to_string()));
    assert!(ran.outputs.contains("exit-code=1\n"), "{}", ran.outputs);
    assert!(
        ran.summary.contains("differs")
            && ran.summary.contains("step 2 (`py-notes.remember`)")
            && ran.summary.contains("$.msg.params.text"),
        "{}",
        ran.summary
    );
}

/// Under a certifier's policy, the policy step says what the later steps
/// read of it (its golden rule, whether it sets a fuzz depth), and the
/// fuzz step fuzzes at the policy's depth and certifies the run, whatever
/// `fuzz` says.
#[test]
fn the_policy_step_and_the_fuzz_step_follow_the_policy() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let policy = tmp.path().join("registry.yaml");
    std::fs::write(
        &policy,
        "policy: 1\nname: registry\ncage: any\ngolden: ignore\nfuzz: {cases: 3, soak: 10}\n",
    )
    .expect("write");
    let ran = run_with("policy", &json!({ "policy": policy }));
    assert!(
        ran.outputs.contains("golden=ignore\n") && ran.outputs.contains("fuzz=true\n"),
        "{}",
        ran.outputs
    );
    let golden_if = action()["runs"]["steps"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["id"] == "golden"))
        .map(|s| s["if"].to_string())
        .unwrap_or_default();
    assert!(
        golden_if.contains("steps.policy.outputs.golden != 'ignore'"),
        "{golden_if}"
    );
    let out = tmp.path().join("out");
    let cage = if kaged_host_core::testing::cage_available_for_blocking(
        "the_policy_step_and_the_fuzz_step_follow_the_policy",
    ) {
        "require"
    } else {
        "off"
    };
    let ran = run_with(
        "fuzz",
        &json!({
            "plugin-dir": support::workspace().join("examples/echo"),
            "time-scale": "1", "cage": cage, "fuzz": "", "fuzz-seed": "5",
            "policy": policy, "steps.run.outputs.report-dir": out,
        }),
    );
    assert!(ran.outputs.contains("exit-code=0\n"), "{}", ran.outputs);
    let md = std::fs::read_to_string(out.join("fuzz.md")).expect("fuzz.md");
    assert!(md.contains("CERTIFIED"), "{md}");
    assert!(ran.summary.contains("CERTIFIED"), "{}", ran.summary);
}

/// The attestation steps, run as the runner would with the signing step
/// stubbed at its boundary (`actions/attest` is not run here; its inputs
/// are the prepared outputs): the run step writes the statement under a
/// policy, the prepare step hands actions/attest the subject and the
/// predicate, and the statement verifies for the plugin directory.
#[test]
fn the_attest_steps_hand_actions_attest_the_statement_of_a_certified_run() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let policy = tmp.path().join("policy.yaml");
    std::fs::write(&policy, "policy: 1\nname: registry\n").expect("write");
    let example = support::workspace().join("examples/python-notes");
    let inputs = json!({
        "plugin-dir": example, "time-scale": "1", "known-failing": "", "strict": "false",
        "cage": "require", "max-failures": "", "jobs": "", "policy": policy, "attest": "true",
    });
    let Ran { outputs, _tmp, .. } = run_with("run", &inputs);
    assert!(outputs.contains("exit-code=0\n"), "{outputs}");
    let dir = outputs
        .lines()
        .find_map(|l| l.strip_prefix("report-dir="))
        .expect("report-dir")
        .to_string();
    // The prepare step reads it with jq, as on a GitHub runner.
    let (script, _) = step("attestation");
    let out_file = tmp.path().join("output");
    let ran = std::process::Command::new("bash")
        .args(["-e", "-c", &script])
        .env("OUT", &dir)
        .env("GITHUB_OUTPUT", &out_file)
        .output()
        .expect("bash");
    assert_success("the prepare step", &ran);
    let prepared = std::fs::read_to_string(&out_file).expect("outputs");
    assert!(
        prepared.contains("subject-name=py-notes@0.1.0\n"),
        "{prepared}"
    );
    assert!(
        prepared.contains("predicate-type=https://kaged.dev/attestation/conformance/v1\n"),
        "{prepared}"
    );
    assert!(prepared.contains("outcome=certified\n"), "{prepared}");
    let digest = prepared
        .lines()
        .find_map(|l| l.strip_prefix("subject-digest=sha256:"))
        .expect("a digest");
    assert_eq!(digest.len(), 64, "{prepared}");
    let predicate = Path::new(&dir).join("predicate.json");
    let p: Value = serde_json::from_str(&std::fs::read_to_string(&predicate).expect("predicate"))
        .expect("JSON");
    assert_eq!(p["policy"]["name"], "registry");
    // The signing step takes exactly these outputs.
    let action = action();
    let sign = action["runs"]["steps"]
        .as_array()
        .and_then(|s| {
            s.iter().find(|s| {
                s["uses"]
                    .as_str()
                    .is_some_and(|u| u.starts_with("actions/attest@"))
            })
        })
        .expect("the signing step");
    for k in [
        "subject-name",
        "subject-digest",
        "predicate-type",
        "predicate-path",
    ] {
        assert_eq!(
            sign["with"][k],
            format!("${{{{ steps.attestation.outputs.{k} }}}}"),
            "{k}"
        );
    }
    // And the statement verifies for the directory it certified.
    let verified = cmd()
        .arg("verify")
        .arg(Path::new(&dir).join("attestation.json"))
        .arg(&example)
        .arg("--policy")
        .arg(&policy)
        .output()
        .expect("verify");
    assert_eq!(
        verified.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&verified.stderr)
    );
}
