//! Duplicate and nested mounts, made deterministic: binds of the same
//! destination collapse into one (read-write wins, the reasons are kept),
//! identical other mounts collapse, and everything is ordered by
//! destination, component by component, so that a mount always comes after
//! every mount at an ancestor of its destination (a read-write bind nested
//! in a read-only one is performed after it and stays writable; a read-only
//! bind nested in a read-write one stays read-only: the more specific
//! grant wins). Mounts of one destination: kernel views, tmpfs, symlink,
//! then the bind.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::policy::Mount;

/// The merged, ordered mounts.
pub fn merge(mounts: Vec<Mount>) -> Vec<Mount> {
    let mut binds: BTreeMap<PathBuf, Mount> = BTreeMap::new();
    let mut others: Vec<Mount> = Vec::new();
    for m in mounts {
        match m {
            Mount::Bind {
                source,
                dest,
                mode,
                missing,
                because,
            } => match binds.get_mut(&dest) {
                Some(Mount::Bind {
                    mode: m0,
                    missing: miss0,
                    because: b0,
                    ..
                }) => {
                    *m0 = (*m0).max(mode);
                    *miss0 &= missing;
                    for b in because {
                        if !b0.contains(&b) {
                            b0.push(b);
                        }
                    }
                }
                _ => {
                    binds.insert(
                        dest.clone(),
                        Mount::Bind {
                            source,
                            dest,
                            mode,
                            missing,
                            because,
                        },
                    );
                }
            },
            other => {
                if !others.contains(&other) {
                    others.push(other);
                }
            }
        }
    }
    let mut all: Vec<Mount> = others.into_iter().chain(binds.into_values()).collect();
    all.sort_by(|a, b| {
        a.dest()
            .cmp(b.dest())
            .then(a.rank().cmp(&b.rank()))
            .then_with(|| format!("{a:?}").cmp(&format!("{b:?}")))
    });
    all
}
