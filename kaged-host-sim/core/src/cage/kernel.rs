//! The kernel interfaces of the cage's `/proc`, closed the way Docker's
//! default closes them (ADDENDUM §15, "Kernel interfaces"): whatever uid
//! the host runs as, a caged plugin cannot write them, nor read what is
//! masked.
//!
//! Why not by uid: bwrap started by root runs the plugin as uid 0 of a user
//! namespace mapped to the host's root, and the kernel checks ownership,
//! not capabilities, on `/proc/sys` (uid 0 writes `kernel.core_pattern`
//! even with every capability dropped). Running the plugin under another
//! uid would close that, but then bwrap cannot enter the 0700 temporary
//! directories plugins are installed in, and `Command::uid` applies before
//! `pre_exec`. So the plugin stays uid 0 with no capability, and these
//! paths are bound over:
//!
//! - read-only: the host's own `/proc/X` bound read-only over the cage's
//!   (`--ro-bind /proc/sys /proc/sys` after `--proc`: `--remount-ro` fails
//!   on a path that is not a mount point);
//! - masked: a file by `/dev/null`, a directory by an empty read-only tmpfs.
//!
//! Only what exists on this kernel is bound (bwrap aborts on a missing
//! destination under `/proc`, which it cannot create).

use std::path::PathBuf;

use super::error::CageError;
use super::fs_view::{FsView, Node};
use super::policy::Mount;

/// Read-only in every cage (Docker's `readonlyPaths`).
pub const READ_ONLY: [&str; 5] = [
    "/proc/bus",
    "/proc/fs",
    "/proc/irq",
    "/proc/sys",
    "/proc/sysrq-trigger",
];

/// Masked in every cage (Docker's `maskedPaths` under `/proc`, and
/// `/proc/kmsg`, which Docker leaves to its capability check).
pub const MASKED: [&str; 11] = [
    "/proc/acpi",
    "/proc/asound",
    "/proc/interrupts",
    "/proc/kcore",
    "/proc/keys",
    "/proc/kmsg",
    "/proc/latency_stats",
    "/proc/sched_debug",
    "/proc/scsi",
    "/proc/timer_list",
    "/proc/timer_stats",
];

/// Why a kernel path is bound over.
pub const BECAUSE_KERNEL: &str = "kernel interface";

/// The read-only and masking mounts of the paths that exist on `fs`.
pub fn kernel_mounts(fs: &dyn FsView) -> Result<Vec<Mount>, CageError> {
    let mut mounts = Vec::new();
    for p in READ_ONLY {
        let path = PathBuf::from(p);
        match fs
            .lstat(&path)
            .map_err(|e| CageError::inspect(BECAUSE_KERNEL, &path, e))?
        {
            Node::Missing | Node::Symlink(_) => {}
            Node::Dir | Node::File => mounts.push(Mount::KernelReadOnly { dest: path }),
        }
    }
    for p in MASKED {
        let path = PathBuf::from(p);
        match fs
            .lstat(&path)
            .map_err(|e| CageError::inspect(BECAUSE_KERNEL, &path, e))?
        {
            Node::Missing | Node::Symlink(_) => {}
            Node::Dir => mounts.push(Mount::Masked {
                dest: path,
                dir: true,
            }),
            Node::File => mounts.push(Mount::Masked {
                dest: path,
                dir: false,
            }),
        }
    }
    Ok(mounts)
}
