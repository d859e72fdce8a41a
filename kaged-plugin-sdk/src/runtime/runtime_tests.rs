//! The runtime `run()` builds: one thread by default, worker threads on
//! request, and what the workers buy (a handler that blocks its thread does
//! not stop `ping`).

use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::runtime::RuntimeFlavor;

use crate::codec::{encode_line, Frame, LineReader};
use crate::{Call, Plugin, PluginError};

/// Guards against a hang; not a timing assertion.
const GUARD: Duration = Duration::from_secs(60);

/// The id of the plugin's next answer.
async fn next_id<R: tokio::io::AsyncBufRead + Unpin>(answers: &mut LineReader<R>) -> Option<u64> {
    let frame = tokio::time::timeout(GUARD, answers.next_frame())
        .await
        .expect("an answer in time")
        .expect("read")
        .expect("not the end");
    let Frame::Line(l) = frame else {
        panic!("oversize answer")
    };
    let v: Value = serde_json::from_slice(&l).expect("json");
    v["id"].as_u64()
}

#[test]
fn one_thread_by_default() {
    let plugin = Plugin::builder("p")
        .version("0.1.0")
        .build()
        .expect("plugin");
    let rt = plugin.build_runtime().expect("runtime");
    assert_eq!(rt.handle().runtime_flavor(), RuntimeFlavor::CurrentThread);
}

#[test]
fn worker_threads_answer_ping_while_a_handler_blocks_its_thread() {
    let (release, blocked) = mpsc::channel::<()>();
    let blocked = Arc::new(Mutex::new(blocked));
    let plugin = Plugin::builder("busy")
        .version("0.1.0")
        .worker_threads(2)
        .method("t.block", move |_p: Value, _c: Call| {
            let blocked = Arc::clone(&blocked);
            async move {
                // Blocks this worker thread (what the option is for).
                let lock = blocked.lock().map_err(|_| PluginError::new("poisoned"))?;
                lock.recv_timeout(GUARD)
                    .map_err(|e| PluginError::new(e.to_string()))?;
                Ok::<_, PluginError>("released")
            }
        })
        .build()
        .expect("plugin");
    let rt = plugin.build_runtime().expect("runtime");
    assert_eq!(rt.handle().runtime_flavor(), RuntimeFlavor::MultiThread);
    rt.block_on(async move {
        let (mut host, plugin_side) = tokio::io::duplex(1 << 20);
        let (p_read, p_write) = tokio::io::split(plugin_side);
        let serving = tokio::spawn(async move { plugin.serve(p_read, p_write).await });
        let lines = [
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params":
                {"daemon_version": "0.1.0", "api_version": 1, "plugin_name": "busy",
                 "storage_available": false, "projects": []}}),
            json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "t.block", "params": {}}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
        ];
        for l in lines {
            host.write_all(&encode_line(&l).expect("line"))
                .await
                .expect("write");
        }
        let (h_read, mut h_write) = tokio::io::split(host);
        let mut answers = LineReader::new(BufReader::new(h_read));
        assert_eq!(next_id(&mut answers).await, Some(0), "initialize answered");
        assert_eq!(
            next_id(&mut answers).await,
            Some(2),
            "ping is answered while t.block holds a worker thread"
        );
        release.send(()).expect("release");
        assert_eq!(
            next_id(&mut answers).await,
            Some(1),
            "t.block answers once released"
        );
        h_write.shutdown().await.expect("close");
        drop(h_write);
        let exit = tokio::time::timeout(GUARD, serving)
            .await
            .expect("serve ends")
            .expect("join")
            .expect("serve");
        assert_eq!(exit, crate::ServeExit::Eof);
    });
}
