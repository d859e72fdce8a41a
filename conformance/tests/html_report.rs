//! The HTML report in a real browser: headless Chromium through
//! ChromeDriver (the browser set-up of the daemon's settings page,
//! `kaged_test_support::browser`), driven with fantoccini. The page
//! loads without errors, filtering to failures shows exactly the failed
//! cases, expanding a case shows its wire lines with their directions. A
//! screenshot is kept under `target/` as an artifact.
//!
//! Under `CI=true` the test fails when the browser cannot start; elsewhere
//! it says on stderr that it is skipped.

mod support;

use std::time::{Duration, Instant};

use fantoccini::{Client, Locator};
use kaged_test_support::browser::{browser_tools_for, Browser};
use serde_json::Value;
use support::{cmd, own_fixture};

/// How long a browser wait may take before the test fails.
const LIMIT: Duration = Duration::from_secs(10);

/// The ids of the cases the page shows.
async fn shown_ids(c: &Client) -> Vec<String> {
    let v = c
        .execute(
            "return [...document.querySelectorAll('tr.case')].filter(r => !r.hidden).map(r => r.dataset.id);",
            vec![],
        )
        .await
        .expect("the shown rows");
    serde_json::from_value(v).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_html_report_in_a_real_browser() {
    let Some(tools) = browser_tools_for("the HTML report in a real browser") else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let html = tmp.path().join("report.html");
    // A run with passing, failing, warning and skipped cases; the JSON
    // report says which.
    let out = cmd()
        .args(["run", "--time-scale", "1", "--format", "json", "--report"])
        .arg(format!("html={}", html.display()))
        .arg(own_fixture("hook-errors"))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let json: Value = serde_json::from_slice(&out.stdout).expect("the JSON report");
    let cases = json["cases"].as_array().cloned().unwrap_or_default();
    let ids_of = |status: &str| -> Vec<String> {
        cases
            .iter()
            .filter(|c| status == "all" || c["status"] == status)
            .filter_map(|c| c["id"].as_str().map(str::to_string))
            .collect()
    };
    let failed = ids_of("fail");
    assert!(!failed.is_empty(), "a failing run");

    let browser = Browser::open(&tools, LIMIT).await;
    let c = browser.client();
    c.goto(&format!("file://{}", html.display()))
        .await
        .expect("open the report");
    // It opens on what did not pass: the failures and warnings first
    // (each root before what follows from it), then the skips in run
    // order; the passes are folded away.
    let problems: std::collections::BTreeSet<String> =
        ids_of("fail").into_iter().chain(ids_of("warn")).collect();
    let opened = shown_ids(c).await;
    let (head, tail) = opened.split_at(problems.len());
    assert_eq!(
        head.iter()
            .cloned()
            .collect::<std::collections::BTreeSet<_>>(),
        problems,
        "{opened:?}"
    );
    assert_eq!(tail, ids_of("skip"), "{opened:?}");
    let root = cases
        .iter()
        .find(|c| c["status"] == "fail" && c.get("caused_by").is_none())
        .and_then(|c| c["id"].as_str())
        .expect("a root failure");
    assert_eq!(head[0], root, "{opened:?}");

    // Filter to the failures: exactly the failed cases.
    c.execute(
        "const f = document.getElementById('filter'); f.value = 'fail'; \
         f.dispatchEvent(new Event('change'));",
        vec![],
    )
    .await
    .expect("filter");
    assert_eq!(shown_ids(c).await, failed);
    let shown = c
        .find(Locator::Id("shown"))
        .await
        .expect("the count")
        .text()
        .await
        .expect("its text");
    assert_eq!(
        shown,
        format!("{} of {} cases shown", failed.len(), cases.len())
    );

    // Expand the first failure: its detail and wire lines show, host and
    // plugin lines told apart.
    let row = c
        .find(Locator::Css("tr.case[data-status=\"fail\"]"))
        .await
        .expect("a failed row");
    row.click().await.expect("expand");
    let deadline = Instant::now() + LIMIT;
    let wire = loop {
        let v = c
            .execute(
                "const d = document.querySelector('tr.detail:not([hidden])'); \
                 return d ? { detail: d.querySelector('.detail-text')?.textContent ?? '', \
                   host: d.querySelectorAll('.wire .line.host').length, \
                   plugin: d.querySelectorAll('.wire .line.plugin').length, \
                   visible: d.getBoundingClientRect().height > 0 } : null;",
                vec![],
            )
            .await
            .expect("the expanded case");
        if !v.is_null() {
            break v;
        }
        assert!(Instant::now() < deadline, "the case never expanded");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(wire["visible"], true, "{wire}");
    assert!(wire["host"].as_u64().unwrap_or(0) >= 1, "{wire}");
    assert!(wire["plugin"].as_u64().unwrap_or(0) >= 1, "{wire}");
    // The first failed row on the page is the first root failure.
    let first = cases
        .iter()
        .find(|c| c["id"] == root)
        .expect("the root failure");
    let detail = first["detail"].as_str().unwrap_or_default();
    assert_eq!(wire["detail"], detail, "{wire}");

    // The search box narrows by id.
    c.execute(
        "const f = document.getElementById('filter'); f.value = 'all'; \
         f.dispatchEvent(new Event('change')); \
         const s = document.getElementById('search'); s.value = 'hooks.'; \
         s.dispatchEvent(new Event('input'));",
        vec![],
    )
    .await
    .expect("search");
    let hooks: std::collections::BTreeSet<String> = ids_of("all")
        .into_iter()
        .filter(|i| i.contains("hooks."))
        .collect();
    let shown: std::collections::BTreeSet<String> = shown_ids(c).await.into_iter().collect();
    assert_eq!(shown, hooks);

    let shot = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("conformance-report.png");
    browser.finish(&shot).await;
}
