//! The wire types: JSON-RPC 2.0 envelopes, error codes, the handshake, call
//! context, hooks, compaction, storage and system methods, and the name
//! rules. Re-exported at the crate root.
//!
//! Every type here is `serde` + `schemars`, shared by the plugin side (the
//! SDK) and the daemon side (`kaged-host-sim`).

mod codes;
mod compaction;
mod context;
mod handshake;
mod hooks;
mod jsonrpc;
pub mod methods;
pub mod names;
mod storage;
mod system;

pub use codes::*;
pub use compaction::*;
pub use context::*;
pub use handshake::*;
pub use hooks::*;
pub use jsonrpc::*;
pub use storage::*;
pub use system::*;
