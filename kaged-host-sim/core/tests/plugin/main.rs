//! One plugin process: calls, the handshake, health checks, the wire
//! protocol, shutdown, and in-process peers.

#[path = "../../../tests/support/mod.rs"]
mod support;

mod audit_fields;
mod audit_names;
mod bounds;
mod calls;
mod handshake;
mod health;
mod inprocess;
mod normal;
mod protocol;
mod shutdown;
mod stderr;
