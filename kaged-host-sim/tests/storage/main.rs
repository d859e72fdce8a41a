//! The storage broker: rewriting, authorizing, answering, attacks, and the
//! SDK's storage client against it.

#[path = "../support/mod.rs"]
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
mod sdk;
mod sdk_schema;
