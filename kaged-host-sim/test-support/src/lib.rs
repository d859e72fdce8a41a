//! # kaged-test-support
//!
//! Layers (`scripts/module-layers.py`): <!-- layers: browser chaos -->
//!
//! The kit's own test plumbing, shared by the test crates and never
//! published: the chaos plugin driver ([`chaos`]) and WebDriver plumbing
//! for the browser tests ([`browser`]).

pub mod browser;
pub mod chaos;
