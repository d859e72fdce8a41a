//! A registry certified on the CI it already has (issue 48): `matrix`
//! turns a registry file (two directories and a git source) into the
//! GitHub matrix, a GitLab child pipeline and a workflow; each matrix
//! row's job runs here as the CI would run it (its shell, the kit on
//! `PATH`), caged where this machine cages; `merge` turns the reports into
//! one page, a regression first, with an index and shields.io badges; the
//! page is checked in a real browser.

mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use kaged_test_support::browser::{browser_tools_for, Browser};
use kaged_test_support::command::{assert_success, git};
use serde_json::{json, Value};

fn cage() -> &'static str {
    if kaged_host_core::testing::cage_available_for_blocking("kaged-conformance registry") {
        "require"
    } else {
        "off"
    }
}

fn copy_example(name: &str, files: &[&str], to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    let example = support::workspace().join("examples").join(name);
    for f in files {
        std::fs::copy(example.join(f), to.join(f)).expect("copy");
    }
}

/// A registry of three plugins in `root`: two directories and a git
/// repository (`file://`), under one policy.
fn registry(root: &Path) -> PathBuf {
    copy_example(
        "python-notes",
        &["kaged-plugin.yaml", "plugin.py"],
        &root.join("plugins/py-notes"),
    );
    copy_example(
        "node-notes",
        &["kaged-plugin.yaml", "plugin.js"],
        &root.join("plugins/node-notes"),
    );
    let repo = root.join("repos/py-notes-git");
    copy_example("python-notes", &["kaged-plugin.yaml", "plugin.py"], &repo);
    // Another name, so that the two Python plugins are two rows.
    for f in ["kaged-plugin.yaml", "plugin.py"] {
        let p = repo.join(f);
        let text = std::fs::read_to_string(&p).expect("read");
        std::fs::write(&p, text.replace("py-notes", "py-notes-git")).expect("write");
    }
    git(&repo, &["init", "--quiet", "--initial-branch", "main"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "--quiet", "-m", "v0.1.0"]);
    git(&repo, &["tag", "v0.1.0"]);
    std::fs::create_dir_all(root.join("policies")).expect("mkdir");
    std::fs::write(
        root.join("policies/registry.yaml"),
        "policy: 1\nname: acme-registry\n",
    )
    .expect("policy");
    let file = root.join("registry.yaml");
    std::fs::write(
        &file,
        format!(
            "registry: 1\npolicy: policies/registry.yaml\nplugins:\n  - name: py-notes\n    version: 0.1.0\n    source: {{dir: plugins/py-notes}}\n  - name: node-notes\n    version: 0.1.0\n    source: {{dir: plugins/node-notes}}\n  - name: py-notes-git\n    version: 0.1.0\n    source: {{git: \"file://{}\", ref: v0.1.0}}\n",
            repo.display()
        ),
    )
    .expect("registry");
    file
}

/// Run the matrix row `row`'s certify step in `root` as the job would:
/// the workflow's script with the row in its environment.
fn run_row(root: &Path, workflow: &Value, row: &Value) {
    let steps = workflow["jobs"]["certify"]["steps"]
        .as_array()
        .expect("steps");
    let certify = steps
        .iter()
        .find(|s| s["env"]["KEY"].is_string())
        .expect("the certify step");
    let script = certify["run"]
        .as_str()
        .expect("run")
        .replace("--cage require", &format!("--cage {}", cage()));
    let s = |k: &str| row[k].as_str().unwrap_or_default().to_string();
    let out = std::process::Command::new("bash")
        .args(["-e", "-c", &script])
        .current_dir(root)
        .env("PATH", support::kit_path())
        .env("KEY", s("key"))
        .env("DIR", s("dir"))
        .env("GIT", s("git"))
        .env("REF", s("ref"))
        .env("POLICY", s("policy"))
        .output()
        .expect("bash");
    assert_success(format!("the certify job of {}", s("key")), &out);
}

#[test]
fn a_registry_becomes_a_matrix_its_jobs_run_and_the_reports_one_page() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path();
    let file = registry(root);

    // The GitHub matrix: one row per plugin, paths as the repository names them.
    let out = support::cmd()
        .current_dir(root)
        .args([
            "matrix",
            "registry.yaml",
            "--format",
            "github",
            "--workflow",
            ".github/workflows/registry.yml",
        ])
        .output()
        .expect("runs");
    assert_success("matrix --format github", &out);
    let matrix: Value = serde_json::from_slice(&out.stdout).expect("one JSON line");
    let rows = matrix["include"].as_array().expect("include").clone();
    let keys: Vec<&str> = rows.iter().filter_map(|r| r["key"].as_str()).collect();
    assert_eq!(
        keys,
        ["py-notes-0.1.0", "node-notes-0.1.0", "py-notes-git-0.1.0"]
    );
    assert_eq!(rows[0]["dir"], "plugins/py-notes");
    assert_eq!(rows[0]["policy"], "policies/registry.yaml");
    assert_eq!(rows[2]["ref"], "v0.1.0");
    assert!(rows[2]["git"]
        .as_str()
        .is_some_and(|g| g.starts_with("file://")));

    // The GitLab child pipeline: the same rows under parallel:matrix.
    let out = support::cmd()
        .arg("matrix")
        .arg(&file)
        .args(["--format", "gitlab"])
        .output()
        .expect("runs");
    assert_success("matrix --format gitlab", &out);
    let pipeline: Value =
        serde_saphyr::from_str(&String::from_utf8_lossy(&out.stdout)).expect("YAML");
    let gitlab_rows = pipeline["kaged-certify"]["parallel"]["matrix"]
        .as_array()
        .expect("matrix");
    assert_eq!(gitlab_rows.len(), 3);
    assert_eq!(gitlab_rows[1]["KEY"], "node-notes-0.1.0");

    // Every job, run here as the CI runs it.
    let workflow: Value = serde_saphyr::from_str(
        &std::fs::read_to_string(root.join(".github/workflows/registry.yml")).expect("workflow"),
    )
    .expect("YAML");
    assert_eq!(workflow["jobs"]["certify"]["strategy"]["fail-fast"], false);
    if support::kit_binary("kaged-host-sim").is_none() {
        return;
    }
    for row in &rows {
        run_row(root, &workflow, row);
    }
    let reports: Vec<PathBuf> = keys
        .iter()
        .map(|k| root.join(format!("reports/{k}.json")))
        .collect();
    for k in &keys {
        for f in [
            format!("reports/{k}.json"),
            format!("reports/{k}.intoto.json"),
        ] {
            assert!(root.join(&f).is_file(), "{f}");
        }
    }

    // The first merge: every plugin new and certified.
    let out = support::cmd()
        .current_dir(root)
        .arg("merge")
        .args(&reports)
        .args(["--out", "site"])
        .output()
        .expect("runs");
    assert_success("merge", &out);
    let index: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("site/index.json")).expect("index"),
    )
    .expect("JSON");
    let outcomes: Vec<(&str, &str, &str)> = index["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            (
                r["key"].as_str().unwrap_or(""),
                r["outcome"].as_str().unwrap_or(""),
                r["change"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(outcomes.len(), 3);
    assert!(
        outcomes
            .iter()
            .all(|(_, o, c)| *o == "certified" && *c == "new"),
        "{outcomes:?}"
    );
    let badge: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("site/badges/node-notes.json")).expect("badge"),
    )
    .expect("JSON");
    assert_eq!(
        badge,
        json!({"schemaVersion": 1, "label": "kaged node-notes", "message": "0.1.0 certified", "color": "brightgreen"})
    );

    // A new version of one plugin that fails a case: a regression, first.
    let mut regressed: Value =
        serde_json::from_str(&std::fs::read_to_string(&reports[1]).expect("read")).expect("JSON");
    regressed["plugin"]["version"] = json!("0.2.0");
    regressed["certification"]["outcome"] = json!("not_certified");
    let case = regressed["cases"]
        .as_array_mut()
        .and_then(|c| c.iter_mut().find(|c| c["id"] == "protocol.unknown_method"))
        .expect("a protocol case");
    case["status"] = json!("fail");
    case["kind"] = json!("wrong_answer");
    regressed["summary"]["failed"] = json!(1);
    let newer = root.join("reports/node-notes-0.2.0.json");
    std::fs::write(&newer, regressed.to_string()).expect("write");
    let out = support::cmd()
        .current_dir(root)
        .arg("merge")
        .arg(&reports[0])
        .arg(&newer)
        .arg(&reports[2])
        .args(["--out", "site2", "--previous", "site/index.json"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1), "a plugin not certified: exit 1");
    let index: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("site2/index.json")).expect("index"),
    )
    .expect("JSON");
    let first = &index["rows"][0];
    assert_eq!(
        (first["key"].as_str(), first["change"].as_str()),
        (Some("node-notes-0.2.0"), Some("regressed")),
        "{index}"
    );
    assert_eq!(
        first["groups"]["protocol"]["kinds"],
        json!(["wrong_answer"])
    );
    let md = std::fs::read_to_string(root.join("site2/index.md")).expect("md");
    assert!(
        md.contains("| node-notes | 0.2.0 | not certified | regressed since 0.1.0 |"),
        "{md}"
    );
    assert!(root.join("site2/reports/node-notes-0.2.0.json").is_file());

    // The page in a real browser: every row, the regression first.
    let html = root.join("site2/index.html");
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(page_in_a_browser(&html));
}

async fn page_in_a_browser(html: &Path) {
    let Some(tools) = browser_tools_for("the registry page in a real browser") else {
        return;
    };
    let browser = Browser::open(&tools, Duration::from_secs(10)).await;
    let c = browser.client();
    c.goto(&format!("file://{}", html.display()))
        .await
        .expect("open the page");
    let rows = c
        .execute(
            "return [...document.querySelectorAll('#registry tbody tr')].map(r => [r.dataset.key, r.dataset.change, r.dataset.outcome, getComputedStyle(r.querySelector('td.plugin')).borderLeftStyle]);",
            vec![],
        )
        .await
        .expect("the rows");
    assert_eq!(
        rows[0],
        json!(["node-notes-0.2.0", "regressed", "not_certified", "solid"]),
        "{rows}"
    );
    assert_eq!(rows.as_array().map(Vec::len), Some(3), "{rows}");
    let failed = c
        .execute(
            "return document.querySelector('tr[data-key=\"node-notes-0.2.0\"] td[data-group=\"protocol\"]').className;",
            vec![],
        )
        .await
        .expect("the protocol cell");
    assert_eq!(failed, "fail");
    let shot = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("registry-page.png");
    browser.finish(&shot).await;
}
