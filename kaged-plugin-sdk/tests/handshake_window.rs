//! The window between the plugin's `initialize` answer and `initialized`
//! (ADDENDUM §12): `config.update` is served there, and notifications a
//! handler sends in it are held until the handshake completes.

mod support;

use kaged_plugin_sdk::{Call, Plugin, PluginError};
use serde_json::{json, Value};
use support::Wire;

/// A plugin that notifies `early.bird` from its config handler and from
/// `early.go`.
fn early_bird() -> Plugin {
    Plugin::builder("early")
        .version("0.1.0")
        .notification("early.bird")
        .on_config(|c: Value, host| async move {
            host.notify("early.bird", json!({"from": "config", "config": c}))?;
            Ok(())
        })
        .method("early.go", |_p: Value, c: Call| async move {
            c.host.notify("early.bird", json!({"n": 1}))?;
            Ok::<_, PluginError>("sent")
        })
        .build()
        .unwrap()
}

fn initialized() -> Value {
    json!({"jsonrpc": "2.0", "method": "initialized", "params": {}})
}

#[tokio::test]
async fn notifications_wait_for_the_handshake() {
    let mut w = Wire::start(early_bird());
    w.initialize().await;
    // config.update is served between the initialize answer and
    // `initialized` (ADDENDUM §12). Its handler notifies before it returns,
    // yet the answer comes first: the notification is held...
    let answer = w.request(1, "config.update", json!({"store": "/m"})).await;
    assert_eq!(
        answer,
        json!({"jsonrpc": "2.0", "id": 1, "result": {"status": "ok"}}),
        "the notification must wait for `initialized`"
    );
    // ... and sent once `initialized` arrives, before anything else.
    w.send(initialized()).await;
    assert_eq!(
        w.recv().await,
        json!({"jsonrpc": "2.0", "method": "early.bird",
               "params": {"from": "config", "config": {"store": "/m"}}})
    );
    // After the handshake a notification leaves at once: before the
    // answer of the call that sent it.
    let first = w.request(2, "early.go", json!({})).await;
    assert_eq!(first["method"], "early.bird");
    assert_eq!(w.recv().await["result"], "sent");
}

#[tokio::test]
async fn a_config_update_notification_before_initialized_is_applied() {
    let mut w = Wire::start(early_bird());
    w.initialize().await;
    w.send(json!({"jsonrpc": "2.0", "method": "config.update", "params": {"store": "/n"}}))
        .await;
    // Still in the window: other calls get -32002.
    assert_eq!(
        w.request(1, "early.go", json!({})).await["error"]["code"],
        -32002
    );
    w.send(initialized()).await;
    assert_eq!(
        w.recv().await["params"],
        json!({"from": "config", "config": {"store": "/n"}})
    );
    assert_eq!(
        w.request(2, "ping", json!({})).await["result"],
        json!({"status": "ok"})
    );
}

#[tokio::test]
async fn plugin_code_reads_what_the_host_said_in_initialize() {
    let plugin = Plugin::builder("early")
        .version("0.1.0")
        .method("early.init", |_p: Value, c: Call| async move {
            let p = c
                .host
                .initialize_params()
                .ok_or_else(|| PluginError::new("no initialize params"))?;
            Ok::<_, PluginError>(json!({
                "daemon_version": p.daemon_version,
                "storage_available": p.storage_available,
                "projects": p.projects.len(),
            }))
        })
        .build()
        .unwrap();
    let mut w = Wire::start(plugin);
    let params = json!({"daemon_version": "9.9.9", "api_version": 1, "plugin_name": "early",
                        "storage_available": false,
                        "projects": ["music"]});
    w.request(0, "initialize", params).await;
    w.send(initialized()).await;
    let answer = w.request(1, "early.init", json!({})).await;
    assert_eq!(
        answer["result"],
        json!({"daemon_version": "9.9.9", "storage_available": false, "projects": 1}),
        "{answer}"
    );
    w.close().await;
}
