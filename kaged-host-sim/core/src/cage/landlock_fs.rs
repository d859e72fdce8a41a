//! The Landlock layer's filesystem rules (issue 45 item 3): inside the
//! cage, before the plugin's command runs, a Landlock domain allows file
//! access only beneath what the cage mounted, read-only where the mount is
//! read-only, so that a mistake in the mounts (a bind made writable, a
//! path that should not be there) is not the only wall.
//!
//! A domain that handles filesystem rights forbids `mount(2)`, which bwrap
//! needs while it builds the cage, so these rules cannot be entered by the
//! spawner with the rest of the layer (`landlock_layer`): the cage runs the
//! host's own executable first (`cage::init`), which opens each path of
//! the rules (by descriptor: a symlink swapped in later changes nothing,
//! and the plugin has not run yet), restricts itself and executes the
//! plugin's command.
//!
//! The rules themselves come from the mounts: `cage::landlock_rules`.

use std::path::PathBuf;

use landlock::{Access, AccessFs, BitFlags, ABI};
use serde::{Deserialize, Serialize};

/// What a rule allows beneath its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FsAccess {
    /// List directories only (the cage's root: its directory structure,
    /// no file content).
    List,
    /// Read files, list directories, execute.
    Read,
    /// Everything (a writable bind, the cage's tmpfs).
    Write,
    /// The cage's `/dev`: read, write and device ioctls (terminals).
    Dev,
    /// The cage's `/proc`: read, and write its files (`/proc/self/...`).
    Proc,
}

impl FsAccess {
    /// The Landlock rights of this access (the best this crate's ABI table
    /// knows; the kernel's own ABI applies best effort).
    pub fn rights(self) -> BitFlags<AccessFs> {
        let abi = ABI::V6;
        match self {
            FsAccess::List => AccessFs::ReadDir.into(),
            FsAccess::Read => AccessFs::from_read(abi),
            FsAccess::Write => AccessFs::from_all(abi),
            FsAccess::Dev => AccessFs::from_read(abi) | AccessFs::WriteFile | AccessFs::IoctlDev,
            FsAccess::Proc => AccessFs::from_read(abi) | AccessFs::WriteFile,
        }
    }
}

/// One rule: `access` beneath `path` (a path inside the cage).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FsRule {
    /// Where, inside the cage.
    pub path: PathBuf,
    /// What.
    pub access: FsAccess,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_only_mounts_get_no_write_right() {
        assert!(!FsAccess::Read.rights().contains(AccessFs::WriteFile));
        assert!(!FsAccess::Read.rights().contains(AccessFs::MakeReg));
        assert!(FsAccess::Read.rights().contains(AccessFs::Execute));
        assert!(FsAccess::Write.rights().contains(AccessFs::RemoveFile));
        assert!(!FsAccess::Proc.rights().contains(AccessFs::MakeReg));
        assert_eq!(FsAccess::List.rights(), AccessFs::ReadDir);
    }
}
