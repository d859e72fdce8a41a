//! # oh-my-pi
//!
//! The preset catalogue of plugin-host.md's running example, for real: a
//! kaged plugin that keeps a catalogue of installed agent presets in the
//! host's brokered storage (`kaged.storage.*`, plugin-scoped tables it
//! creates on first use) and reads installable presets from a preset
//! directory (`/opt/oh-my-pi/presets` by default).
//!
//! Methods `presets.list`, `presets.search`, `preset.get`,
//! `preset.install`, `preset.uninstall`; notification `catalog.updated`
//! whenever an install or uninstall changes the catalogue. See `README.md`
//! next to `Cargo.toml`.
//!
//! Modules: [`preset`] (the preset format and its rules), [`source`] (the
//! preset directory), [`catalogue`] (the storage tables, through the SDK's
//! typed client), [`search`] (ranking), [`api`] (params, answers, errors);
//! the handlers are in `plugin.rs`.

pub mod api;
pub mod catalogue;
mod plugin;
pub mod preset;
pub mod search;
pub mod source;
mod state;

pub use state::{Config, OhMyPi, DEFAULT_PRESET_DIR};
