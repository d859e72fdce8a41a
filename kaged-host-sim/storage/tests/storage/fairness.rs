//! The write lock is shared fairly (issue 45): a plugin running write
//! statements back to back, each computing for its whole budget, holds the
//! database's one write lock most of the time; another plugin's insert
//! still gets its turn (the broker queues writers first come, first
//! served, and a write's budget is `STORAGE_WRITE_BUDGET`), so it succeeds
//! instead of answering `-32005 busy` every time.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::support::host::LIMIT;
use crate::support::storage::*;
use serde_json::json;

/// A write that never ends by itself: interrupted at its budget.
const HEAVY: &str = "INSERT INTO t SELECT count(*) FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c)";

#[test]
fn back_to_back_heavy_writes_do_not_starve_another_plugins_insert() {
    // A short write budget keeps the test short; the queue does the rest.
    let b = Arc::new(broker().with_write_budget(Duration::from_millis(300)));
    let (hog, other) = (writer("hog"), writer("other"));
    ok(exec(&b, &hog, "CREATE TABLE t (n)", json!([])));
    ok(exec(&b, &other, "CREATE TABLE notes (n)", json!([])));
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicUsize::new(0));
    let hogging = std::thread::spawn({
        let (b, stop, done) = (b.clone(), stop.clone(), done.clone());
        move || {
            let mut codes = Vec::new();
            while !stop.load(Ordering::SeqCst) {
                codes.push(code(exec(&b, &hog, HEAVY, json!([]))));
                done.fetch_add(1, Ordering::SeqCst);
            }
            codes
        }
    });
    // The hog is in its loop once one statement has run to its budget.
    let deadline = std::time::Instant::now() + LIMIT;
    while done.load(Ordering::SeqCst) == 0 {
        assert!(std::time::Instant::now() < deadline, "the hog never ran");
        std::thread::sleep(Duration::from_millis(10));
    }
    let outcomes: Vec<_> = (0..3)
        .map(|i| exec(&b, &other, "INSERT INTO notes VALUES (?)", json!([i])))
        .collect();
    stop.store(true, Ordering::SeqCst);
    let codes = hogging.join().expect("the hog's thread");
    // Every heavy statement ran to its budget and was interrupted.
    assert!(codes.iter().all(|c| *c == -32603), "{codes:?}");
    for o in outcomes {
        ok(o);
    }
    let n = ok(query(
        &b,
        &other,
        "SELECT count(*) AS n FROM notes",
        json!([]),
    ));
    assert_eq!(n["rows"][0]["n"], 3);
}
