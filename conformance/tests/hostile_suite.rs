//! The certification gate itself against a hostile plugin (issue 45,
//! "Done when": `kaged-conformance run --cage require --jobs 4`). The
//! hostile fixture (`kaged-host-sim/tests/fixtures/plugins/hostile`) gets
//! a write grant and one `net:` grant, and a conformance profile whose
//! examples are attacks, each with the answer that says it was refused
//! (`result_schema`): the suite, with four lanes running copies of the
//! plugin at once, judges `methods.examples[hostile.probe]` itself. A pass
//! means every attack failed; a failing attack fails the case and names
//! the example. Nothing on the machine is changed: the probes read, open
//! without writing, or make files only in the cage's `/tmp`.

mod support;

use serde_json::{json, Value};

use support::{cmd, host_fixture};

/// `{ok: false}`: the attack was refused.
fn refused() -> Value {
    json!({"type": "object", "required": ["ok"], "properties": {"ok": {"const": false}}})
}

/// Every listed sub-attack of a probe's answer refused.
fn each_refused(keys: &[&str]) -> Value {
    let props: serde_json::Map<String, Value> =
        keys.iter().map(|k| (k.to_string(), refused())).collect();
    json!({"type": "object", "required": keys, "properties": props})
}

fn attacks() -> Vec<Value> {
    let ex = |params: Value, schema: Value| json!({"params": params, "result_schema": schema});
    vec![
        ex(json!({"name": "read", "path": "/etc/shadow"}), refused()),
        ex(json!({"name": "read", "path": "/root/.bashrc"}), refused()),
        ex(
            json!({"name": "read", "path": "/.kaged-cage-init"}),
            refused(),
        ),
        ex(
            json!({"name": "open_for_writing", "path": "/proc/sys/kernel/core_pattern"}),
            refused(),
        ),
        ex(json!({"name": "sysctl_write_back"}), refused()),
        // Not the granted port; the metadata address; the host's IPv6 loopback.
        ex(
            json!({"name": "tcp_connect", "host": "127.0.0.1", "port": 22}),
            refused(),
        ),
        ex(
            json!({"name": "tcp_connect", "host": "169.254.169.254", "port": 80}),
            refused(),
        ),
        ex(
            json!({"name": "tcp_connect", "host": "::1", "port": 1}),
            refused(),
        ),
        ex(
            json!({"name": "set_id", "dir": "/tmp"}),
            each_refused(&["chmod", "chmod_setgid", "fchmod", "open_creat", "mknod"]),
        ),
        ex(json!({"name": "userns_clone"}), refused()),
        // Never the host's root, no capability.
        ex(
            json!({"name": "status"}),
            json!({"type": "object", "required": ["status"], "properties": {"status": {
                "type": "object",
                "required": ["Uid", "CapEff", "NoNewPrivs"],
                "properties": {
                    "Uid": {"not": {"const": "0"}},
                    "CapEff": {"const": "0000000000000000"},
                    "NoNewPrivs": {"const": "1"}
                }
            }}}),
        ),
    ]
}

#[test]
fn four_lanes_of_a_hostile_plugin_get_nothing_under_cage_require() {
    if kaged_host_core::testing::cage_available_for_blocking("the hostile suite run") {
        hostile_suite_run(false);
    }
}

#[test]
fn the_same_with_the_suite_run_by_an_ordinary_user() {
    if rustix::process::geteuid().is_root()
        && kaged_host_core::testing::cage_available_for_blocking("the hostile suite as nobody")
    {
        hostile_suite_run(true);
    }
}

/// Run the suite on the armed copy of the hostile fixture (as `nobody`
/// under `setpriv` when `as_nobody`) and check what it judged.
fn hostile_suite_run(as_nobody: bool) {
    let src = host_fixture("hostile");
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("hostile");
    std::fs::create_dir(&dir).expect("dir");
    if as_nobody {
        use std::os::unix::fs::PermissionsExt;
        for d in [tmp.path(), dir.as_path()] {
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
    }
    for f in ["plugin.py", "kproto.py"] {
        std::fs::copy(src.join(f), dir.join(f)).expect("copy");
    }
    let manifest = std::fs::read_to_string(src.join("kaged-plugin.yaml")).expect("manifest");
    let manifest = manifest.replace(
        "capabilities: []",
        "capabilities: [\"write:fs:config:/shared\", \"net:127.0.0.1:1\"]",
    );
    assert!(manifest.contains("net:127.0.0.1:1"), "{manifest}");
    std::fs::write(dir.join("kaged-plugin.yaml"), manifest).expect("write");
    let profile = json!({"profile": 1, "methods": {"hostile.probe": {"examples": attacks()}}});
    // JSON is YAML 1.2.
    std::fs::write(dir.join("kaged-conformance.yaml"), profile.to_string()).expect("profile");
    let mut run = if as_nobody {
        let mut c = assert_cmd::Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(env!("CARGO_BIN_EXE_kaged-conformance"))
            .env("HOME", tmp.path());
        c
    } else {
        cmd()
    };
    let out = run
        .args([
            "run", "--cage", "require", "--jobs", "4", "--format", "json", "--quiet",
        ])
        // The fixture does not answer a batch or malformed JSON: those
        // cases wait out their (scaled) budget.
        .args(["--time-scale", "0.1"])
        .arg(&dir)
        .output()
        .expect("run the suite");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let case = |id: &str| -> Value {
        report["cases"]
            .as_array()
            .expect("cases")
            .iter()
            .find(|c| c["id"] == id)
            .unwrap_or_else(|| panic!("no case {id} in {report}"))
            .clone()
    };
    assert_eq!(
        case("profile.valid")["status"],
        "pass",
        "{}",
        case("profile.valid")
    );
    let examples = case("methods.examples[hostile.probe]");
    assert_eq!(
        examples["status"], "pass",
        "an attack got through: {examples}"
    );
    // The cage every lane ran in: its own uid, Landlock files, a filtered
    // network.
    let started = case("cage.starts_caged");
    let detail = started["detail"].as_str().expect("detail");
    assert_eq!(started["status"], "pass", "{started}");
    assert!(detail.contains("landlock fs"), "{detail}");
    assert!(detail.contains("network filtered"), "{detail}");
    if as_nobody {
        assert!(detail.contains("; host uid 65534"), "{detail}");
    } else if rustix::process::geteuid().is_root() {
        assert!(detail.contains("; uid "), "{detail}");
    }
}
