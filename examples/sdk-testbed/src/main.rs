//! The SDK testbed: a plugin whose methods misbehave on purpose so that the
//! end-to-end tests can prove what the SDK does about it over real pipes.
//!
//! Written with `#[kaged_plugin]`; its `kaged-plugin.yaml` is generated
//! (`sdk-testbed --print-manifest`) from this code and
//! `kaged-plugin.base.yaml`, and `tests/manifest_drift.rs` keeps it current.

use std::time::Duration;

use kaged_plugin_sdk::{kaged_plugin, Call, PluginError};
use serde::Deserialize;
use serde_json::{json, Value};

/// `testbed.big` params.
#[derive(Deserialize)]
struct Bytes {
    bytes: usize,
}

/// `testbed.store_many` params.
#[derive(Deserialize)]
struct Many {
    n: usize,
}

/// `testbed.sleep` params.
#[derive(Deserialize)]
struct Sleep {
    ms: u64,
}

/// The testbed plugin (stateless).
struct Testbed;

#[kaged_plugin(
    name = "sdk-testbed",
    notifications("testbed.poked"),
    capabilities("kaged:storage:read"),
    manifest_base = "kaged-plugin.base.yaml"
)]
impl Testbed {
    /// Answer the params and the `_context` the SDK took out of them.
    #[method("testbed.echo")]
    async fn echo(&self, params: Value, call: Call) -> Result<Value, PluginError> {
        Ok(json!({ "params": params, "context": call.context }))
    }

    /// A stray println! must land on stderr, never on the protocol stream.
    #[method("testbed.print")]
    async fn print(&self) -> Result<&'static str, PluginError> {
        println!("this line was printed with println! by a handler");
        print!("and this one without a newline");
        Ok("printed")
    }

    /// Panic; the SDK answers an internal error and keeps serving.
    #[method("testbed.panic")]
    async fn panic(&self) -> Result<(), PluginError> {
        if std::env::var_os("NEVER_SET_IN_TESTS").is_none() {
            panic!("deliberate panic in testbed.panic");
        }
        Ok(())
    }

    /// An answer of `bytes` bytes (to cross the size limit).
    #[method("testbed.big")]
    async fn big(&self, p: Bytes) -> Result<String, PluginError> {
        Ok("x".repeat(p.bytes))
    }

    /// Answer after `ms` milliseconds.
    #[method("testbed.sleep")]
    async fn sleep(&self, p: Sleep) -> Result<u64, PluginError> {
        tokio::time::sleep(Duration::from_millis(p.ms)).await;
        Ok(p.ms)
    }

    /// Ask the host's storage for `SELECT 1`, and answer what it said: a
    /// handler waiting on the host while the host keeps calling (the reader
    /// must never wait on it).
    #[method("testbed.store")]
    async fn store(&self, call: Call) -> Result<Value, PluginError> {
        let rows = call
            .host
            .storage()
            .query("SELECT 1 AS one", kaged_plugin_sdk::sql_params![])
            .await?;
        Ok(json!({ "rows": rows.rows }))
    }

    /// Make `n` storage requests at once from tasks on both worker
    /// threads, and answer how many were answered `1`: request ids must
    /// still reach the host in increasing order.
    #[method("testbed.store_many")]
    async fn store_many(&self, p: Many, call: Call) -> Result<usize, PluginError> {
        let tasks: Vec<_> = (0..p.n)
            .map(|i| {
                let host = call.host.clone();
                tokio::spawn(async move {
                    host.storage()
                        .query("SELECT ?1 AS i", kaged_plugin_sdk::sql_params![i as i64])
                        .await
                })
            })
            .collect();
        let mut answered = 0;
        for task in tasks {
            let rows = task
                .await
                .map_err(|e| PluginError::new(format!("storage task: {e}")))??;
            answered += usize::from(rows.rows.len() == 1);
        }
        Ok(answered)
    }

    /// Emit `testbed.poked`.
    #[method("testbed.notify")]
    async fn notify(&self, call: Call) -> Result<&'static str, PluginError> {
        call.host
            .notify("testbed.poked", json!({ "by": "testbed.notify" }))?;
        Ok("notified")
    }
}

fn main() {
    // Two worker threads: handlers and the tasks they spawn run in
    // parallel, as in a plugin that opts into them (`testbed.store_many`).
    match Testbed.plugin_builder().worker_threads(2).build() {
        Ok(plugin) => plugin.run(),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1)
        }
    }
}
