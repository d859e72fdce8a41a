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
//! Default action: allow. The rows of [`table::REFUSALS`] (the families
//! of ADDENDUM §13, and what Docker's default profile and Flatpak's filter
//! refuse besides) return their errno: `EPERM`, or `ENOSYS` for `clone3`
//! (a hand-written prefix: seccompiler allows one match action per
//! program, and bwrap takes one `--seccomp` program), so that libc falls
//! back to `clone`, whose flags the filter reads. A syscall of another
//! architecture (an i386 binary on x86_64) kills the process
//! (seccompiler's architecture check). On x86_64, the prefix also denies
//! every x32-ABI syscall (numbers with bit 30 set) with `EPERM`: a deny
//! list keyed on x86_64 numbers would otherwise be bypassed through the
//! x32 numbering.

use std::io::Write;
use std::os::fd::OwnedFd;

use seccompiler::TargetArch;
use serde::{Deserialize, Serialize};

use super::error::CageError;

mod bpf;
pub mod table;

pub use table::{refusals_markdown, Errno, Refusal, When, REFUSALS};

/// The profile's name, as the spec writes it (`seccomp: "default"`).
pub const PROFILE_NAME: &str = "default";

/// The errno of a denied syscall.
pub const DENIED_ERRNO: u32 = 1; // EPERM

/// Every syscall refused whatever its arguments on `arch`, with `EPERM`,
/// in profile order.
pub fn denied_syscalls(arch: &str) -> Vec<&'static str> {
    REFUSALS
        .iter()
        .filter(|r| r.applies_on(arch) && r.when == When::Always && r.errno == Errno::Eperm)
        .flat_map(|r| r.syscalls.iter().copied())
        .collect()
}

/// The refusals that depend on the arguments or return another errno, in
/// words (`clone with any of CLONE_NEWUSER, ...: EPERM`).
pub fn conditional_refusals(arch: &str) -> Vec<String> {
    REFUSALS
        .iter()
        .filter(|r| r.applies_on(arch) && (r.when != When::Always || r.errno != Errno::Eperm))
        .map(|r| {
            format!(
                "{} {}: {}",
                r.syscalls.join(", "),
                r.condition(),
                r.errno.name()
            )
        })
        .collect()
}

/// The seccomp part of a cage policy: what the program does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeccompPolicy {
    /// The profile (`default`; plugins never get another).
    pub profile: String,
    /// What a denied syscall returns (`EPERM`).
    pub action: String,
    /// The syscalls refused whatever their arguments (`EPERM`).
    pub denied: Vec<String>,
    /// The refusals that depend on the arguments, or return another errno.
    #[serde(default)]
    pub conditional: Vec<String>,
    /// What the program does besides the list.
    pub also: Vec<String>,
}

impl SeccompPolicy {
    /// The default profile's description, for this machine's architecture.
    pub fn default_profile() -> SeccompPolicy {
        let arch = std::env::consts::ARCH;
        SeccompPolicy {
            profile: PROFILE_NAME.to_string(),
            action: "EPERM".to_string(),
            denied: denied_syscalls(arch)
                .into_iter()
                .map(String::from)
                .collect(),
            conditional: conditional_refusals(arch),
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
/// Compiled once per process (the profile is a constant; every spawn
/// used to compile it again).
pub fn default_program() -> Result<SeccompProgram, CageError> {
    static PROGRAM: std::sync::OnceLock<Result<SeccompProgram, (String, &'static str)>> =
        std::sync::OnceLock::new();
    PROGRAM
        .get_or_init(|| {
            program_for(std::env::consts::ARCH).map_err(|e| match e {
                CageError::Seccomp { arch, message } => (message, arch),
                other => (other.to_string(), std::env::consts::ARCH),
            })
        })
        .clone()
        .map_err(|(message, arch)| CageError::Seccomp { arch, message })
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
    let profile = serde_json::json!({
        PROFILE_NAME: {
            "mismatch_action": "allow",
            "match_action": { "errno": DENIED_ERRNO },
            "filter": json_rules(arch),
        }
    });
    let text = serde_json::to_vec(&profile).map_err(|e| fail(e.to_string()))?;
    let mut map =
        seccompiler::compile_from_json(text.as_slice(), target).map_err(|e| fail(e.to_string()))?;
    let body = map
        .remove(PROFILE_NAME)
        .ok_or_else(|| fail("the compiler returned no program".to_string()))?;
    let mut program = bpf::prefix(arch);
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

/// The `EPERM` rows of the table as seccompiler JSON rules for `arch`:
/// one rule per unconditional syscall, one per flag of an `AnyFlag` row
/// (rules are or-ed), one rule of and-ed `ne` conditions for a `NotOneOf`
/// row, one per value of a `OneOf` row.
fn json_rules(arch: &str) -> Vec<serde_json::Value> {
    use serde_json::json;
    let cond = |index: u8, kind: &str, op: serde_json::Value, val: u64| json!({ "index": index, "type": kind, "op": op, "val": val });
    let mut rules = Vec::new();
    for r in REFUSALS
        .iter()
        .filter(|r| r.applies_on(arch) && r.errno == Errno::Eperm)
    {
        for s in r.syscalls {
            match r.when {
                When::Always => rules.push(json!({ "syscall": s })),
                When::AnyFlag { index, flags } => {
                    for (_, f) in flags {
                        let args = [cond(index, "qword", json!({ "masked_eq": f }), *f)];
                        rules.push(json!({ "syscall": s, "args": args }));
                    }
                }
                When::NotOneOf { index, allowed } => {
                    let args: Vec<_> = allowed
                        .iter()
                        .map(|(_, v)| cond(index, "dword", json!("ne"), *v))
                        .collect();
                    rules.push(json!({ "syscall": s, "args": args }));
                }
                When::OneOf { index, refused } => {
                    for (_, v) in refused {
                        let args = [cond(index, "dword", json!("eq"), *v)];
                        rules.push(json!({ "syscall": s, "args": args }));
                    }
                }
            }
        }
    }
    rules
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
    use super::bpf::{BPF_RET_K, CLONE3_NR, OPENAT2_NR, SECCOMP_RET_ERRNO};
    use super::*;

    fn ret_at(p: &SeccompProgram, i: usize) -> (u16, u32) {
        let b = &p.bytes[i * 8..(i + 1) * 8];
        (
            u16::from_ne_bytes([b[0], b[1]]),
            u32::from_ne_bytes([b[4], b[5], b[6], b[7]]),
        )
    }

    #[test]
    fn the_profile_compiles_for_x86_64_aarch64_and_riscv64() {
        for arch in ["x86_64", "aarch64", "riscv64"] {
            let p = program_for(arch).unwrap();
            assert_eq!(p.bytes.len() % 8, 0);
            // one rule per syscall at least, plus the arch check
            assert!(p.instructions() > denied_syscalls(arch).len(), "{arch}");
        }
        assert!(program_for("mips").is_err());
    }

    #[test]
    fn the_prefix_answers_clone3_enosys_and_x32_eperm() {
        let x86 = program_for("x86_64").unwrap();
        let arm = program_for("aarch64").unwrap();
        // x86_64: ld arch, jeq, ld nr, jset x32, ret EPERM, jeq clone3,
        // ret ENOSYS, jeq openat2, ret ENOSYS
        assert_eq!(ret_at(&x86, 4), (BPF_RET_K, SECCOMP_RET_ERRNO | 1));
        assert_eq!(ret_at(&x86, 6), (BPF_RET_K, SECCOMP_RET_ERRNO | 38));
        assert_eq!(ret_at(&x86, 5).1, CLONE3_NR);
        assert_eq!(ret_at(&x86, 7).1, OPENAT2_NR);
        assert_eq!(ret_at(&x86, 8), (BPF_RET_K, SECCOMP_RET_ERRNO | 38));
        // aarch64: no x32 part
        assert_eq!(ret_at(&arm, 4), (BPF_RET_K, SECCOMP_RET_ERRNO | 38));
        assert_eq!(ret_at(&arm, 6), (BPF_RET_K, SECCOMP_RET_ERRNO | 38));
    }

    #[test]
    fn clone3_and_openat2_have_the_same_numbers_on_every_architecture() {
        // seccompiler's tables know the numbers: a rule on each compiles to
        // a comparison with 435 (437) on each architecture.
        for (arch, target) in [
            ("x86_64", TargetArch::x86_64),
            ("aarch64", TargetArch::aarch64),
            ("riscv64", TargetArch::riscv64),
        ] {
            for (name, nr) in [("clone3", CLONE3_NR), ("openat2", OPENAT2_NR)] {
                let json = serde_json::json!({"p": {"mismatch_action": "allow",
                    "match_action": "trap", "filter": [{"syscall": name}]}});
                let text = serde_json::to_vec(&json).unwrap();
                let mut map = seccompiler::compile_from_json(text.as_slice(), target).unwrap();
                let p = map.remove("p").unwrap();
                assert!(p.iter().any(|i| i.k == nr), "{arch} {name}");
            }
        }
    }

    #[test]
    fn every_row_compiles_on_the_architectures_it_applies_to() {
        for arch in ["x86_64", "aarch64", "riscv64"] {
            let names = denied_syscalls(arch);
            assert!(names.contains(&"io_uring_setup") && names.contains(&"userfaultfd"));
            assert_eq!(names.contains(&"iopl"), arch == "x86_64", "{arch}");
            let cond = conditional_refusals(arch).join("\n");
            assert!(cond.contains("clone with any of CLONE_NEWUSER"), "{cond}");
            assert!(cond.contains("clone3 always: ENOSYS"), "{cond}");
            assert!(cond.contains("openat2 always: ENOSYS"), "{cond}");
            assert!(
                cond.contains("openat with any of S_ISUID, S_ISGID: EPERM"),
                "{cond}"
            );
            assert!(
                cond.contains("ioctl for TIOCSTI, TIOCLINUX: EPERM"),
                "{cond}"
            );
        }
    }

    #[test]
    fn the_program_is_deterministic() {
        assert_eq!(
            program_for("x86_64").unwrap(),
            program_for("x86_64").unwrap()
        );
    }
}
