//! The settings page in a real browser: headless Chromium through
//! ChromeDriver (Debian's `chromium` and `chromium-driver`), driven with
//! fantoccini. The page renders a knob of every type, a knob change
//! reaches the plugin as `config.update`, an out-of-bounds value shows the
//! daemon's message (and nothing reaches the plugin), and a killed plugin
//! shows its restart. The page is opened with the settings URL `up`
//! printed (`#token=`): the page keeps the token in `sessionStorage`, takes
//! it out of the address bar, and sends it as a bearer token (every fetch,
//! the audit stream) or a WebSocket subprotocol; no cookie is set. A
//! screenshot is kept under `target/` as an artifact.
//!
//! Under `CI=true` the test fails when the browser cannot start; elsewhere
//! it says on stderr that it is skipped.

use std::time::{Duration, Instant};

use fantoccini::{Client, Locator};
use kaged_test_support::browser::{browser_tools_for, Browser};
use serde_json::Value;

use crate::harness::{plugins, Up};
use crate::support::host::LIMIT;

/// Every knob type of the spec, as the `settings` fixture declares them.
const KNOB_TYPES: [&str; 8] = [
    "range",
    "int_range",
    "enum",
    "boolean",
    "text",
    "multiline",
    "model_alias",
    "path",
];

/// Evaluate `script` (a function body that returns a value) until `pred`
/// holds for its result, polling every 50 ms, at most [`LIMIT`].
pub async fn wait_js(c: &Client, what: &str, script: &str, pred: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + LIMIT;
    loop {
        let v = c.execute(script, vec![]).await.expect("execute script");
        if pred(&v) {
            return v;
        }
        assert!(Instant::now() < deadline, "{what}: never held; last {v}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The `.msg` text of knob `knob` once it is `ok` or `error`.
async fn knob_message(c: &Client, knob: &str) -> (String, String) {
    let script = format!(
        r#"const m = document.querySelector('.plugin[data-plugin="settings"] .knob[data-knob="{knob}"] .msg');
           return m && (m.classList.contains('ok') || m.classList.contains('error'))
               ? [m.className, m.textContent] : null;"#
    );
    let v = wait_js(c, &format!("a message on {knob}"), &script, |v| {
        !v.is_null()
    })
    .await;
    let s = |i: usize| v[i].as_str().unwrap_or_default().to_string();
    (s(0), s(1))
}

/// Type `text` into knob `knob`'s number/text box and press Apply.
async fn set_knob(c: &Client, knob: &str, text: &str) {
    let row = format!(r#".plugin[data-plugin="settings"] .knob[data-knob="{knob}"]"#);
    // Clear the previous message first, so the next one is this write's.
    c.execute(
        &format!(r#"document.querySelector('{row} .msg').className = 'msg';"#),
        vec![],
    )
    .await
    .expect("clear the message");
    let input = c
        .find(Locator::Css(&format!(r#"{row} [name="{knob}"]"#)))
        .await
        .expect("the knob's input");
    input.clear().await.expect("clear");
    input.send_keys(text).await.expect("type");
    c.find(Locator::Css(&format!("{row} button.apply")))
        .await
        .expect("Apply")
        .click()
        .await
        .expect("click Apply");
}

fn seen_configs(up: &Up) -> Vec<Value> {
    let (status, seen) = up.http("POST", "/api/v1/plugins/settings/call/settings.seen", None);
    assert_eq!(status, 200, "{seen}");
    seen["configs"].as_array().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_settings_page_in_a_real_browser() {
    let Some(tools) = browser_tools_for("the settings page in a real browser") else {
        return;
    };
    let browser = Browser::open(&tools, LIMIT).await;
    let dir = plugins(&["settings", "good"]);
    let up = tokio::task::block_in_place(|| {
        let up = Up::start(dir.path());
        for name in ["settings", "good"] {
            up.wait_plugin(name, |p| p["state"] == "running");
        }
        up
    });
    let c = browser.client();
    // The URL `up` printed: the page takes the token from its fragment
    // (never sent to a server), keeps it in this tab's sessionStorage and
    // takes it out of the address bar (and the history entry).
    c.goto(&up.settings_url).await.expect("open the page");
    let page = format!("http://{}/", up.addr);
    wait_js(
        c,
        "the token out of the address bar",
        "return location.href;",
        |v| v == page.as_str(),
    )
    .await;
    let url = c.current_url().await.expect("the page's URL");
    assert_eq!(url.as_str(), page);
    let kept = c
        .execute(
            "return [document.cookie, sessionStorage.getItem('kaged_token')];",
            vec![],
        )
        .await
        .expect("the page's cookies and storage");
    assert_eq!(kept, serde_json::json!(["", up.token]));

    // A knob of every type, rendered from the knob schema.
    let types = wait_js(
        c,
        "the knob panel",
        r#"return [...document.querySelectorAll('.plugin[data-plugin="settings"] .knob')]
               .map(k => k.dataset.type);"#,
        |v| v.as_array().is_some_and(|a| a.len() == KNOB_TYPES.len()),
    )
    .await;
    for t in KNOB_TYPES {
        assert!(
            types.as_array().is_some_and(|a| a.contains(&t.into())),
            "{t} in {types}"
        );
    }
    let options = c
        .execute(
            r#"return [...document.querySelectorAll('select[name="recall_budget"] option')]
                   .map(o => o.textContent);"#,
            vec![],
        )
        .await
        .expect("enum options");
    assert_eq!(
        options,
        serde_json::json!([
            "Low (fast, less context)",
            "Mid (balanced)",
            "High (deep, slower)"
        ])
    );
    let shown = c
        .execute(
            r#"return document.querySelector('.knob[data-knob="retain_every"] input[type=number]').value;"#,
            vec![],
        )
        .await
        .expect("the value in force");
    assert_eq!(shown, "3");
    // The plugin without knobs says so.
    wait_js(
        c,
        "the good plugin's empty panel",
        r#"const p = document.querySelector('.plugin[data-plugin="good"] .knobs');
           return p ? p.textContent : '';"#,
        |v| v.as_str().is_some_and(|t| t.contains("no knobs")),
    )
    .await;

    // The good plugin's live notifications, from its WebSocket (the token
    // rides as a subprotocol of the upgrade).
    wait_js(
        c,
        "the good plugin's notification socket",
        r#"return document.querySelector('.plugin[data-plugin="good"] .badge.socket').textContent;"#,
        |v| v == "live",
    )
    .await;
    let (status, body) = tokio::task::block_in_place(|| {
        // Running (a machine under load may still be starting it).
        up.wait_plugin("good", |p| p["state"] == "running");
        up.http(
            "POST",
            "/api/v1/plugins/good/call/notify.emit",
            Some(r#"{"n": 5}"#),
        )
    });
    assert_eq!(status, 200, "{body}");
    wait_js(
        c,
        "the notification on the page",
        r#"return [...document.querySelectorAll('.plugin[data-plugin="good"] .notifications li')]
               .map(li => li.textContent);"#,
        |v| {
            v.as_array().is_some_and(|a| {
                a.iter().any(|t| {
                    t.as_str()
                        .is_some_and(|t| t.contains(r#"echo.done {"n":5}"#))
                })
            })
        },
    )
    .await;

    // A change reaches the plugin as config.update.
    set_knob(c, "retain_every", "7").await;
    let (class, text) = knob_message(c, "retain_every").await;
    assert!(class.contains("ok"), "{class}: {text}");
    // The first config is the one sent right after the handshake (the
    // defaults); the second is the knob write.
    let configs = tokio::task::block_in_place(|| seen_configs(&up));
    assert_eq!(configs.len(), 2, "{configs:?}");
    assert_eq!(configs[0]["retain_every"], 3);
    assert_eq!(configs[1]["retain_every"], 7);

    // Out of bounds: the daemon's message, and nothing sent.
    set_knob(c, "retain_every", "99").await;
    let (class, text) = knob_message(c, "retain_every").await;
    assert!(class.contains("error"), "{class}: {text}");
    assert!(text.contains("above max 20"), "{text}");
    set_knob(c, "title", "Way Too Long A Title").await;
    let (class, text) = knob_message(c, "title").await;
    assert!(
        class.contains("error") && text.contains("max_length 12"),
        "{text}"
    );
    assert_eq!(tokio::task::block_in_place(|| seen_configs(&up)).len(), 2);

    // Kill the plugin: the page shows the restart and its history.
    let row = up.plugin("settings");
    let first = row["pid"].as_u64().expect("a pid");
    // At least one restart more than before (a machine under load may
    // have restarted it already, after missed pings).
    let restarts = row["restarts"].as_u64().unwrap_or_default() + 1;
    let pid = rustix::process::Pid::from_raw(first as i32).expect("a pid");
    rustix::process::kill_process(pid, rustix::process::Signal::KILL).expect("SIGKILL");
    wait_js(
        c,
        "the restart on the page",
        &format!(
            r#"const p = document.querySelector('.plugin[data-plugin="settings"]');
               const f = (k) => p.querySelector(`[data-fact="${{k}}"] dd`).textContent;
               return p.dataset.state === 'running' && Number(f('restarts')) >= {restarts}
                   && !!p.querySelector('.history li[data-event="plugin.crashed"]')
                   && f('last_exit') === 'signal 9';"#
        ),
        |v| v == &Value::Bool(true),
    )
    .await;
    // A restart within the failure window: degraded, the reason shown.
    wait_js(
        c,
        "the degraded health on the page",
        r#"const p = document.querySelector('.plugin[data-plugin="settings"]');
           const badge = p.querySelector('.badge.health');
           const fact = p.querySelector('[data-fact="health"] dd').textContent;
           return badge.dataset.health === 'degraded' && fact.includes('restarted')
               && badge.title === fact;"#,
        |v| v == &Value::Bool(true),
    )
    .await;
    wait_js(
        c,
        "the crash in the audit tail",
        r#"return !!document.querySelector('#audit li[data-event="plugin.crashed"][data-plugin="settings"]');"#,
        |v| v == &Value::Bool(true),
    )
    .await;
    // The restarted process got the knob values in force, right after its
    // handshake.
    let configs = tokio::task::block_in_place(|| seen_configs(&up));
    assert_eq!(configs.len(), 1, "{configs:?}");
    assert_eq!(configs[0]["retain_every"], 7);

    // No cookie was ever set for 127.0.0.1 (cookies are not scoped by
    // port: one would reach every loopback server).
    let cookies = c.get_all_cookies().await.expect("the browser's cookies");
    assert!(cookies.is_empty(), "{cookies:?}");

    let shot = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("settings-page.png");
    browser.finish(&shot).await;
}
