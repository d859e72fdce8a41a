//! Line framing: one JSON message per `\n`-terminated line, at most 4 MiB.
//!
//! The protocol crate's [`kaged_plugin_protocol::codec`], re-exported with
//! its `tokio` feature on: the sans-IO [`LineDecoder`] and [`encode_line`],
//! and the async [`LineReader`] and [`write_line`]. Kept as a path of its
//! own so that `kaged_plugin_sdk::codec::LineReader` goes on working.

pub use kaged_plugin_protocol::codec::*;
