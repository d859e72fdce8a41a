//! The benchmark baseline: the protocol by hand with std and serde_json,
//! one line in, then the `echo.said` notification and the answer out, no
//! concurrency. It answers `initialize`, `ping`, `shutdown` and `echo.say`
//! exactly like the echo example (notification included), so the benchmark
//! compares the SDK's overhead with the least a plugin can do.

use std::io::{BufRead, BufWriter, Write};

use serde_json::{json, Value};

fn main() {
    let stdin = std::io::stdin();
    let mut out = BufWriter::new(std::io::stdout().lock());
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(msg) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let id = msg.get("id").cloned();
        let method = msg
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let result = match method {
            "initialize" => json!({"name": "raw-baseline", "version": "0.1.0", "api_version": 1,
                "methods": ["echo.say"], "notifications": ["echo.said"], "capabilities_used": []}),
            "ping" => json!({"status": "ok"}),
            "shutdown" => break,
            "echo.say" => {
                let text = msg["params"]["text"].clone();
                let agent = msg["params"]["_context"]["agent_path"].clone();
                // The echo example notifies `echo.said` on every call: so does the baseline.
                let said =
                    json!({"jsonrpc": "2.0", "method": "echo.said", "params": {"text": text}});
                if serde_json::to_writer(&mut out, &said).is_err() || out.write_all(b"\n").is_err()
                {
                    break;
                }
                json!({"said": text, "agent_path": agent})
            }
            _ => Value::Null,
        };
        let Some(id) = id else { continue };
        let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
        if serde_json::to_writer(&mut out, &answer).is_err()
            || out.write_all(b"\n").is_err()
            || out.flush().is_err()
        {
            break;
        }
    }
}
