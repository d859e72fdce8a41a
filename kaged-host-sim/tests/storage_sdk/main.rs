//! The SDK's storage client against the broker, in process
//! (`ConnectPlugin`: the SDK runtime on one side of a pipe, the host on
//! the other).

#[path = "../support/mod.rs"]
mod support;

mod quota;
mod sdk;
mod sdk_schema;
