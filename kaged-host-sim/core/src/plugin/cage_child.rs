//! What the spawn child does between fork and exec of bwrap (`caged`),
//! in this order:
//!
//! 1. every inherited descriptor close-on-exec (`fds`);
//! 2. a root host: the bind sources staged in a mount namespace of the
//!    child's own (`cage::stage`), while it is root;
//! 3. the cage's cgroup entered, its rlimits set (both need the host's
//!    rights);
//! 4. a root host: the plugin's own gid and uid (`cage::user`: never the
//!    host's root);
//! 5. the Landlock domain (`no_new_privs` first), before the descriptors
//!    are placed: placing them may reuse the ruleset's number;
//! 6. a filtered network: the connect filter, its listener handed to the
//!    host (`cage::net_filter`);
//! 7. bwrap's descriptors at their slots;
//! 8. SIGKILL when the host dies (`parent_death`), last, since a change
//!    of uid clears it. bwrap sets the same on itself
//!    (`--die-with-parent`), but only once it runs: a host killed between
//!    the fork and then left a bwrap without a parent, waiting on a cage
//!    nobody would end.
//!
//! Everything here runs in the child of a multi-threaded process: system
//! calls only, on values built before the fork, no allocation, no lock.

use std::ffi::CString;
use std::mem::ManuallyDrop;
use std::os::fd::{BorrowedFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};

use landlock::RulesetCreated;

use crate::cage::{self, net_filter::ChildSide, stage::Staging};

/// The child's steps, built before the fork.
pub(super) struct ChildSteps {
    /// The staged sources (a root host).
    pub(super) staging: Option<Staging>,
    /// The plugin's own id (a root host).
    pub(super) own_id: Option<u32>,
    /// The cgroup files the child writes its pid to (`0`).
    pub(super) cgroup_entries: Vec<CString>,
    /// The rlimits (soft = hard).
    pub(super) rlimits: Vec<(rustix::process::Resource, u64)>,
    /// The Landlock ruleset, entered once (`take`).
    pub(super) landlock: Option<RulesetCreated>,
    /// The connect filter's child side (a filtered network).
    pub(super) net: Option<ChildSide>,
    /// `(descriptor, slot)` for bwrap.
    pub(super) placements: Vec<(RawFd, RawFd)>,
    /// One entry per placement, for [`place_fds`].
    pub(super) scratch: Vec<RawFd>,
    /// The host's pid (the child's parent).
    pub(super) host: rustix::process::Pid,
}

impl ChildSteps {
    /// Run the steps (see the module documentation).
    pub(super) fn run(&mut self) -> std::io::Result<()> {
        super::fds::cloexec_from_3()?;
        // The staging's copies are the child's own descriptors from the
        // fork on, closed at exec.
        if let Some(staging) = &self.staging {
            staging.enter()?;
        }
        for entry in &self.cgroup_entries {
            let fd = rustix::fs::open(
                entry.as_c_str(),
                rustix::fs::OFlags::WRONLY | rustix::fs::OFlags::CLOEXEC,
                rustix::fs::Mode::empty(),
            )?;
            rustix::io::write(&fd, b"0")?;
        }
        for (resource, value) in &self.rlimits {
            let limit = rustix::process::Rlimit {
                current: Some(*value),
                maximum: Some(*value),
            };
            rustix::process::setrlimit(*resource, limit)?;
        }
        if let Some(id) = self.own_id {
            cage::stage::become_id(id)?;
        }
        if let Some(ruleset) = self.landlock.take() {
            ruleset.restrict_self().map_err(|_| {
                std::io::Error::from_raw_os_error(rustix::io::Errno::PERM.raw_os_error())
            })?;
        }
        cage::net_filter::enter(self.net.as_ref())?;
        place_fds(&self.placements, &mut self.scratch)?;
        super::parent_death::die_with(self.host)
    }
}

/// In the child: each `(descriptor, slot)` of `placements` at its slot,
/// inheritable. Every source is first duplicated above the highest slot
/// (into `scratch`, one entry per placement, allocated before the fork),
/// so that placing one never closes a source not yet placed.
fn place_fds(placements: &[(RawFd, RawFd)], scratch: &mut [RawFd]) -> std::io::Result<()> {
    let above = placements.iter().map(|p| p.1).max().unwrap_or(2) + 1;
    for ((src, _), tmp) in placements.iter().zip(scratch.iter_mut()) {
        // SAFETY: every source is open in the parent, hence in the child.
        let src = unsafe { BorrowedFd::borrow_raw(*src) };
        // Close-on-exec: the copy above the slots vanishes at exec.
        *tmp = rustix::io::fcntl_dupfd_cloexec(src, above)?.into_raw_fd();
    }
    for ((_, slot), tmp) in placements.iter().zip(scratch.iter()) {
        // SAFETY: `tmp` was just opened above; `slot` is a number dup2 may
        // (re)use; it is never closed here (ManuallyDrop), only replaced by
        // dup2, which clears CLOEXEC.
        let tmp = unsafe { BorrowedFd::borrow_raw(*tmp) };
        let mut target = ManuallyDrop::new(unsafe { OwnedFd::from_raw_fd(*slot) });
        rustix::io::dup2(tmp, &mut target)?;
    }
    Ok(())
}
