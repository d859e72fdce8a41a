//! Headless Chromium for browser tests (the settings page of `up`, the
//! HTML report): finding Debian's `chromium` and `chromium-driver`,
//! starting ChromeDriver on a free loopback port, and the capabilities of
//! a fresh headless session, and a session of it ([`Browser`]: a
//! fantoccini client) a test drives and closes with the page's checks.
//!
//! Like the cage tests, a browser test never passes silently: under
//! `CI=true` a missing browser is a panic (`.ci/run` installs both
//! packages); elsewhere the test says on stderr that it is skipped.

use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder};
use serde_json::{json, Map, Value};

/// The browser and its WebDriver server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrowserTools {
    /// The Chromium binary (`$KAGED_CHROMIUM`, else `chromium` on `PATH`).
    pub chromium: PathBuf,
    /// ChromeDriver (`$KAGED_CHROMEDRIVER`, else `chromedriver` on `PATH`).
    pub chromedriver: PathBuf,
}

fn on_path(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| names.iter().map(move |n| dir.join(n)))
        .find(|p| p.is_file())
}

fn find(var: &str, names: &[&str]) -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os(var) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("${var} names {}, which is not a file", p.display()))
        };
    }
    on_path(names).ok_or_else(|| {
        format!(
            "none of {} on PATH (Debian: apt-get install chromium chromium-driver; or set ${var})",
            names.join(", ")
        )
    })
}

/// Where the browser and its driver are, when both are here and the driver
/// runs.
pub fn browser_tools() -> Result<BrowserTools, String> {
    let chromium = find(
        "KAGED_CHROMIUM",
        &["chromium", "chromium-browser", "google-chrome"],
    )?;
    let chromedriver = find("KAGED_CHROMEDRIVER", &["chromedriver"])?;
    let out = Command::new(&chromedriver)
        .arg("--version")
        .output()
        .map_err(|e| format!("cannot run {}: {e}", chromedriver.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} --version failed: {}",
            chromedriver.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(BrowserTools {
        chromium,
        chromedriver,
    })
}

/// [`browser_tools`] for a test that needs them: under `CI=true`, a panic
/// when they are missing; elsewhere `None`, after saying on stderr that
/// `test` is skipped and why.
pub fn browser_tools_for(test: &str) -> Option<BrowserTools> {
    crate::ci::required_in_ci(&format!("browser for {test}"), browser_tools())
}

/// A running ChromeDriver on a loopback port; killed when dropped.
#[derive(Debug)]
pub struct ChromeDriver {
    child: Child,
    url: String,
}

impl ChromeDriver {
    /// Start `tools.chromedriver` on a free loopback port and wait (at most
    /// `limit`) until it accepts connections.
    pub fn start(tools: &BrowserTools, limit: Duration) -> Result<ChromeDriver, String> {
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("no free port: {e}"))?
            .port();
        // Its own process group, so that the Chromium it starts (same
        // group) goes with it when a failing test never closes the session.
        let child = Command::new(&tools.chromedriver)
            .process_group(0)
            .arg(format!("--port={port}"))
            .arg("--allowed-ips=127.0.0.1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", tools.chromedriver.display()))?;
        let mut driver = ChromeDriver {
            child,
            url: format!("http://127.0.0.1:{port}"),
        };
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let deadline = Instant::now() + limit;
        while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            if let Ok(Some(status)) = driver.child.try_wait() {
                return Err(format!("chromedriver exited at start ({status})"));
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "chromedriver did not listen on {addr} within {limit:?}"
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(driver)
    }

    /// The WebDriver URL (`http://127.0.0.1:PORT`).
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for ChromeDriver {
    fn drop(&mut self) {
        // The whole group: the driver and the browser it started.
        let group = i32::try_from(self.child.id())
            .ok()
            .and_then(rustix::process::Pid::from_raw);
        if let Some(group) = group {
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The capabilities of a fresh headless Chromium session: no sandbox (CI
/// runs as root), no GPU, no network of its own, a fresh profile in
/// `profile_dir`, a 1280×900 window.
pub fn chrome_capabilities(tools: &BrowserTools, profile_dir: &Path) -> Map<String, Value> {
    let args = [
        "--headless=new".to_string(),
        "--no-sandbox".into(),
        "--disable-gpu".into(),
        "--disable-dev-shm-usage".into(),
        "--disable-quic".into(),
        "--no-first-run".into(),
        "--disable-background-networking".into(),
        "--disable-component-update".into(),
        "--disable-sync".into(),
        "--window-size=1280,900".into(),
        format!("--user-data-dir={}", profile_dir.display()),
    ];
    let caps = json!({
        "browserName": "chrome",
        "goog:chromeOptions": {"binary": tools.chromium, "args": args},
    });
    match caps {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// A headless Chromium session through its own ChromeDriver, with a fresh
/// profile; the driver is killed and the profile removed when dropped.
#[derive(Debug)]
pub struct Browser {
    client: Client,
    // Dropped after the client: the session's driver and profile.
    _driver: ChromeDriver,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Start ChromeDriver (waiting at most `limit`) and open a session;
    /// panics when either fails (the browser is there: [`browser_tools_for`]).
    pub async fn open(tools: &BrowserTools, limit: Duration) -> Browser {
        let driver = ChromeDriver::start(tools, limit).expect("chromedriver starts");
        let profile = tempfile::tempdir().expect("a browser profile dir");
        let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(chrome_capabilities(tools, profile.path()))
            .connect(driver.url())
            .await
            .expect("a headless Chromium session");
        Browser {
            client,
            _driver: driver,
            _profile: profile,
        }
    }

    /// The WebDriver client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// End the test's page: assert that it met no script error (the pages
    /// collect them in `window.kagedErrors`), keep a screenshot at `shot`
    /// (an artifact; its path is said on stderr) and close the session.
    pub async fn finish(self, shot: &Path) {
        let c = self.client;
        let errors = c
            .execute("return window.kagedErrors;", vec![])
            .await
            .expect("the page's errors");
        assert_eq!(errors, json!([]), "the page met errors");
        let png = c.screenshot().await.expect("a screenshot");
        std::fs::write(shot, png).expect("write the screenshot");
        eprintln!("screenshot: {}", shot.display());
        c.close().await.expect("close the browser");
    }
}
