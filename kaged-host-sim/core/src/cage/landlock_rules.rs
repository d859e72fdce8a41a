//! The Landlock file rules of a cage, from its mounts
//! ([`super::landlock_fs`] says what each access allows).
//!
//! ```
//! use kaged_host_core::cage::landlock_fs::FsAccess;
//! use kaged_host_core::cage::landlock_rules::fs_rules;
//! use kaged_host_core::cage::Mount;
//!
//! let mounts = vec![
//!     Mount::Tmpfs { dest: "/tmp".into(), size: None },
//!     Mount::Bind {
//!         source: "/opt/p".into(),
//!         dest: "/opt/p".into(),
//!         mode: kaged_host_core::cage::Mode::Ro,
//!         missing: false,
//!         because: vec!["install dir".into()],
//!     },
//! ];
//! let rules = fs_rules(&mounts);
//! assert!(rules.iter().any(|r| r.path.as_os_str() == "/tmp" && r.access == FsAccess::Write));
//! assert!(rules.iter().any(|r| r.path.as_os_str() == "/opt/p" && r.access == FsAccess::Read));
//! ```

use std::path::PathBuf;

use super::landlock_fs::{FsAccess, FsRule};
use super::policy::{Mode, Mount};

/// The rules of a cage with `mounts`: the root listable, each mount's
/// destination as it is mounted. A bind whose source was missing at compile
/// time gets its rule too (it may be there at spawn; the init skips a path
/// that is not).
pub fn fs_rules(mounts: &[Mount]) -> Vec<FsRule> {
    let mut rules = vec![FsRule {
        path: PathBuf::from("/"),
        access: FsAccess::List,
    }];
    for m in mounts {
        let access = match m {
            Mount::Proc { .. } => FsAccess::Proc,
            Mount::Dev { .. } => FsAccess::Dev,
            Mount::Tmpfs { .. } => FsAccess::Write,
            Mount::Sealed { .. } | Mount::HostsFile { .. } => FsAccess::Read,
            Mount::Bind { mode: Mode::Ro, .. } => FsAccess::Read,
            Mount::Bind { mode: Mode::Rw, .. } => FsAccess::Write,
            // Under /proc or /dev (covered), or a link to a bound path.
            Mount::KernelReadOnly { .. } | Mount::Masked { .. } | Mount::Symlink { .. } => continue,
        };
        rules.push(FsRule {
            path: m.dest().to_path_buf(),
            access,
        });
    }
    rules.sort_by(|a, b| a.path.cmp(&b.path).then(a.access.cmp(&b.access)));
    rules.dedup();
    rules
}
