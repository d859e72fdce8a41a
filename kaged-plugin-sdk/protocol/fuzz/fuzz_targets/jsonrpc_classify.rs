//! The JSON-RPC classifier on any line: it never panics; a message it
//! accepts serializes to a line it classifies the same way (kind, id,
//! method); the answer to a rejected line is itself a valid response.
#![no_main]

use kaged_plugin_protocol::{Id, RpcMessage};
use libfuzzer_sys::fuzz_target;

/// What must survive a round trip: the kind, the id and the method.
fn shape(m: &RpcMessage) -> (&'static str, Option<Id>, Option<String>) {
    match m {
        RpcMessage::Request(r) => ("request", Some(r.id.clone()), Some(r.method.clone())),
        RpcMessage::Notification(n) => ("notification", None, Some(n.method.clone())),
        RpcMessage::Response(r) => ("response", Some(r.id.clone()), None),
    }
}

fuzz_target!(|data: &[u8]| {
    match RpcMessage::from_slice(data) {
        Ok(msg) => {
            let line = serde_json::to_vec(&msg).expect("a message serializes");
            let again = RpcMessage::from_slice(&line).unwrap_or_else(|e| {
                panic!("{} re-classified as {e}", String::from_utf8_lossy(&line))
            });
            assert_eq!(shape(&msg), shape(&again));
        }
        Err(e) => {
            let answer = serde_json::to_vec(&e.answer()).expect("an answer serializes");
            match RpcMessage::from_slice(&answer) {
                Ok(RpcMessage::Response(_)) => {}
                other => panic!(
                    "the answer {} to {e} classified as {other:?}",
                    String::from_utf8_lossy(&answer)
                ),
            }
        }
    }
});
