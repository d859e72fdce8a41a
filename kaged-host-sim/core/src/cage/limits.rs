//! The resource limits of every cage besides the cgroup's (ADDENDUM §13
//! asks memory 512 MiB, pids 100, cpu shares 256 of a cgroup; see
//! [`super::cgroup`]): the sizes of the writable tmpfs, and the rlimits
//! the spawner sets before running bwrap, which apply on every host (the
//! fallback when no cgroup can be written).
//!
//! `RLIMIT_NPROC` counts every process of a real uid: it is set when the
//! plugin runs as its own uid (a root host, [`super::CageUser::Own`]), to
//! [`PROCESSES`] for all running copies of that plugin together; on a
//! host run by an ordinary user it is not (the plugin runs as that user,
//! whose other processes count too), and the process limit is the pids
//! cgroup's only.
//! `RLIMIT_AS` is not either: runtimes such as V8 and bun reserve far more
//! address space than they use; memory is the memory cgroup's.

use serde::{Deserialize, Serialize};

/// `/tmp`: a tmpfs of this size (bytes).
pub const TMP_BYTES: u64 = 128 * 1024 * 1024;
/// `/dev/shm`: a tmpfs of this size (bytes); writable, or Python's
/// `multiprocessing.Lock()` fails.
pub const SHM_BYTES: u64 = 64 * 1024 * 1024;
/// `RLIMIT_FSIZE`: the largest file a plugin may write (bytes). A limit
/// per file, not a total: what a plugin writes into its writable grants
/// (`write:fs:`, `exec:` work directories, the host's own directories bound
/// as they are) is bounded in sum only by their filesystem's free space
/// (the cage description says so, under `not set`).
pub const FILE_SIZE_BYTES: u64 = 1024 * 1024 * 1024;
/// `RLIMIT_NOFILE`: open files (or the host's hard limit, when lower).
pub const OPEN_FILES: u64 = 4096;
/// `RLIMIT_NPROC` of a plugin's own uid: processes (threads count) of all
/// its running copies together.
pub const PROCESSES: u64 = 1024;
/// `RLIMIT_CORE`: no core dumps (a dump could hold secrets the plugin
/// read, and the host's `core_pattern` decides where it goes).
pub const CORE_BYTES: u64 = 0;

/// One rlimit the spawner sets (soft = hard = `value`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rlimit {
    /// `RLIMIT_FSIZE`, `RLIMIT_NOFILE`, `RLIMIT_CORE`, `RLIMIT_NPROC`.
    pub name: String,
    /// The value.
    pub value: u64,
}

/// The limits of a cage other than the cgroup's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CageLimits {
    /// Size of the `/tmp` tmpfs, bytes.
    pub tmp_bytes: u64,
    /// Size of the `/dev/shm` tmpfs, bytes.
    pub shm_bytes: u64,
    /// The rlimits, set on bwrap and inherited by the plugin.
    pub rlimits: Vec<Rlimit>,
    /// Limits a sandbox might set that this cage does not, and why.
    pub not_set: Vec<String>,
}

impl CageLimits {
    /// The limits of a plugin cage run as `user`: [`CageLimits::plugin_default`],
    /// with `RLIMIT_NPROC` ([`PROCESSES`]) when the plugin has its own uid.
    pub fn for_user(user: &super::CageUser) -> CageLimits {
        let mut limits = CageLimits::plugin_default();
        if user.own_id().is_some() {
            limits.rlimits.push(Rlimit {
                name: "RLIMIT_NPROC".to_string(),
                value: PROCESSES,
            });
            limits.not_set.retain(|n| !n.starts_with("RLIMIT_NPROC"));
        }
        limits
    }

    /// The limits of every plugin cage (without `RLIMIT_NPROC`: see
    /// [`CageLimits::for_user`]).
    pub fn plugin_default() -> CageLimits {
        let rl = |name: &str, value: u64| Rlimit {
            name: name.to_string(),
            value,
        };
        CageLimits {
            tmp_bytes: TMP_BYTES,
            shm_bytes: SHM_BYTES,
            rlimits: vec![
                rl("RLIMIT_FSIZE", FILE_SIZE_BYTES),
                rl("RLIMIT_NOFILE", OPEN_FILES),
                rl("RLIMIT_CORE", CORE_BYTES),
            ],
            not_set: vec![
                "RLIMIT_NPROC: the plugin runs as the host's (ordinary) user, whose other \
                 processes count too; processes are limited by the pids cgroup"
                    .to_string(),
                "RLIMIT_AS: runtimes reserve more address space than they use; memory is \
                 limited by the memory cgroup"
                    .to_string(),
                format!(
                    "a total for writable grants (write:fs: paths, exec: work directories): \
                     each is the host's own directory, bound as it is; one file is capped at \
                     RLIMIT_FSIZE ({} MiB), the sum of files only by the free space of the \
                     filesystem it is on",
                    FILE_SIZE_BYTES >> 20
                ),
            ],
        }
    }
}

/// The rlimits of [`CageLimits`] as rustix values, ready for a child
/// between fork and exec (computed before: no allocation there). A limit
/// above the host's hard limit is lowered to it (raising a hard limit needs
/// a privilege the host may not have).
pub fn rlimits_for_child(limits: &CageLimits) -> Vec<(rustix::process::Resource, u64)> {
    use rustix::process::{getrlimit, Resource};
    limits
        .rlimits
        .iter()
        .filter_map(|r| {
            let res = match r.name.as_str() {
                "RLIMIT_FSIZE" => Resource::Fsize,
                "RLIMIT_NOFILE" => Resource::Nofile,
                "RLIMIT_CORE" => Resource::Core,
                "RLIMIT_NPROC" => Resource::Nproc,
                _ => return None,
            };
            let hard = getrlimit(res).maximum.unwrap_or(u64::MAX);
            Some((res, r.value.min(hard)))
        })
        .collect()
}
