//! The base of every cage (ADDENDUM §13), before any capability: the
//! cage's own `/proc` (its kernel interfaces read-only or masked:
//! [`super::kernel`]), `/dev`, sized `/tmp` and `/dev/shm` (ADDENDUM §15:
//! the only writable places besides grants), read-only binds of the system
//! runtime, and of the few `/etc` files a runtime needs to start (plus the
//! CA store when the cage has a network, the resolver configuration when
//! it is shared; a filtered network gets a generated `/etc/hosts` instead
//! of the host's: `super::net_grants`). Never all of `/etc`.

use std::path::PathBuf;

use super::error::CageError;
use super::fs_view::{FsView, Node};
use super::kernel::kernel_mounts;
use super::limits::{SHM_BYTES, TMP_BYTES};
use super::policy::{Mode, Mount, NetMode};
use super::resolve::{resolve, ResolveFailure};

/// The system runtime, bound read-only where present (a host symlink such
/// as `/bin -> usr/bin` is recreated as the same symlink).
pub const SYSTEM_PATHS: [&str; 7] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];

/// The `/etc` files every cage gets, where present: loader cache, NSS
/// configuration, hosts, time zone.
pub const ETC_FILES: [&str; 4] = [
    "/etc/ld.so.cache",
    "/etc/nsswitch.conf",
    "/etc/hosts",
    "/etc/localtime",
];

/// The `/etc` entries a cage with a shared network also gets, where
/// present: the resolver configuration and the CA store (Debian/Ubuntu,
/// Alpine/Arch, Fedora/RHEL layouts).
pub const ETC_NETWORK: [&str; 5] = [
    "/etc/resolv.conf",
    "/etc/ssl/certs",
    "/etc/ssl/cert.pem",
    "/etc/pki/tls/certs",
    "/etc/pki/ca-trust/extracted",
];

/// Why a base bind is there.
pub const BECAUSE_SYSTEM: &str = "system";
/// Why an `/etc` file is bound.
pub const BECAUSE_ETC: &str = "etc";
/// Why a resolver or CA file is bound.
pub const BECAUSE_NETWORK: &str = "network";

/// The resolver configuration: bound only when the network is shared.
const RESOLV_CONF: &str = "/etc/resolv.conf";
/// The hosts file: generated when the network is filtered.
const ETC_HOSTS: &str = "/etc/hosts";

/// The base mounts on `fs` for a cage whose network is `net`: the CA
/// store unless there is no network, the resolver configuration only
/// when shared, and a generated `/etc/hosts` when filtered.
pub fn base_mounts(fs: &dyn FsView, net: NetMode) -> Result<Vec<Mount>, CageError> {
    let mut mounts = vec![
        Mount::Proc {
            dest: "/proc".into(),
        },
        Mount::Dev {
            dest: "/dev".into(),
        },
        Mount::Tmpfs {
            dest: "/tmp".into(),
            size: Some(TMP_BYTES),
        },
        Mount::Tmpfs {
            dest: "/dev/shm".into(),
            size: Some(SHM_BYTES),
        },
    ];
    mounts.extend(kernel_mounts(fs)?);
    for p in SYSTEM_PATHS {
        let path = PathBuf::from(p);
        match fs
            .lstat(&path)
            .map_err(|e| CageError::inspect("system runtime", &path, e))?
        {
            Node::Dir | Node::File => mounts.push(Mount::Bind {
                source: path.clone(),
                dest: path,
                mode: Mode::Ro,
                missing: false,
                because: vec![BECAUSE_SYSTEM.to_string()],
            }),
            Node::Symlink(target) => mounts.push(Mount::Symlink { target, dest: path }),
            Node::Missing => {}
        }
    }
    let etc = ETC_FILES.iter().map(|p| (*p, BECAUSE_ETC));
    let network = ETC_NETWORK.iter().map(|p| (*p, BECAUSE_NETWORK));
    let wanted = etc.chain(network).filter(|(p, _)| match net {
        NetMode::None => !ETC_NETWORK.contains(p),
        NetMode::Shared => true,
        NetMode::Filtered => *p != RESOLV_CONF && *p != ETC_HOSTS,
    });
    if net == NetMode::Filtered {
        mounts.push(Mount::HostsFile {
            dest: PathBuf::from(ETC_HOSTS),
        });
    }
    for (p, because) in wanted {
        let path = PathBuf::from(p);
        // The content is bound (a symlinked resolv.conf points into /run,
        // which the cage does not have).
        let r = resolve(fs, &path).map_err(|f| match f {
            ResolveFailure::Loop => CageError::SymlinkLoop {
                capability: because.to_string(),
                path: path.clone(),
            },
            ResolveFailure::Io(at, e) => CageError::inspect(because, &at, e),
        })?;
        if r.exists {
            mounts.push(Mount::Bind {
                source: r.path,
                dest: path,
                mode: Mode::Ro,
                missing: false,
                because: vec![because.to_string()],
            });
        }
    }
    Ok(mounts)
}
