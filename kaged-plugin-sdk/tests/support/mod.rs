//! A raw JSON-lines "host" over an in-process duplex pipe, for testing the
//! SDK runtime byte for byte without a process.
#![allow(dead_code)]

use std::time::Duration;

use kaged_plugin_sdk::codec::{Frame, LineReader};
use kaged_plugin_sdk::{Plugin, SdkError, ServeExit};
use serde_json::{json, Value};
use tokio::io::{AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tokio::task::JoinHandle;

/// Upper bound on waiting for one answer, so a broken runtime fails the
/// test instead of hanging it. Not a timing assertion.
const GUARD: Duration = Duration::from_secs(20);

pub struct Wire {
    to_plugin: WriteHalf<DuplexStream>,
    from_plugin: LineReader<BufReader<ReadHalf<DuplexStream>>>,
    pub task: Option<JoinHandle<Result<ServeExit, SdkError>>>,
}

impl Wire {
    pub fn start(plugin: Plugin) -> Wire {
        let (host_side, plugin_side) = tokio::io::duplex(16 * 1024 * 1024);
        let (p_read, p_write) = tokio::io::split(plugin_side);
        let task = tokio::spawn(async move { plugin.serve(p_read, p_write).await });
        let (h_read, h_write) = tokio::io::split(host_side);
        Wire {
            to_plugin: h_write,
            from_plugin: LineReader::new(BufReader::new(h_read)),
            task: Some(task),
        }
    }

    /// Start and complete the handshake.
    pub async fn ready(plugin: Plugin) -> (Wire, Value) {
        let mut w = Wire::start(plugin);
        let init = w.initialize().await;
        w.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
            .await;
        (w, init)
    }

    pub async fn initialize(&mut self) -> Value {
        self.request(0, "initialize", init_params()).await
    }

    pub async fn send_raw(&mut self, bytes: &[u8]) {
        self.to_plugin
            .write_all(bytes)
            .await
            .expect("write to plugin");
        self.to_plugin.flush().await.expect("flush");
    }

    pub async fn send(&mut self, v: Value) {
        let mut line = serde_json::to_vec(&v).expect("json");
        line.push(b'\n');
        self.send_raw(&line).await;
    }

    /// The next message from the plugin, parsed.
    pub async fn recv(&mut self) -> Value {
        let frame = tokio::time::timeout(GUARD, self.from_plugin.next_frame())
            .await
            .expect("the plugin did not answer")
            .expect("read from plugin")
            .expect("the plugin closed its output");
        match frame {
            Frame::Line(l) => serde_json::from_slice(&l).expect("the plugin wrote JSON"),
            Frame::Oversize { len } => panic!("the plugin wrote an oversize line of {len} bytes"),
        }
    }

    /// Whether the plugin's output is at its end (returns None at EOF).
    pub async fn recv_eof(&mut self) -> bool {
        let f = tokio::time::timeout(GUARD, self.from_plugin.next_frame())
            .await
            .expect("the plugin did not close its output")
            .expect("read");
        f.is_none()
    }

    /// Send a request and return the full response object.
    pub async fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        self.recv().await
    }

    /// Close the host's side (EOF for the plugin).
    pub async fn close(&mut self) {
        self.to_plugin.shutdown().await.expect("shutdown");
    }

    pub async fn exit(&mut self) -> ServeExit {
        let task = self.task.take().expect("task");
        tokio::time::timeout(GUARD, task)
            .await
            .expect("serve did not return")
            .expect("serve panicked")
            .expect("serve failed")
    }
}

pub fn init_params() -> Value {
    json!({"daemon_version": "0.1.0", "api_version": 1, "plugin_name": "testbed",
           "storage_available": true, "projects": []})
}

pub fn agent_context() -> Value {
    json!({"operator_id": "operator", "project_id": "music", "agent_path": "primary",
           "session_id": "ses_1", "request_id": "req_1"})
}
