//! The SDK testbed: a plugin whose methods misbehave on purpose so that the
//! end-to-end tests can prove what the SDK does about it over real pipes.

use std::time::Duration;

use kaged_plugin_sdk::{plugin, Call, PluginError};
use serde::Deserialize;
use serde_json::{json, Value};

#[derive(Deserialize)]
struct Bytes {
    bytes: usize,
}

#[derive(Deserialize)]
struct Sleep {
    ms: u64,
}

fn main() {
    plugin!("sdk-testbed")
        .method("testbed.echo", |p: Value, call: Call| async move {
            Ok::<_, PluginError>(json!({ "params": p, "context": call.context }))
        })
        .method("testbed.print", |_p: Value, _call: Call| async move {
            // A stray println! must land on stderr, never on the protocol stream.
            println!("this line was printed with println! by a handler");
            print!("and this one without a newline");
            Ok::<_, PluginError>("printed")
        })
        .method("testbed.panic", |_p: Value, _call: Call| async move {
            if std::env::var_os("NEVER_SET_IN_TESTS").is_none() {
                panic!("deliberate panic in testbed.panic");
            }
            Ok::<_, PluginError>(())
        })
        .method("testbed.big", |p: Bytes, _call: Call| async move { Ok::<_, PluginError>("x".repeat(p.bytes)) })
        .method("testbed.sleep", |p: Sleep, _call: Call| async move {
            tokio::time::sleep(Duration::from_millis(p.ms)).await;
            Ok::<_, PluginError>(p.ms)
        })
        .method("testbed.notify", |_p: Value, call: Call| async move {
            call.host.notify("testbed.poked", json!({ "by": "testbed.notify" }))?;
            Ok::<_, PluginError>("notified")
        })
        .notification("testbed.poked")
        .run()
}
