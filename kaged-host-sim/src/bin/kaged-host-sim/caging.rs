//! How the command line cages plugins (ADDENDUM §13): `--cage` checked
//! before anything runs (`require` where bwrap cannot cage: exit 2;
//! `auto`: one warning, then plugins run uncaged), the default config
//! root, and the `cage: ...` line every command that runs a plugin prints.

use std::path::PathBuf;

use kaged_host_core::cage::availability;
use kaged_host_core::{CageMode, CageStatus, PluginHandle};

use super::error::CliError;

/// The operator's config root when `--config-root` is absent:
/// `$KAGED_CONFIG_ROOT`, else `$HOME/.config/kaged`.
pub fn default_config_root() -> Option<PathBuf> {
    let abs = |v: String| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    std::env::var("KAGED_CONFIG_ROOT")
        .ok()
        .and_then(abs)
        .or_else(|| {
            std::env::var("HOME")
                .ok()
                .and_then(abs)
                .map(|h| h.join(".config/kaged"))
        })
}

/// Before running plugins: under `require`, fail (exit 2) when bwrap
/// cannot cage here; under `auto`, warn once on stderr.
pub async fn check(mode: CageMode) -> Result<(), CliError> {
    if mode == CageMode::Off {
        eprintln!("kaged-host-sim: warning: --cage off: plugins run UNCAGED");
        return Ok(());
    }
    match (availability().await, mode) {
        (Ok(_), _) => Ok(()),
        (Err(why), CageMode::Require) => Err(CliError::Usage(format!(
            "--cage require: plugins cannot be caged here: {why} (the default of `up`; \
             --cage auto or --cage off runs them uncaged)"
        ))),
        (Err(why), _) => {
            eprintln!(
                "kaged-host-sim: warning: plugins run UNCAGED: {why} (--cage auto; \
                 --cage require refuses to run them uncaged)"
            );
            Ok(())
        }
    }
}

/// The `cage: ...` line of a session (`name` prefixes it when given).
pub fn line(session: &PluginHandle, name: Option<&str>) -> String {
    let text = session
        .cage()
        .map_or_else(|| "cage: none (in-process)".to_string(), CageStatus::line);
    match name {
        Some(n) => format!("{n}: {text}"),
        None => text,
    }
}
