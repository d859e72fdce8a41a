//! Project-load-driven install over the API (plugin-host.md
//! § Project-load-driven install; ADDENDUM §16): `up --store --project`
//! with plugins the store lacks lists consent requests, fetches a git
//! source only on approval, installs on a second approval what was shown,
//! refuses without installing, and loads the project once every plugin is
//! in: the new plugins run, `local = false`, for that project.

use std::ffi::OsStr;

use serde_json::Value;

use crate::harness::{raw, Up};
use crate::support::host::shell_adapter_as;
use kaged_test_support::command::git;

fn request(up: &Up, method: &str, path: &str) -> (u16, Value, String) {
    let bearer = up.bearer();
    let reply = raw(
        &up.addr,
        method,
        path,
        Some(&up.addr),
        &[(bearer.0, &bearer.1)],
        None,
    );
    let json = serde_json::from_str(&reply.body).unwrap_or(Value::Null);
    (reply.status, json, reply.head)
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines()
        .find_map(|l| {
            l.split_once(':')
                .filter(|(k, _)| k.eq_ignore_ascii_case(name))
        })
        .map(|(_, v)| v.trim())
}

fn pending(up: &Up) -> Value {
    let (status, body) = up.http("GET", "/api/v1/pending", None);
    assert_eq!(status, 200, "{body}");
    body
}

fn entry<'a>(list: &'a Value, plugin: &str) -> &'a Value {
    list["pending"]
        .as_array()
        .and_then(|a| a.iter().find(|r| r["plugin"] == plugin))
        .unwrap_or_else(|| panic!("no {plugin} in {list}"))
}

/// A git repository of the plugin `name` under `root/repos`, its one
/// commit tagged `v0.1.0`.
fn tagged_repo(root: &std::path::Path, name: &str) -> std::path::PathBuf {
    let repo = root.join("repos").join(name);
    shell_adapter_as(&repo, name);
    git(&repo, &["init", "--quiet", "--initial-branch", "main"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "--quiet", "-m", "v0.1.0"]);
    git(&repo, &["tag", "v0.1.0"]);
    repo
}

#[test]
fn a_pending_project_asks_consent_over_the_api_and_loads_when_installed() {
    let store = tempfile::tempdir().expect("store");
    let proj = tempfile::tempdir().expect("project");
    shell_adapter_as(&proj.path().join("vendor/local-one"), "local-one");
    let repo = tagged_repo(proj.path(), "remote-one");
    let file = proj.path().join("project.yaml");
    std::fs::write(
        &file,
        format!(
            "primary:\n  plugins:\n    local:\n      package: \"@kaged/local-one\"\n      version: \"^0.1\"\n      source: ./vendor/local-one\n    remote:\n      package: \"@kaged/remote-one\"\n      version: \"0.1.0\"\n      source: git+file://{}\n",
            repo.display()
        ),
    )
    .expect("project");
    let mut up = Up::start_args(&[
        OsStr::new("--store"),
        store.path().as_os_str(),
        OsStr::new("--project"),
        file.as_os_str(),
    ]);
    let line = up.wait_line(|l| l.starts_with("project: pending: "));
    assert!(line.contains("2 await the operator's consent"), "{line}");

    // The directory's manifest is shown at once; the git source only by
    // its URL: nothing is fetched yet.
    let list = pending(&up);
    assert_eq!(list["project"], "pending");
    let local = entry(&list, "local-one");
    assert_eq!(local["state"], "awaiting_consent", "{local}");
    assert_eq!(local["plan"]["version"], "0.1.0");
    assert_eq!(local["plan"]["capabilities"], serde_json::json!(["net:[]"]));
    let remote = entry(&list, "remote-one");
    assert_eq!(remote["state"], "awaiting_fetch", "{remote}");
    assert!(remote["plan"].is_null());
    let requested = up
        .audit()
        .into_iter()
        .filter(|r| r["event"] == "plugin.consent_requested")
        .count();
    assert_eq!(requested, 2);

    // Refused: nothing fetched, the project stays pending.
    let (status, body, _) = request(&up, "POST", "/api/v1/pending/remote-one/refuse");
    assert_eq!(
        (status, &body["request"]["state"]),
        (200, &Value::from("refused")),
        "{body}"
    );
    assert!(up
        .audit()
        .iter()
        .any(|r| r["event"] == "plugin.install_declined"));
    let (status, body, _) = request(&up, "POST", "/api/v1/pending/nobody/approve");
    assert_eq!(
        (status, &body["error"]["code"]),
        (404, &Value::from("unknown_pending")),
        "{body}"
    );

    // Approved: installed, in the request's name.
    let (status, body, head) = request(&up, "POST", "/api/v1/pending/local-one/approve");
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["installed"], true, "{body}");
    let id = header(&head, "x-request-id")
        .expect("X-Request-Id")
        .to_string();
    let installed = up
        .audit()
        .into_iter()
        .find(|r| r["event"] == "plugin.installed" && r["plugin"] == "local-one")
        .expect("plugin.installed");
    assert_eq!(installed["request_id"], id.as_str(), "{installed}");

    // The refused git source, approved after all: fetched (the tag of the
    // declared version), its manifest shown; then installed.
    let (status, body, _) = request(&up, "POST", "/api/v1/pending/remote-one/approve");
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["request"]["state"], "awaiting_consent", "{body}");
    assert_eq!(body["request"]["plan"]["name"], "remote-one");
    let (status, body, _) = request(&up, "POST", "/api/v1/pending/remote-one/approve");
    assert_eq!(
        (status, &body["installed"]),
        (200, &Value::Bool(true)),
        "{body}"
    );

    // Every plugin in: the project loads and its plugins run.
    up.wait_line(|l| l == "project: every declared plugin is installed; loading it");
    let line = up.wait_line(|l| l.starts_with("project: ") && l.contains("agents: primary"));
    assert!(line.contains(&proj.path().display().to_string()), "{line}");
    // Said once the API serves the loaded project's daemon.
    up.wait_line(|l| {
        l.starts_with("plugins: ") && l.contains("local-one") && l.contains("remote-one")
    });
    for name in ["local-one", "remote-one"] {
        up.wait_plugin(name, |p| p["state"] == "running");
    }
    assert_eq!(
        pending(&up),
        serde_json::json!({"project": "loaded", "pending": []})
    );
    let config = std::fs::read_to_string(store.path().join("config.toml")).expect("config");
    assert_eq!(config.matches("local = false").count(), 2, "{config}");
    assert!(!store.path().join("plugins/remote-one/.git").exists());
}

/// The consent request on the settings page, in a real browser (headless
/// Chromium; skipped with a message outside CI when it cannot start): the
/// request shows its source, requirement and capabilities; its approve
/// button installs it, and the page then shows the project's plugin
/// running and the panel gone.
#[tokio::test(flavor = "multi_thread")]
async fn the_consent_request_on_the_settings_page_in_a_real_browser() {
    use fantoccini::Locator;
    use kaged_test_support::browser::{browser_tools_for, Browser};

    use crate::browser::wait_js;
    use crate::support::host::LIMIT;

    let Some(tools) = browser_tools_for("the consent request on the settings page") else {
        return;
    };
    let browser = Browser::open(&tools, LIMIT).await;
    let store = tempfile::tempdir().expect("store");
    let proj = tempfile::tempdir().expect("project");
    shell_adapter_as(&proj.path().join("vendor/paged-one"), "paged-one");
    let file = proj.path().join("project.yaml");
    std::fs::write(
        &file,
        "primary:\n  plugins:\n    paged:\n      package: \"@kaged/paged-one\"\n      source: ./vendor/paged-one\n",
    )
    .expect("project");
    let up = tokio::task::block_in_place(|| {
        let mut up = Up::start_args(&[
            OsStr::new("--store"),
            store.path().as_os_str(),
            OsStr::new("--project"),
            file.as_os_str(),
        ]);
        up.wait_line(|l| l.starts_with("project: pending: "));
        up
    });
    let c = browser.client();
    c.goto(&up.settings_url).await.expect("open the page");
    let shown = wait_js(
        c,
        "the consent request",
        r#"const li = document.querySelector('#pending li[data-plugin="paged-one"]');
           return li && !document.getElementById('pending').hidden
             ? [li.dataset.state, li.textContent] : null;"#,
        |v| !v.is_null(),
    )
    .await;
    assert_eq!(shown[0], "awaiting_consent", "{shown}");
    let text = shown[1].as_str().unwrap_or_default();
    for needle in [
        "@kaged/paged-one",
        "vendor/paged-one",
        "net:[]",
        "paged-one 0.1.0",
    ] {
        assert!(text.contains(needle), "{needle:?} in {text}");
    }
    c.find(Locator::Css(
        r#"#pending li[data-plugin="paged-one"] button.approve"#,
    ))
    .await
    .expect("the approve button")
    .click()
    .await
    .expect("click approve");
    wait_js(
        c,
        "the project's plugin running, the panel gone",
        r#"const card = document.querySelector('.plugin[data-plugin="paged-one"]');
           return [document.getElementById('pending').hidden, card && card.dataset.state];"#,
        |v| v == &serde_json::json!([true, "running"]),
    )
    .await;
    let config = std::fs::read_to_string(store.path().join("config.toml")).expect("config");
    assert!(config.contains("local = false"), "{config}");
    drop(up);
}

/// A `git` first on `up`'s `PATH` that holds its fetch until the test lets
/// it go: it says it started on the fifo `started` and waits for a line on
/// `release` (at most a minute, so that nothing outlives a failed test),
/// then runs the real git.
fn held_git(bin: &std::path::Path, fifos: &std::path::Path) {
    let real = ["/usr/bin/git", "/usr/local/bin/git", "/bin/git"]
        .into_iter()
        .find(|p| std::path::Path::new(p).is_file())
        .expect("git");
    std::fs::create_dir_all(bin).expect("mkdir");
    for f in ["started", "release"] {
        rustix::fs::mknodat(
            rustix::fs::CWD,
            fifos.join(f),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .expect("mkfifo");
    }
    let script = format!(
        "#!/bin/bash\nexec 3<>{dir}/started 4<>{dir}/release\necho started >&3\nread -t 60 -u 4 || exit 1\nexec 3>&- 4>&-\nexec {real} \"$@\"\n",
        dir = fifos.display()
    );
    let path = bin.join("git");
    std::fs::write(&path, script).expect("write the stand-in");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// Lets the held git go when dropped, so that a failing test leaves no
/// stand-in waiting (no reader yet: nothing to let go).
struct Release(std::path::PathBuf);

impl Drop for Release {
    fn drop(&mut self) {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
            .open(&self.0)
        {
            let _ = f.write_all(b"go\n");
        }
    }
}

/// While an approval's fetch runs, the list stays readable and a second
/// approval or a refusal of the same plugin answers `409 busy`; when the
/// fetch is let go, the first approval answers with the manifest shown.
#[test]
fn an_approval_while_one_runs_is_busy_and_the_list_stays_readable() {
    let store = tempfile::tempdir().expect("store");
    let proj = tempfile::tempdir().expect("project");
    let repo = tagged_repo(proj.path(), "remote-one");
    let file = proj.path().join("project.yaml");
    std::fs::write(
        &file,
        format!(
            "primary:\n  plugins:\n    remote:\n      package: \"@kaged/remote-one\"\n      version: \"0.1.0\"\n      source: git+file://{}\n",
            repo.display()
        ),
    )
    .expect("project");
    let bin = proj.path().join("bin");
    held_git(&bin, proj.path());
    let path = std::env::join_paths(std::iter::once(bin.clone()).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH");
    let mut up = Up::start_with_env(
        &[("PATH", path.as_os_str())],
        &[
            OsStr::new("--store"),
            store.path().as_os_str(),
            OsStr::new("--project"),
            file.as_os_str(),
        ],
    );
    up.wait_line(|l| l.starts_with("project: pending: "));

    let release = Release(proj.path().join("release"));
    let first = std::thread::scope(|s| {
        let (addr, (key, token)) = (up.addr.clone(), up.bearer());
        let first = s.spawn(move || {
            let reply = raw(
                &addr,
                "POST",
                "/api/v1/pending/remote-one/approve",
                Some(&addr),
                &[(key, &token)],
                None,
            );
            let json = serde_json::from_str(&reply.body).unwrap_or(Value::Null);
            (reply.status, json)
        });
        // The fetch has started (the held git said so): the approval is
        // under way, outside the lock.
        let mut said = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(
                std::fs::File::open(proj.path().join("started")).expect("open started"),
            ),
            &mut said,
        )
        .expect("read started");
        assert_eq!(said, "started\n");
        let list = pending(&up);
        assert_eq!(
            entry(&list, "remote-one")["state"],
            "awaiting_fetch",
            "{list}"
        );
        for action in ["approve", "refuse"] {
            let (status, body, _) =
                request(&up, "POST", &format!("/api/v1/pending/remote-one/{action}"));
            assert_eq!(
                (status, &body["error"]["code"]),
                (409, &Value::from("busy")),
                "{action} while the fetch runs: {body}"
            );
        }
        drop(release);
        first.join().expect("the first approval")
    });
    let (status, body) = first;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["request"]["state"], "awaiting_consent", "{body}");
    assert_eq!(body["request"]["plan"]["name"], "remote-one", "{body}");
    // Not refused by the refusal that came while it was busy.
    let list = pending(&up);
    assert_eq!(
        entry(&list, "remote-one")["state"],
        "awaiting_consent",
        "{list}"
    );
    assert!(!up
        .audit()
        .iter()
        .any(|r| r["event"] == "plugin.install_declined"));
}
