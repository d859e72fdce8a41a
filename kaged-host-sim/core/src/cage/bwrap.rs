//! A [`CagePolicy`] as a bwrap command line (ADDENDUM §13), deterministic:
//!
//! ```text
//! bwrap --unshare-all --unshare-pid [--share-net] --die-with-parent
//!       --new-session --cap-drop ALL --clearenv
//!       --setenv K V ...          (the spawn environment, sorted)
//!       <mounts, in policy order> (--proc, --dev, [--size N] --tmpfs,
//!                                  --symlink, --ro-bind-fd FD DEST,
//!                                  --bind-fd FD DEST (every bind by the
//!                                  descriptor the host opened: sources;
//!                                  a root host: --bind /tmp/N DEST, the
//!                                  same inode staged: stage),
//!                                  --ro-bind-data FD /etc/hosts (a
//!                                  filtered network's hosts file),
//!                                  the kernel paths: --ro-bind P P,
//!                                  --ro-bind /dev/null P, --tmpfs P)
//!       --remount-ro P ...        (masked dirs, /dev, then / last)
//!       --chdir DIR [--info-fd FD] --seccomp FD -- COMMAND...
//! ```
//!
//! `--unshare-pid` without `--as-pid-1`: bwrap's init is pid 1 of the
//! cage and the plugin its child, in init's process group (whose id is the
//! pid `--info-fd` reports); SIGTERM to that group reaches the plugin with
//! its usual meaning (a namespace's init drops signals it has no handler
//! for, so as pid 1 a plugin would never see a SIGTERM it does not handle)
//! and when the plugin exits, init exits and every process of the cage
//! dies (see `plugin::caged`). `--cap-drop ALL`: bwrap
//! started by root otherwise leaves the plugin its capabilities (checked
//! with bubblewrap 0.8: CapEff full without it). The descriptors are slots
//! the spawner fills; the seccomp one is not optional: plugins always get
//! the default profile. `--share-net` only for `net:*`: a filtered
//! network (`net:HOST:PORT`) is the cage's own, empty namespace, its
//! connects made by the host (`super::net_filter`).

use std::ffi::OsString;
use std::os::fd::RawFd;

use super::policy::{CagePolicy, Mode, Mount, NetMode};

/// The bwrap executable, looked up on `PATH` by the spawner.
pub const BWRAP: &str = "bwrap";

/// The descriptors bwrap reads, open in the child at these numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CageFds {
    /// `--info-fd`: bwrap writes `{"child-pid": N, ...}` there (the
    /// plugin's pid outside the cage). `None`: not asked.
    pub info: Option<RawFd>,
    /// `--seccomp`: the program of [`super::seccomp::program_fd`].
    pub seccomp: RawFd,
    /// Per mount of the policy, in order: where bwrap finds a bind's
    /// source, or the descriptor of the hosts file's content
    /// ([`BindSource::Fd`] always), or `None` (not a bind, or a missing
    /// source left out, which is then not bound).
    pub binds: Vec<Option<BindSource>>,
}

/// Where bwrap finds one bind's source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BindSource {
    /// A descriptor open in bwrap's process (`--bind-fd`, `--ro-bind-fd`;
    /// `super::sources::OpenedBinds::slots`): a host that is an ordinary
    /// user.
    Fd(RawFd),
    /// A path staged in the spawner's own mount namespace (`--bind`,
    /// `--ro-bind`; [`super::stage`]): a root host, whose bwrap runs as the
    /// plugin's uid.
    Staged(std::path::PathBuf),
}

/// Per mount (index, mount): a bind's source argument and whether it is
/// a descriptor (`--bind-fd`) or a path (`--bind`); `None`: not bound.
type BindArg<'a> = dyn Fn(usize, &Mount) -> Option<(bool, OsString)> + 'a;

/// The placeholder of a descriptor in [`CagePolicy::bwrap_argv_template`].
pub const INFO_FD_SLOT: &str = "<info-fd>";
/// The placeholder of the seccomp descriptor.
pub const SECCOMP_FD_SLOT: &str = "<seccomp-fd>";

impl CagePolicy {
    /// The arguments of `bwrap` (without `bwrap` itself) that run `command`
    /// in this cage, with the descriptors of `fds`.
    pub fn bwrap_argv(&self, command: &[OsString], fds: &CageFds) -> Vec<OsString> {
        let info = fds.info.map(|fd| OsString::from(fd.to_string()));
        let bind = |i: usize, _: &Mount| {
            Some(match fds.binds.get(i)?.as_ref()? {
                BindSource::Fd(fd) => (true, OsString::from(fd.to_string())),
                BindSource::Staged(path) => (false, path.clone().into_os_string()),
            })
        };
        self.argv_with(
            command,
            info,
            OsString::from(fds.seccomp.to_string()),
            &bind,
        )
    }

    /// The same with placeholders, for display (`kaged-host-sim cage`):
    /// `<info-fd>`, `<seccomp-fd>`, and each bind's descriptor as
    /// `<fd:SOURCE>` (`<fd?:SOURCE>` when the source was missing at compile
    /// time: bound only if it exists, with no link in its path, at spawn).
    pub fn bwrap_argv_template(&self, command: &[OsString]) -> Vec<OsString> {
        let bind = |_: usize, m: &Mount| match m {
            Mount::Bind {
                source, missing, ..
            } => {
                let mark = if *missing { "fd?" } else { "fd" };
                let arg = OsString::from(format!("<{mark}:{}>", source.display()));
                Some((true, arg))
            }
            Mount::HostsFile { .. } => Some((true, OsString::from("<fd:hosts-file>"))),
            _ => None,
        };
        self.argv_with(
            command,
            Some(INFO_FD_SLOT.into()),
            SECCOMP_FD_SLOT.into(),
            &bind,
        )
    }

    fn argv_with(
        &self,
        command: &[OsString],
        info: Option<OsString>,
        seccomp: OsString,
        bind_source: &BindArg<'_>,
    ) -> Vec<OsString> {
        let mut a: Vec<OsString> = Vec::new();
        let mut push =
            |parts: &[&std::ffi::OsStr]| a.extend(parts.iter().map(|p| p.to_os_string()));
        push(&["--unshare-all".as_ref(), "--unshare-pid".as_ref()]);
        if self.net.mode == NetMode::Shared {
            push(&["--share-net".as_ref()]);
        }
        push(&[
            "--die-with-parent".as_ref(),
            "--new-session".as_ref(),
            "--cap-drop".as_ref(),
            "ALL".as_ref(),
            "--clearenv".as_ref(),
        ]);
        for (k, v) in &self.env {
            push(&["--setenv".as_ref(), k.as_ref(), v.as_ref()]);
        }
        for (i, m) in self.mounts.iter().enumerate() {
            match m {
                Mount::Proc { dest } => push(&["--proc".as_ref(), dest.as_ref()]),
                Mount::Dev { dest } => push(&["--dev".as_ref(), dest.as_ref()]),
                Mount::Tmpfs { dest, size } => {
                    if let Some(size) = size {
                        let size = OsString::from(size.to_string());
                        push(&["--size".as_ref(), size.as_ref()]);
                    }
                    push(&["--tmpfs".as_ref(), dest.as_ref()]);
                }
                Mount::KernelReadOnly { dest } => {
                    push(&["--ro-bind".as_ref(), dest.as_ref(), dest.as_ref()]);
                }
                Mount::Masked { dest, dir: true } | Mount::Sealed { dest } => {
                    push(&["--tmpfs".as_ref(), dest.as_ref()]);
                }
                Mount::Masked { dest, dir: false } => {
                    push(&["--ro-bind".as_ref(), "/dev/null".as_ref(), dest.as_ref()]);
                }
                Mount::Symlink { target, dest } => {
                    push(&["--symlink".as_ref(), target.as_ref(), dest.as_ref()]);
                }
                Mount::HostsFile { dest } => {
                    if let Some((_, fd)) = bind_source(i, m) {
                        push(&["--ro-bind-data".as_ref(), fd.as_ref(), dest.as_ref()]);
                    }
                }
                Mount::Bind { dest, mode, .. } => {
                    // A source left out (missing now) is not bound.
                    if let Some((by_fd, source)) = bind_source(i, m) {
                        let flag = match (mode, by_fd) {
                            (Mode::Ro, true) => "--ro-bind-fd",
                            (Mode::Rw, true) => "--bind-fd",
                            (Mode::Ro, false) => "--ro-bind",
                            (Mode::Rw, false) => "--bind",
                        };
                        push(&[flag.as_ref(), source.as_ref(), dest.as_ref()]);
                    }
                }
            }
        }
        for dest in &self.remount_ro {
            push(&["--remount-ro".as_ref(), dest.as_ref()]);
        }
        push(&["--chdir".as_ref(), self.chdir.as_ref()]);
        if let Some(fd) = &info {
            push(&["--info-fd".as_ref(), fd.as_ref()]);
        }
        push(&["--seccomp".as_ref(), seccomp.as_ref(), "--".as_ref()]);
        a.extend(command.iter().cloned());
        a
    }
}
