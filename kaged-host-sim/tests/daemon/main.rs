//! `kaged-host-sim up`: the daemon with real plugin subprocesses and its
//! HTTP API, driven as an operator drives it (HTTP on loopback, signals).

#[path = "../support/mod.rs"]
mod support;

mod api;
mod as_user;
mod browser;
mod callers;
mod consent;
mod flood;
mod foreign;
mod guard;
mod harness;
mod health;
mod lifecycle;
mod nested_grants;
mod notifications;
mod pending;
mod project;
mod stderr;
mod upgrade;
mod witness;
