//! What the default seccomp profile refuses, as data (architecture rule 5:
//! names are data): one row per family of system calls, with the condition
//! on the arguments when only some calls are refused, the errno, and which
//! of the sandboxes people trust for untrusted code refuses the same
//! (Docker's default profile, Flatpak's bwrap filter). `docs/authoring.md`
//! § The cage carries the table generated from [`REFUSALS`]
//! ([`refusals_markdown`]); a test keeps them equal.

/// When the calls of a row are refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// Always.
    Always,
    /// When argument `index` has any of these flag bits set.
    AnyFlag {
        /// The argument (0-based).
        index: u8,
        /// The flags, by name.
        flags: &'static [(&'static str, u64)],
    },
    /// When the low 32 bits of argument `index` are none of these values.
    NotOneOf {
        /// The argument (0-based).
        index: u8,
        /// The allowed values, by name.
        allowed: &'static [(&'static str, u64)],
    },
    /// When the low 32 bits of argument `index` are one of these values.
    OneOf {
        /// The argument (0-based).
        index: u8,
        /// The refused values, by name.
        refused: &'static [(&'static str, u64)],
    },
}

/// What a refused call returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Errno {
    /// `EPERM` (1): "operation not permitted".
    Eperm,
    /// `ENOSYS` (38): "not implemented", so that a caller falls back
    /// (`clone3` → `clone`, whose flags seccomp can read).
    Enosys,
}

impl Errno {
    /// The errno's number.
    pub fn number(self) -> u32 {
        match self {
            Errno::Eperm => 1,
            Errno::Enosys => 38,
        }
    }

    /// `EPERM` or `ENOSYS`.
    pub fn name(self) -> &'static str {
        match self {
            Errno::Eperm => "EPERM",
            Errno::Enosys => "ENOSYS",
        }
    }
}

/// One family of refused calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    /// The family's name (`mount`, `user namespaces`...).
    pub family: &'static str,
    /// The system calls, by name.
    pub syscalls: &'static [&'static str],
    /// When they are refused.
    pub when: When,
    /// What they return.
    pub errno: Errno,
    /// Only on this architecture (`x86_64`), or everywhere.
    pub only_on: Option<&'static str>,
    /// Who else refuses them by default.
    pub also: &'static str,
}

const fn always(
    family: &'static str,
    syscalls: &'static [&'static str],
    also: &'static str,
) -> Refusal {
    Refusal {
        family,
        syscalls,
        when: When::Always,
        errno: Errno::Eperm,
        only_on: None,
        also,
    }
}

/// `CLONE_NEWUSER` and the other namespace flags of `clone`.
pub const NAMESPACE_FLAGS: &[(&str, u64)] = &[
    ("CLONE_NEWUSER", 0x1000_0000),
    ("CLONE_NEWNS", 0x0002_0000),
    ("CLONE_NEWCGROUP", 0x0200_0000),
    ("CLONE_NEWUTS", 0x0400_0000),
    ("CLONE_NEWIPC", 0x0800_0000),
    ("CLONE_NEWPID", 0x2000_0000),
    ("CLONE_NEWNET", 0x4000_0000),
    ("CLONE_NEWTIME", 0x0000_0080),
];

/// The personalities a plugin may set (Docker's list; Flatpak allows the
/// first and the query).
pub const PERSONALITIES: &[(&str, u64)] = &[
    ("PER_LINUX", 0x0),
    ("PER_LINUX32", 0x8),
    ("UNAME26", 0x2_0000),
    ("PER_LINUX32|UNAME26", 0x2_0008),
    ("query (0xffffffff)", 0xffff_ffff),
];

/// The terminal ioctls that push input or drive the console.
pub const TTY_IOCTLS: &[(&str, u64)] = &[("TIOCSTI", 0x5412), ("TIOCLINUX", 0x541C)];

/// The socket families a plugin may create (Flatpak's allowlist).
pub const SOCKET_FAMILIES: &[(&str, u64)] = &[
    ("AF_UNIX", 1),
    ("AF_INET", 2),
    ("AF_INET6", 10),
    ("AF_NETLINK", 16),
];

/// The set-user-ID and set-group-ID mode bits (issue 45: the plugin is
/// uid 0 of a namespace mapped to the host's uid, so on a root host a file
/// it made setuid in a `write:fs:` grant was setuid root on the host).
pub const SET_ID_BITS: &[(&str, u64)] = &[("S_ISUID", 0o4000), ("S_ISGID", 0o2000)];

/// A row refusing the set-id bits in the mode argument `index`.
const fn set_id(
    family: &'static str,
    syscalls: &'static [&'static str],
    index: u8,
    only_on: Option<&'static str>,
) -> Refusal {
    Refusal {
        family,
        syscalls,
        when: When::AnyFlag {
            index,
            flags: SET_ID_BITS,
        },
        errno: Errno::Eperm,
        only_on,
        also: "neither (the kit's: a plugin must not make a set-id file on the host)",
    }
}

/// Every refused family, in the order of the profile.
pub const REFUSALS: &[Refusal] = &[
    always(
        "mount",
        &[
            "mount",
            "umount2",
            "open_tree",
            "move_mount",
            "fsopen",
            "fsconfig",
            "fsmount",
            "fspick",
            "mount_setattr",
        ],
        "Docker, Flatpak",
    ),
    always(
        "pivot_root, chroot",
        &["pivot_root", "chroot"],
        "Flatpak (Docker: pivot_root)",
    ),
    always(
        "ptrace",
        &["ptrace", "process_vm_readv", "process_vm_writev", "kcmp"],
        "Flatpak (Docker: kcmp; it allows ptrace since kernel 4.8)",
    ),
    always("kexec", &["kexec_load", "kexec_file_load"], "Docker"),
    always(
        "module loading",
        &["init_module", "finit_module", "delete_module"],
        "Docker",
    ),
    Refusal {
        family: "obsolete module calls",
        syscalls: &["create_module", "get_kernel_syms", "query_module"],
        when: When::Always,
        errno: Errno::Eperm,
        only_on: Some("x86_64"),
        also: "Docker",
    },
    always("bpf", &["bpf"], "Docker"),
    always("perf_event_open", &["perf_event_open"], "Docker, Flatpak"),
    always(
        "keyring",
        &["add_key", "request_key", "keyctl"],
        "Docker, Flatpak",
    ),
    always("reboot", &["reboot"], "Docker"),
    always("swap", &["swapon", "swapoff"], "Docker"),
    always("namespaces", &["setns", "unshare"], "Docker, Flatpak"),
    Refusal {
        family: "user namespaces (and every other namespace) by clone",
        syscalls: &["clone"],
        when: When::AnyFlag {
            index: 0,
            flags: NAMESPACE_FLAGS,
        },
        errno: Errno::Eperm,
        only_on: None,
        also: "Docker (every flag), Flatpak (CLONE_NEWUSER)",
    },
    Refusal {
        family: "clone3 (its flags are in memory seccomp cannot read)",
        syscalls: &["clone3"],
        when: When::Always,
        errno: Errno::Enosys,
        only_on: None,
        also: "Docker, Flatpak",
    },
    always(
        "io_uring",
        &["io_uring_setup", "io_uring_enter", "io_uring_register"],
        "Docker (since 25.0), Flatpak",
    ),
    always("userfaultfd", &["userfaultfd"], "Docker"),
    Refusal {
        family: "personality other than Linux's",
        syscalls: &["personality"],
        when: When::NotOneOf {
            index: 0,
            allowed: PERSONALITIES,
        },
        errno: Errno::Eperm,
        only_on: None,
        also: "Docker, Flatpak",
    },
    Refusal {
        family: "terminal injection",
        syscalls: &["ioctl"],
        when: When::OneOf {
            index: 1,
            refused: TTY_IOCTLS,
        },
        errno: Errno::Eperm,
        only_on: None,
        also: "Flatpak",
    },
    set_id("set-id bits by fchmod", &["fchmod"], 1, None),
    set_id(
        "set-id bits by fchmodat, mknodat",
        &["fchmodat", "fchmodat2", "mknodat"],
        2,
        None,
    ),
    set_id("set-id bits by openat", &["openat"], 3, None),
    set_id(
        "set-id bits by chmod, creat, mknod",
        &["chmod", "creat", "mknod"],
        1,
        Some("x86_64"),
    ),
    set_id("set-id bits by open", &["open"], 2, Some("x86_64")),
    Refusal {
        family: "openat2 (its mode is in memory seccomp cannot read)",
        syscalls: &["openat2"],
        when: When::Always,
        errno: Errno::Enosys,
        only_on: None,
        also: "neither (the kit's: libc's open does not use it)",
    },
    Refusal {
        family: "socket families other than unix, inet, inet6, netlink",
        syscalls: &["socket"],
        when: When::NotOneOf {
            index: 0,
            allowed: SOCKET_FAMILIES,
        },
        errno: Errno::Eperm,
        only_on: None,
        also: "Flatpak",
    },
    always(
        "memory policy",
        &[
            "mbind",
            "get_mempolicy",
            "set_mempolicy",
            "migrate_pages",
            "move_pages",
        ],
        "Docker, Flatpak",
    ),
    always(
        "clock",
        &["settimeofday", "clock_settime", "clock_adjtime"],
        "Docker",
    ),
    always(
        "kernel log, accounting, quotas",
        &["syslog", "acct", "quotactl", "quotactl_fd"],
        "Docker, Flatpak",
    ),
    always(
        "file handles",
        &["name_to_handle_at", "open_by_handle_at"],
        "Docker",
    ),
    always(
        "obsolete or device-level",
        &["lookup_dcookie", "nfsservctl", "vhangup", "fanotify_init"],
        "Docker",
    ),
    Refusal {
        family: "x86 port I/O and obsolete calls",
        syscalls: &[
            "iopl",
            "ioperm",
            "modify_ldt",
            "uselib",
            "ustat",
            "sysfs",
            "_sysctl",
        ],
        when: When::Always,
        errno: Errno::Eperm,
        only_on: Some("x86_64"),
        also: "Docker, Flatpak",
    },
];

impl Refusal {
    /// Whether the row applies on `arch`.
    pub fn applies_on(&self, arch: &str) -> bool {
        self.only_on.is_none_or(|a| a == arch)
    }

    /// The condition in words (`always`, `with CLONE_NEWUSER, ...`).
    pub fn condition(&self) -> String {
        let names = |v: &[(&str, u64)]| v.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ");
        match self.when {
            When::Always => "always".to_string(),
            When::AnyFlag { flags, .. } => format!("with any of {}", names(flags)),
            When::NotOneOf { allowed, .. } => format!("unless {}", names(allowed)),
            When::OneOf { refused, .. } => format!("for {}", names(refused)),
        }
    }
}

/// The table of [`REFUSALS`] as Markdown (generated into the docs).
pub fn refusals_markdown() -> String {
    let mut out = String::from(
        "| family | system calls | refused | returns | also refused by |\n|---|---|---|---|---|\n",
    );
    for r in REFUSALS {
        let calls = r
            .syscalls
            .iter()
            .map(|s| format!("`{s}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let arch = r.only_on.map(|a| format!(" ({a})")).unwrap_or_default();
        out.push_str(&format!(
            "| {}{arch} | {calls} | {} | `{}` | {} |\n",
            r.family,
            r.condition(),
            r.errno.name(),
            r.also
        ));
    }
    out
}
