//! # kaged-plugin-sdk
//!
//! Write kaged plugins in Rust. This crate holds the wire protocol
//! ([`protocol`]), the line codec both sides share ([`codec`]), the
//! `kaged-plugin.yaml` model ([`manifest`]) and the plugin runtime.

pub mod codec;
pub mod manifest;
pub mod protocol;
