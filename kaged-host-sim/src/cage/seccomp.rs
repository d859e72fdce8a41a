//! The default seccomp profile of every plugin cage (ADDENDUM §13: "deny
//! the host-control syscalls with EPERM"; plugin-host.md: "Seccomp profile:
//! always default, no relaxed for plugins"), compiled to the classic BPF
//! program that bwrap loads from `--seccomp FD`.
//!
//! # Why `seccompiler`
//! `seccompiler` (rust-vmm, the filter compiler of Firecracker) is pure
//! Rust: no `libseccomp` C library or headers to install on every
//! developer machine and in CI, which the alternative (`libseccomp`
//! bindings) needs. Its JSON front end takes syscall *names* and carries
//! per-architecture tables (x86_64, aarch64, riscv64), so one profile
//! compiles for every target from any host. Its output is a plain
//! `Vec<sock_filter>`, exactly the bytes bwrap reads.
//!
//! # The program
//! Default action: allow. The denied syscalls (families of ADDENDUM §13)
//! return `EPERM`. A syscall of another architecture (an i386 binary on
//! x86_64) kills the process (seccompiler's architecture check). On x86_64,
//! a short prefix written here also denies every x32-ABI syscall (numbers
//! with bit 30 set) with `EPERM`: a deny list keyed on x86_64 numbers would
//! otherwise be bypassed through the x32 numbering.
//!
//! Not covered (documented, not silently claimed): `clone`/`clone3` with
//! namespace flags (clone3's flags live in memory, which seccomp cannot
//! read); the cage drops every capability (`--cap-drop ALL`) and the cage's
//! own user namespace bounds what a nested namespace could reach.

use std::io::Write;
use std::os::fd::OwnedFd;

use seccompiler::{sock_filter, TargetArch};
use serde::{Deserialize, Serialize};

use super::error::CageError;

/// The profile's name, as the spec writes it (`seccomp: "default"`).
pub const PROFILE_NAME: &str = "default";

/// The errno of a denied syscall.
pub const DENIED_ERRNO: u32 = 1; // EPERM

/// The denied syscalls, by family (ADDENDUM §13).
pub const DENIED_FAMILIES: &[(&str, &[&str])] = &[
    (
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
    ),
    ("pivot_root", &["pivot_root"]),
    (
        "ptrace",
        &["ptrace", "process_vm_readv", "process_vm_writev"],
    ),
    ("kexec", &["kexec_load", "kexec_file_load"]),
    (
        "module loading",
        &["init_module", "finit_module", "delete_module"],
    ),
    ("bpf", &["bpf"]),
    ("perf_event_open", &["perf_event_open"]),
    ("keyring", &["add_key", "request_key", "keyctl"]),
    ("reboot", &["reboot"]),
    ("swap", &["swapon", "swapoff"]),
    ("namespaces", &["setns", "unshare"]),
];

/// Every denied syscall name, in profile order.
pub fn denied_syscalls() -> Vec<&'static str> {
    DENIED_FAMILIES
        .iter()
        .flat_map(|(_, names)| names.iter().copied())
        .collect()
}

/// The seccomp part of a cage policy: what the program does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeccompPolicy {
    /// The profile (`default`; plugins never get another).
    pub profile: String,
    /// What a denied syscall returns (`EPERM`).
    pub action: String,
    /// The denied syscalls.
    pub denied: Vec<String>,
    /// What the program does besides the list.
    pub also: Vec<String>,
}

impl SeccompPolicy {
    /// The default profile's description.
    pub fn default_profile() -> SeccompPolicy {
        SeccompPolicy {
            profile: PROFILE_NAME.to_string(),
            action: "EPERM".to_string(),
            denied: denied_syscalls().into_iter().map(String::from).collect(),
            also: vec![
                "syscalls of another architecture kill the process".to_string(),
                "x32 syscalls (x86_64) return EPERM".to_string(),
            ],
        }
    }
}

/// A compiled program: `sock_filter` instructions as bytes (8 each, native
/// endianness), ready for a pipe or memfd handed to `bwrap --seccomp FD`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeccompProgram {
    /// The architecture it checks for.
    pub arch: &'static str,
    /// The raw program.
    pub bytes: Vec<u8>,
}

impl SeccompProgram {
    /// How many BPF instructions.
    pub fn instructions(&self) -> usize {
        self.bytes.len() / 8
    }
}

/// The default profile compiled for this machine's architecture.
pub fn default_program() -> Result<SeccompProgram, CageError> {
    program_for(std::env::consts::ARCH)
}

/// The default profile compiled for `arch` (`x86_64`, `aarch64` or
/// `riscv64`), from any host.
pub fn program_for(arch: &str) -> Result<SeccompProgram, CageError> {
    let (arch, target) = match arch {
        "x86_64" => ("x86_64", TargetArch::x86_64),
        "aarch64" => ("aarch64", TargetArch::aarch64),
        "riscv64" => ("riscv64", TargetArch::riscv64),
        other => {
            return Err(CageError::Seccomp {
                arch: "this architecture",
                message: format!("`{other}` is not supported (x86_64, aarch64, riscv64 are)"),
            })
        }
    };
    let fail = |message: String| CageError::Seccomp { arch, message };
    let filter: Vec<serde_json::Value> = denied_syscalls()
        .into_iter()
        .map(|s| serde_json::json!({ "syscall": s }))
        .collect();
    let profile = serde_json::json!({
        PROFILE_NAME: {
            "mismatch_action": "allow",
            "match_action": { "errno": DENIED_ERRNO },
            "filter": filter,
        }
    });
    let text = serde_json::to_vec(&profile).map_err(|e| fail(e.to_string()))?;
    let mut map =
        seccompiler::compile_from_json(text.as_slice(), target).map_err(|e| fail(e.to_string()))?;
    let body = map
        .remove(PROFILE_NAME)
        .ok_or_else(|| fail("the compiler returned no program".to_string()))?;
    let mut program = if arch == "x86_64" {
        x32_prefix()
    } else {
        Vec::new()
    };
    program.extend(body);
    if program.len() > usize::from(u16::MAX) {
        return Err(fail(format!("{} instructions is too long", program.len())));
    }
    let mut bytes = Vec::with_capacity(program.len() * 8);
    for ins in &program {
        bytes.extend_from_slice(&ins.code.to_ne_bytes());
        bytes.push(ins.jt);
        bytes.push(ins.jf);
        bytes.extend_from_slice(&ins.k.to_ne_bytes());
    }
    Ok(SeccompProgram { arch, bytes })
}

const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JEQ_K: u16 = 0x15;
const BPF_JSET_K: u16 = 0x45;
const BPF_RET_K: u16 = 0x06;
const SECCOMP_DATA_NR: u32 = 0;
const SECCOMP_DATA_ARCH: u32 = 4;
const AUDIT_ARCH_X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;
const X32_SYSCALL_BIT: u32 = 0x4000_0000;
const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;

fn ins(code: u16, jt: u8, jf: u8, k: u32) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

/// x86_64 only: an x32 syscall (x86_64 audit arch, nr with bit 30) returns
/// EPERM; anything else falls through to seccompiler's program, which
/// starts with its own architecture check (jumps are relative, so a prefix
/// leaves them intact).
fn x32_prefix() -> Vec<sock_filter> {
    vec![
        ins(BPF_LD_W_ABS, 0, 0, SECCOMP_DATA_ARCH),
        // not x86_64: skip the next 3 (to the main program)
        ins(BPF_JEQ_K, 0, 3, AUDIT_ARCH_X86_64),
        ins(BPF_LD_W_ABS, 0, 0, SECCOMP_DATA_NR),
        // x32 bit set: next (deny); clear: skip 1 (to the main program)
        ins(BPF_JSET_K, 0, 1, X32_SYSCALL_BIT),
        ins(BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | DENIED_ERRNO),
    ]
}

/// The read end of a pipe holding `program` (the write end closed), ready
/// to be inherited by bwrap as its `--seccomp FD`. The descriptor is
/// close-on-exec: the spawner makes it inheritable in the child only.
pub fn program_fd(program: &SeccompProgram) -> std::io::Result<OwnedFd> {
    // A pipe holds 64 KiB without a reader; the program is a few hundred bytes.
    if program.bytes.len() > 65_536 {
        return Err(std::io::Error::other("seccomp program larger than a pipe"));
    }
    let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
    let mut writer = std::fs::File::from(write);
    writer.write_all(&program.bytes)?;
    drop(writer);
    Ok(read)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_profile_compiles_for_x86_64_and_aarch64() {
        for arch in ["x86_64", "aarch64", "riscv64"] {
            let p = program_for(arch).unwrap();
            assert_eq!(p.bytes.len() % 8, 0);
            // one rule per syscall at least, plus the arch check
            assert!(p.instructions() > denied_syscalls().len(), "{arch}");
        }
        assert!(program_for("mips").is_err());
    }

    #[test]
    fn the_x32_prefix_is_only_on_x86_64() {
        let x86 = program_for("x86_64").unwrap();
        let arm = program_for("aarch64").unwrap();
        // first instruction of x86_64 loads the arch; the prefix returns EPERM
        let ret = &x86.bytes[4 * 8..5 * 8];
        assert_eq!(u16::from_ne_bytes([ret[0], ret[1]]), BPF_RET_K);
        assert_eq!(
            u32::from_ne_bytes([ret[4], ret[5], ret[6], ret[7]]),
            SECCOMP_RET_ERRNO | 1
        );
        assert_eq!(x86.instructions(), arm.instructions() + 5);
    }

    #[test]
    fn the_program_is_deterministic() {
        assert_eq!(
            program_for("x86_64").unwrap(),
            program_for("x86_64").unwrap()
        );
    }
}
