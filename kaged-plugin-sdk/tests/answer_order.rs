//! Answers leave as soon as they are ready: when one read brings several
//! requests, the answer to the first is written before the handler of the
//! next one runs. A host that pipelines calls then gets answers streaming
//! back while the plugin works on the rest, instead of in one burst at the
//! end of every read (the pipelined benchmark found the burst: 77% of the
//! raw baseline before this, 97% after).

mod support;

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use kaged_plugin_sdk::codec::encode_line;
use kaged_plugin_sdk::{Call, Plugin, PluginError, ServeExit};
use serde_json::{json, Value};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

/// One `poll_write` as the plugin made it, with whether the second
/// request's handler had started by then.
struct Write {
    bytes: Vec<u8>,
    second_started: bool,
}

struct Recorder {
    second_started: Arc<AtomicBool>,
    out: mpsc::UnboundedSender<Write>,
}

impl AsyncWrite for Recorder {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let _ = self.out.send(Write {
            bytes: buf.to_vec(),
            second_started: self.second_started.load(Ordering::SeqCst),
        });
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[tokio::test]
async fn the_first_answer_of_a_read_is_written_before_the_next_request_runs() {
    let second_started = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&second_started);
    let plugin = Plugin::builder("order")
        .version("0.1.0")
        .method("t.first", |_p: Value, _c: Call| async move {
            Ok::<_, PluginError>("first")
        })
        .method("t.second", move |_p: Value, _c: Call| {
            flag.store(true, Ordering::SeqCst);
            async move { Ok::<_, PluginError>("second") }
        })
        .build()
        .expect("plugin");
    let (tx, mut writes) = mpsc::unbounded_channel();
    let recorder = Recorder {
        second_started: Arc::clone(&second_started),
        out: tx,
    };
    let (mut host, plugin_in) = tokio::io::duplex(1 << 20);
    let serving = tokio::spawn(async move { plugin.serve(plugin_in, recorder).await });

    // The handshake, then both calls in one write, so the plugin reads
    // them in one go.
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                      "params": support::init_params()});
    host.write_all(&encode_line(&init).expect("line"))
        .await
        .expect("write");
    let calls: Vec<u8> = [
        json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "t.first", "params": {}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "t.second", "params": {}}),
    ]
    .into_iter()
    .flat_map(|v| encode_line(&v).expect("line"))
    .collect();
    host.write_all(&calls).await.expect("write");

    let mut seen = Vec::new();
    let first = loop {
        let w = writes.recv().await.expect("the plugin stopped writing");
        let text = String::from_utf8_lossy(&w.bytes).into_owned();
        seen.push(text.clone());
        if text.contains("\"id\":1") {
            break w;
        }
    };
    assert!(
        !first.second_started,
        "the answer to `t.first` was held back until `t.second` ran: {seen:?}"
    );
    assert!(
        !String::from_utf8_lossy(&first.bytes).contains("\"id\":2"),
        "both answers went out in one burst: {seen:?}"
    );

    // The second call is answered too, and the plugin ends at end of input.
    loop {
        let w = writes.recv().await.expect("no answer to `t.second`");
        if String::from_utf8_lossy(&w.bytes).contains("\"id\":2") {
            break;
        }
    }
    drop(host);
    let exit = serving.await.expect("join").expect("serve");
    assert_eq!(exit, ServeExit::Eof);
}
