//! What a page served by a plugin on another 127.0.0.1 port learns of the
//! daemon's token once the operator has opened the settings page, in a
//! real browser (headless Chromium, as in [`browser`](super::browser)):
//! nothing. Cookies are not scoped by port, so a cookie would have reached
//! it; the token lives in the settings tab's `sessionStorage` (its origin:
//! scheme, host and port) and in the headers the page sends to the daemon.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kaged_test_support::browser::{browser_tools_for, Browser};
use serde_json::{json, Value};

use crate::browser::wait_js;
use crate::harness::{plugins, Up};
use crate::support::host::LIMIT;

/// The foreign page: it reads what it can (cookies, storage), then tries
/// the daemon's API and notification socket, and says what it got.
const FOREIGN_PAGE: &str = r#"<!doctype html>
<meta charset="utf-8"><title>a plugin's page</title>
<script>
(async () => {
  const api = "http://__DAEMON__";
  const out = { cookie: document.cookie, stored: sessionStorage.getItem("kaged_token"),
    referrer: document.referrer };
  try {
    const r = await fetch(`${api}/api/v1/plugins`, { credentials: "include" });
    out.fetch = `answered ${r.status}`;
  } catch (e) { out.fetch = "refused"; }
  try {
    const r = await fetch(`${api}/`, { credentials: "include" });
    out.page = `answered ${r.status}`;
  } catch (e) { out.page = "refused"; }
  out.socket = await new Promise((resolve) => {
    const ws = new WebSocket(`ws://__DAEMON__/api/v1/plugins/good/notifications`,
      ["kaged.notifications.v1"]);
    ws.onopen = () => resolve("open");
    ws.onerror = () => resolve("refused");
  });
  window.kagedForeign = out;
})();
</script>
"#;

/// A plain HTTP server on another loopback port serving [`FOREIGN_PAGE`]
/// for every path, keeping the head of every request it gets.
struct ForeignServer {
    addr: String,
    heads: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ForeignServer {
    fn start(daemon: &str) -> ForeignServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr").to_string();
        let heads = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let page = FOREIGN_PAGE.replace("__DAEMON__", daemon);
        let (h, s) = (Arc::clone(&heads), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::SeqCst) {
                let Ok((stream, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                };
                let _ = stream.set_nonblocking(false);
                let _ = stream.set_read_timeout(Some(LIMIT));
                let mut reader = BufReader::new(stream);
                let mut head = String::new();
                while reader.read_line(&mut head).is_ok_and(|n| n > 0)
                    && !head.ends_with("\r\n\r\n")
                {}
                let answer = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\
                     Content-Length: {}\r\nConnection: close\r\n\r\n{page}",
                    page.len()
                );
                let _ = reader.get_mut().write_all(answer.as_bytes());
                h.lock().unwrap_or_else(|p| p.into_inner()).push(head);
            }
        });
        ForeignServer {
            addr,
            heads,
            stop,
            thread: Some(thread),
        }
    }

    fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl Drop for ForeignServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_on_another_loopback_port_learns_nothing_of_the_token() {
    let Some(tools) = browser_tools_for("a foreign page in a real browser") else {
        return;
    };
    let browser = Browser::open(&tools, LIMIT).await;
    let dir = plugins(&["good"]);
    let up = tokio::task::block_in_place(|| {
        let up = Up::start(dir.path());
        up.wait_plugin("good", |p| p["state"] == "running");
        up
    });
    let foreign = ForeignServer::start(&up.addr);
    let c = browser.client();

    // The operator opens the settings page: it works, its socket is live.
    c.goto(&up.settings_url).await.expect("open the page");
    let live = r#"const b = document.querySelector('.plugin[data-plugin="good"] .badge.socket');
                  return b ? b.textContent : '';"#;
    wait_js(c, "the settings page's live socket", live, |v| v == "live").await;

    // Then, in the same tab, a page a plugin serves on another port.
    c.goto(&format!("http://{}/", foreign.addr))
        .await
        .expect("open the foreign page");
    let got = wait_js(
        c,
        "the foreign page's findings",
        "return window.kagedForeign || null;",
        |v| !v.is_null(),
    )
    .await;
    assert_eq!(
        got,
        json!({
            "cookie": "",
            "stored": null,
            "referrer": "",
            // Refused by the daemon (a foreign Origin: 403, no CORS
            // header), so the page cannot read even that.
            "fetch": "refused",
            "page": "refused",
            "socket": "refused",
        }),
        "{got}"
    );
    let cookies = c.get_all_cookies().await.expect("the browser's cookies");
    assert!(cookies.is_empty(), "{cookies:?}");
    // Nor did the token reach its server: no cookie, no referrer, nothing.
    let heads = foreign.heads();
    assert!(!heads.is_empty());
    for head in &heads {
        assert!(!head.contains(&up.token), "{head}");
        assert!(!head.to_ascii_lowercase().contains("\ncookie:"), "{head}");
    }

    // Back on the daemon's page, in the same tab and without the fragment,
    // the page still has its token (this tab's storage); a new tab opened
    // on the bare URL has none and says how to get it.
    c.goto(&format!("http://{}/", up.addr))
        .await
        .expect("back to the page");
    wait_js(c, "the settings page again", live, |v| v == "live").await;
    let tab = c.new_window(true).await.expect("a new tab");
    c.switch_to_window(tab.handle)
        .await
        .expect("switch to the new tab");
    c.goto(&format!("http://{}/", up.addr))
        .await
        .expect("the bare URL");
    let needs = wait_js(
        c,
        "the page without a token",
        "const n = document.getElementById('needs-token'); return n && !n.hidden;",
        |v| v == &Value::Bool(true),
    )
    .await;
    assert_eq!(needs, Value::Bool(true));

    let shot = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("foreign-page.png");
    browser.finish(&shot).await;
}
