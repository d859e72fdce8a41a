//! The storage broker: rewriting, authorizing, answering, attacks (the
//! SDK's storage client against it: `kaged-host-sim`'s `storage_sdk`).

#[path = "../../../tests/support/mod.rs"]
mod support;

mod attack;
mod broker;
mod collision;
mod fairness;
mod happy;
mod migrate;
mod properties;
mod quota;
mod rewrite;
mod schema_text;
