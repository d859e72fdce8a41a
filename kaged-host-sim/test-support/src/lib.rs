//! # kaged-test-support
//!
//! Layers (`scripts/module-layers.py`): <!-- layers: browser chaos command terminal > ci -->
//!
//! The kit's own test plumbing, shared by the test crates and never
//! published: the chaos plugin driver ([`chaos`]), WebDriver plumbing
//! for the browser tests ([`browser`]) and running a command that must
//! succeed, its streams shown when it does not ([`command`]), and what
//! a test needs from the machine, required under `CI=true` ([`ci`]), and
//! a command run with its stderr on a pseudo-terminal ([`terminal`]).

pub mod browser;
pub mod chaos;
pub mod ci;
pub mod command;
pub mod terminal;
