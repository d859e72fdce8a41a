//! Consent is checked at every start (ADDENDUM §16): `up --store` does not
//! start, nor restart, a plugin whose installed manifest asks more than was
//! consented at install (`plugin.capability_overreach`, `disabled`, the
//! command that re-consents in the API row, in `plugin list` and on the
//! settings page); `plugin consent` lets it start again. No grant may reach
//! the store: refused at install, and at start should one be recorded.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Output;

use serde_json::{json, Value};

use crate::harness::Up;
use crate::support::host::{shell_adapter_at, LIMIT};
use kaged_test_support::browser::{browser_tools_for, Browser};
use kaged_test_support::command::assert_success;

const NAME: &str = "my-simple-adapter";

/// `kaged-host-sim plugin ARGS --store STORE`.
fn plugin(store: &Path, args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_kaged-host-sim"))
        .env_remove("KAGED_HOME")
        .arg("plugin")
        .args(args)
        .arg("--store")
        .arg(store)
        .output()
        .expect("run")
}

/// [`plugin`], which must succeed: its stdout.
fn plugin_ok(store: &Path, args: &[&str]) -> String {
    let out = plugin(store, args);
    assert_success(format_args!("plugin {args:?}"), &out);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A store with the shell adapter installed (consenting to `net:[]`) and
/// enabled.
fn installed() -> (tempfile::TempDir, tempfile::TempDir) {
    let store = tempfile::tempdir().expect("tempdir");
    let src = shell_adapter_at("0.1.0");
    let dir = src.path().to_str().expect("utf-8 path");
    plugin_ok(store.path(), &["install", dir, "--yes"]);
    plugin_ok(store.path(), &["enable", NAME]);
    (store, src)
}

/// Add `capabilities` to the installed copy's manifest, as a plugin whose
/// write grant covered its own copy would have.
fn widen_installed(store: &Path, capabilities: &[&str]) {
    let file = store.join("plugins").join(NAME).join("kaged-plugin.yaml");
    let text = std::fs::read_to_string(&file).expect("read");
    let added: String = capabilities
        .iter()
        .map(|c| format!("  - \"{c}\"\n"))
        .collect();
    let wider = text.replace("  - net: []\n", &format!("  - net: []\n{added}"));
    assert_ne!(wider, text, "the fixture lists `net: []`");
    std::fs::write(&file, wider).expect("rewrite");
}

fn up_store(store: &Path) -> Up {
    Up::start_args(&[OsStr::new("--store"), store.as_os_str()])
}

fn records<'a>(audit: &'a [Value], event: &str) -> Vec<&'a Value> {
    audit.iter().filter(|r| r["event"] == event).collect()
}

/// Wait until the daemon has refused the plugin: its row.
fn wait_refused(up: &Up) -> Value {
    up.wait_plugin(NAME, |p| {
        p["state"] == "disabled" && !p["refusal"].is_null()
    })
}

#[test]
fn a_plugin_that_widened_its_manifest_is_not_restarted_until_consent_is_given_again() {
    let (store, _src) = installed();
    let up = up_store(store.path());
    let first = up.wait_plugin(NAME, |p| p["state"] == "running");
    assert_eq!(first["refusal"], Value::Null);

    // The attack: the manifest of the installed copy asks for more, and
    // the plugin exits to be restarted with it.
    widen_installed(store.path(), &["read:fs:/root", "net:*"]);
    let pid = first["pid"].as_u64().expect("a pid") as i32;
    let pid = rustix::process::Pid::from_raw(pid).expect("a pid");
    rustix::process::kill_process(pid, rustix::process::Signal::KILL).expect("SIGKILL");

    let row = wait_refused(&up);
    let reconsent = format!(
        "kaged-host-sim plugin consent {NAME} --store {}",
        store.path().display()
    );
    assert_eq!(row["pid"], Value::Null, "not running: {row}");
    assert_eq!(row["refusal"]["reason"], "capability_overreach");
    assert_eq!(
        row["refusal"]["capabilities"],
        json!(["read:fs:/root", "net:*"])
    );
    assert_eq!(row["refusal"]["remedy"], reconsent.as_str());
    let audit = up.audit();
    let over = records(&audit, "plugin.capability_overreach");
    assert_eq!(over.len(), 1, "{audit:?}");
    assert_eq!(over[0]["reason"], "not_consented");
    assert_eq!(over[0]["excess"], json!(["read:fs:/root", "net:*"]));
    assert_eq!(over[0]["consented"], json!(["net:[]"]));
    assert_eq!(over[0]["reconsent"], reconsent.as_str());
    assert_ne!(over[0]["manifest_sha256"], over[0]["consented_sha256"]);
    let disabled = records(&audit, "plugin.disabled");
    assert_eq!(disabled.len(), 1, "{audit:?}");
    assert_eq!(disabled[0]["reason"], "capability_overreach");
    assert_eq!(
        records(&audit, "plugin.spawned").len(),
        1,
        "the widened manifest never ran: {audit:?}"
    );

    // `plugin list` says why, and how to let it start.
    let list = plugin_ok(store.path(), &["list"]);
    assert!(
        list.contains(&format!(
            "{NAME}\t0.1.0\tdisabled (capability overreach: read:fs:/root, net:*)\tlocal\t"
        )) && list.contains(&format!("  → re-consent with: {reconsent}")),
        "{list}"
    );

    // Consent given again: the running daemon starts it.
    let text = plugin_ok(store.path(), &["consent", NAME, "--yes"]);
    assert!(
        text.contains("  + read:fs:/root    (NEW)")
            && text.contains("  + net:*    (NEW)")
            && text.contains("The running daemon had refused it: running"),
        "{text}"
    );
    let row = up.wait_plugin(NAME, |p| p["state"] == "running");
    assert_eq!(row["refusal"], Value::Null);
    assert_ne!(row["pid"], first["pid"]);
    let list = plugin_ok(store.path(), &["list"]);
    assert!(
        list.starts_with(&format!("{NAME}\t0.1.0\tenabled\tlocal\t")),
        "{list}"
    );
}

#[test]
fn up_does_not_start_a_plugin_whose_manifest_asks_more_than_was_consented() {
    let (store, _src) = installed();
    widen_installed(store.path(), &["net:*"]);
    let up = up_store(store.path());
    let row = wait_refused(&up);
    assert_eq!(row["refusal"]["capabilities"], json!(["net:*"]));
    let audit = up.audit();
    assert_eq!(records(&audit, "plugin.capability_overreach").len(), 1);
    assert!(records(&audit, "plugin.spawned").is_empty(), "{audit:?}");
    // An operator enable asks again, and is refused again.
    let (status, row) = up.http("POST", &format!("/api/v1/plugins/{NAME}/enable"), None);
    assert_eq!(status, 200, "{row}");
    let row = wait_refused(&up);
    assert_eq!(row["refusal"]["reason"], "capability_overreach");
    assert!(records(&up.audit(), "plugin.spawned").is_empty());
}

#[test]
fn a_grant_reaching_the_store_is_refused_at_install_and_at_start() {
    let store = tempfile::tempdir().expect("tempdir");
    let real = kaged_host_core::cage::resolved_path(store.path());
    let copy = real.join("plugins").join(NAME);
    let grant = format!("write:fs:{}", copy.display());

    // Install: refused, naming the grant and what it reaches.
    let src = shell_adapter_at("0.1.0");
    let yaml = src.path().join("kaged-plugin.yaml");
    let text = std::fs::read_to_string(&yaml).expect("read");
    std::fs::write(
        &yaml,
        text.replace("  - net: []\n", &format!("  - net: []\n  - \"{grant}\"\n")),
    )
    .expect("write");
    let dir = src.path().to_str().expect("utf-8 path");
    let out = plugin(store.path(), &["install", dir, "--yes"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("`{grant}`"))
            && err.contains(&copy.display().to_string())
            && err.contains("read-only to its own cage"),
        "{err}"
    );
    assert!(!copy.exists(), "nothing installed");

    // At start: a consent recorded for it (as one given before the check
    // existed) does not start it either.
    let (store, _src) = installed();
    let real = kaged_host_core::cage::resolved_path(store.path());
    let grant = format!("write:fs:{}", real.join("plugins").join(NAME).display());
    widen_installed(store.path(), &[&grant]);
    let record = store.path().join("config.toml");
    let text = std::fs::read_to_string(&record).expect("read");
    let consented = text.replace(
        "capabilities = [\"net:[]\"]",
        &format!("capabilities = [\"net:[]\", \"{grant}\"]"),
    );
    assert_ne!(consented, text, "{text}");
    std::fs::write(&record, consented).expect("write");
    let up = up_store(store.path());
    let row = wait_refused(&up);
    assert_eq!(row["refusal"]["reason"], "grant_covers_store");
    assert_eq!(row["refusal"]["remedy"], Value::Null);
    let audit = up.audit();
    let over = records(&audit, "plugin.capability_overreach");
    assert_eq!(over.len(), 1, "{audit:?}");
    assert_eq!(over[0]["reason"], "covers_store");
    assert_eq!(over[0]["excess"], json!([grant]));
    assert!(records(&audit, "plugin.spawned").is_empty(), "{audit:?}");
    // No consent lets it start.
    let out = plugin(store.path(), &["consent", NAME, "--yes"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&format!("`{grant}`")),
        "{out:?}"
    );
    let list = plugin_ok(store.path(), &["list"]);
    assert!(
        list.contains(&format!(
            "\tdisabled (grant reaches the plugin store: {grant})\t"
        )),
        "{list}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_settings_page_shows_a_refused_plugin_with_the_command_that_re_consents() {
    let Some(tools) = browser_tools_for("the settings page's consent refusal") else {
        return;
    };
    let (store, _src) = installed();
    widen_installed(store.path(), &["net:*"]);
    let up = tokio::task::block_in_place(|| {
        let up = up_store(store.path());
        wait_refused(&up);
        up
    });
    let browser = Browser::open(&tools, LIMIT).await;
    let c = browser.client();
    c.goto(&up.settings_url).await.expect("open the page");
    let script = format!(
        r#"const r = document.querySelector('.plugin[data-plugin="{NAME}"] .refusal');
           return r ? [r.dataset.reason, r.textContent, r.querySelector('code.remedy').textContent] : null;"#
    );
    let deadline = std::time::Instant::now() + LIMIT;
    let shown = loop {
        let v = c.execute(&script, vec![]).await.expect("execute script");
        if !v.is_null() {
            break v;
        }
        assert!(std::time::Instant::now() < deadline, "no refusal shown");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    let reconsent = format!(
        "kaged-host-sim plugin consent {NAME} --store {}",
        store.path().display()
    );
    assert_eq!(shown[0], "capability_overreach");
    assert!(
        shown[1]
            .as_str()
            .is_some_and(|t| t.contains("asks net:* beyond the consent")),
        "{shown}"
    );
    assert_eq!(shown[2], reconsent.as_str());
    browser
        .finish(&std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("consent-refusal.png"))
        .await;
}
