//! A test's pause in the spawner: a function run after a cage's bind
//! sources were opened ([`super::sources`]) and before bwrap starts, for
//! one install directory only. The race probes (tests/cage/race.rs) swap a
//! granted directory for a symlink there, at the moment an attacker
//! racing the spawner would, so that the probe is deterministic: with
//! sources bound by path, bwrap follows the swapped link; bound by
//! descriptor, the cage gets the directory that was resolved.
//!
//! Nothing is registered in a daemon or a tool: the table is empty and the
//! spawner's look-up is one lock of an empty map.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// The function: given the install directory of the plugin about to start.
pub type RaceHook = Arc<dyn Fn(&Path) + Send + Sync>;

fn table() -> &'static Mutex<BTreeMap<PathBuf, RaceHook>> {
    static TABLE: OnceLock<Mutex<BTreeMap<PathBuf, RaceHook>>> = OnceLock::new();
    TABLE.get_or_init(|| Mutex::new(BTreeMap::new()))
}

/// Run `hook` before bwrap starts a plugin installed at `install_dir`
/// (as the cage resolves it), until the guard is dropped.
pub fn before_bwrap(install_dir: &Path, hook: RaceHook) -> RaceHookGuard {
    let key = install_dir.to_path_buf();
    if let Ok(mut t) = table().lock() {
        t.insert(key.clone(), hook);
    }
    RaceHookGuard { key }
}

/// Removes its hook when dropped.
#[derive(Debug)]
pub struct RaceHookGuard {
    key: PathBuf,
}

impl Drop for RaceHookGuard {
    fn drop(&mut self) {
        if let Ok(mut t) = table().lock() {
            t.remove(&self.key);
        }
    }
}

/// The spawner's call: run the hook registered for `install_dir`, if any.
pub(crate) fn run(install_dir: &Path) {
    let hook = table()
        .lock()
        .ok()
        .and_then(|t| t.get(install_dir).cloned());
    if let Some(hook) = hook {
        hook(install_dir);
    }
}
