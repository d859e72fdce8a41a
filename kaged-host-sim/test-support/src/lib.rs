//! # kaged-test-support
//!
//! Layers (`scripts/module-layers.py`): <!-- layers: browser chaos command -->
//!
//! The kit's own test plumbing, shared by the test crates and never
//! published: the chaos plugin driver ([`chaos`]), WebDriver plumbing
//! for the browser tests ([`browser`]) and running a command that must
//! succeed, its streams shown when it does not ([`command`]).

pub mod browser;
pub mod chaos;
pub mod command;
