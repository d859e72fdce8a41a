//! How the `plugin` commands reach a running `up` that serves the same
//! plugin store: `up --store DIR --listen ADDR` writes `DIR/daemon.json`
//! (mode 0600: the API's address and token) and removes it when it stops.
//! `plugin install`, after an upgrade, asks that daemon to restart the
//! plugin when it runs it (plugin-host.md § Upgrade: "Plugin was running;
//! restarting... ✓ oh-my-pi restarted"); `plugin consent`, after a
//! re-consent, asks it to enable the plugin it had refused to start.
//!
//! The request is one HTTP/1.1 exchange on loopback with the daemon's own
//! API (`GET /api/v1/plugins`, `POST /api/v1/plugins/<name>/restart`),
//! behind its token like any other caller.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use std::time::Duration;

use kaged_host_core::time::{API_STATE_POLL, INITIALIZE_TIMEOUT_SEC};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The file a running daemon leaves in its plugin store.
pub const DAEMON_FILE: &str = "daemon.json";

/// A running daemon's API, as written in [`DAEMON_FILE`].
#[derive(Clone, Serialize, Deserialize)]
pub struct DaemonLink {
    /// `IP:PORT` of the API (loopback).
    pub addr: String,
    /// The API token.
    pub token: String,
}

impl std::fmt::Debug for DaemonLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DaemonLink")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

/// What a link request met.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    /// The daemon could not be reached or answered no HTTP.
    #[error("cannot reach the daemon at {addr}")]
    Unreachable {
        /// Its address.
        addr: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The daemon answered an error.
    #[error("the daemon answered {status}: {body}")]
    Refused {
        /// The HTTP status.
        status: u16,
        /// The body.
        body: String,
    },
}

/// How the running daemon came through a restart request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Restart {
    /// The daemon does not run the plugin (or it is not running there).
    NotRunning,
    /// Restarted: the plugin's state and version afterwards.
    Restarted {
        /// `running`, or where the restart left it.
        state: String,
        /// The version the daemon reports.
        version: String,
    },
}

impl DaemonLink {
    /// Write the link into `store` (mode 0600, replacing a stale one);
    /// returns a guard that removes it when dropped.
    pub fn publish(&self, store: &Path) -> std::io::Result<Published> {
        let path = store.join(DAEMON_FILE);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)?;
        let text = serde_json::to_string(self).map_err(std::io::Error::other)?;
        writeln!(f, "{text}")?;
        Ok(Published(path))
    }

    /// The link a daemon left in `store`, if any (a file that does not
    /// parse counts as none).
    pub fn read(store: &Path) -> Option<DaemonLink> {
        let text = std::fs::read_to_string(store.join(DAEMON_FILE)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Restart `name` in the daemon when it runs it.
    pub async fn restart_if_running(&self, name: &str) -> Result<Restart, LinkError> {
        if !self
            .row(name)
            .await?
            .is_some_and(|p| p["state"] == "running")
        {
            return Ok(Restart::NotRunning);
        }
        let row = self.operate(name, "restart").await?;
        Ok(Restart::Restarted {
            state: row["state"].as_str().unwrap_or("?").to_string(),
            version: row["version"].as_str().unwrap_or("?").to_string(),
        })
    }

    /// After `plugin consent`: enable `name` in the daemon when it refused
    /// to start it (its row has a `refusal`); the state it reached, `None`
    /// when nothing was refused there.
    pub async fn enable_if_refused(&self, name: &str) -> Result<Option<String>, LinkError> {
        let refused = self
            .row(name)
            .await?
            .is_some_and(|p| !p["refusal"].is_null());
        if !refused {
            return Ok(None);
        }
        let row = self.operate(name, "enable").await?;
        Ok(Some(row["state"].as_str().unwrap_or("?").to_string()))
    }

    /// `POST /api/v1/plugins/<name>/<action>` (`restart`, `enable`), then
    /// wait while the new process is `spawning` (bounded by the spec's
    /// initialize timeout; the daemon's own is no longer): its last row.
    async fn operate(&self, name: &str, action: &str) -> Result<Value, LinkError> {
        let path = format!("/api/v1/plugins/{name}/{action}");
        let mut row = self.request("POST", &path).await?;
        let deadline = std::time::Instant::now() + Duration::from_secs(INITIALIZE_TIMEOUT_SEC);
        while row["state"] == "spawning" && std::time::Instant::now() < deadline {
            tokio::time::sleep(API_STATE_POLL).await;
            if let Some(now) = self.row(name).await? {
                row = now;
            }
        }
        Ok(row)
    }

    /// `name`'s row of the daemon's plugin list, if it runs it.
    async fn row(&self, name: &str) -> Result<Option<Value>, LinkError> {
        let list = self.request("GET", "/api/v1/plugins").await?;
        Ok(list
            .as_array()
            .and_then(|a| a.iter().find(|p| p["name"] == name))
            .cloned())
    }

    /// One request with no body (`Connection: close`); the JSON answer.
    async fn request(&self, method: &str, path: &str) -> Result<Value, LinkError> {
        let unreachable = |source| LinkError::Unreachable {
            addr: self.addr.clone(),
            source,
        };
        let mut stream = tokio::net::TcpStream::connect(&self.addr)
            .await
            .map_err(unreachable)?;
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            self.addr, self.token
        );
        stream
            .write_all(head.as_bytes())
            .await
            .map_err(unreachable)?;
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).await.map_err(unreachable)?;
        let text = String::from_utf8_lossy(&raw);
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let status: u16 = head
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| unreachable(std::io::Error::other("not an HTTP answer")))?;
        if !(200..300).contains(&status) {
            return Err(LinkError::Refused {
                status,
                body: body.trim().to_string(),
            });
        }
        serde_json::from_str(body).map_err(|e| unreachable(std::io::Error::other(e)))
    }
}

/// Removes the published [`DAEMON_FILE`] when dropped.
#[derive(Debug)]
pub struct Published(PathBuf);

impl Drop for Published {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
