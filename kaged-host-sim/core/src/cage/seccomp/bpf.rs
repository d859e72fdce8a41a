//! The hand-written prefix of the default program (classic BPF): what
//! seccompiler's one match action per program cannot say. On the
//! program's own architecture, `clone3` returns `ENOSYS` (its flags live in
//! memory, which seccomp cannot read, so libc must fall back to `clone`,
//! whose flags the main program checks), and so does `openat2` (its mode
//! is in memory: `openat`'s is checked); on x86_64, every x32-ABI syscall
//! (bit 30 of the number) returns `EPERM`. Anything else falls through to
//! seccompiler's program, which starts with its own architecture check;
//! jumps are relative, so a prefix leaves them intact.

use seccompiler::sock_filter;

use super::table::Errno;

pub(super) const BPF_LD_W_ABS: u16 = 0x20;
pub(super) const BPF_JEQ_K: u16 = 0x15;
pub(super) const BPF_JSET_K: u16 = 0x45;
pub(super) const BPF_RET_K: u16 = 0x06;
const SECCOMP_DATA_NR: u32 = 0;
const SECCOMP_DATA_ARCH: u32 = 4;
const AUDIT_ARCH_X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;
const AUDIT_ARCH_AARCH64: u32 = 183 | 0x8000_0000 | 0x4000_0000;
const AUDIT_ARCH_RISCV64: u32 = 243 | 0x8000_0000 | 0x4000_0000;
const X32_SYSCALL_BIT: u32 = 0x4000_0000;
pub(super) const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
/// `clone3`'s number: the same on x86_64, aarch64 and riscv64 (the
/// generic table's 435; a test checks it against seccompiler's tables).
pub(super) const CLONE3_NR: u32 = 435;
/// `openat2`'s number: the same on x86_64, aarch64 and riscv64 (the
/// generic table's 437; a test checks it against seccompiler's tables).
pub(super) const OPENAT2_NR: u32 = 437;

fn ins(code: u16, jt: u8, jf: u8, k: u32) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

/// The prefix for `arch` (`x86_64`, `aarch64`, `riscv64`).
pub(super) fn prefix(arch: &str) -> Vec<sock_filter> {
    let audit = match arch {
        "x86_64" => AUDIT_ARCH_X86_64,
        "aarch64" => AUDIT_ARCH_AARCH64,
        _ => AUDIT_ARCH_RISCV64,
    };
    let enosys = SECCOMP_RET_ERRNO | Errno::Enosys.number();
    let eperm = SECCOMP_RET_ERRNO | Errno::Eperm.number();
    let mut body = vec![ins(BPF_LD_W_ABS, 0, 0, SECCOMP_DATA_NR)];
    if arch == "x86_64" {
        // x32 bit set: next (deny); clear: skip 1
        body.push(ins(BPF_JSET_K, 0, 1, X32_SYSCALL_BIT));
        body.push(ins(BPF_RET_K, 0, 0, eperm));
    }
    // clone3, openat2: next (ENOSYS); anything else: skip 1 (onwards)
    for nr in [CLONE3_NR, OPENAT2_NR] {
        body.push(ins(BPF_JEQ_K, 0, 1, nr));
        body.push(ins(BPF_RET_K, 0, 0, enosys));
    }
    let skip = u8::try_from(body.len()).unwrap_or(u8::MAX);
    let mut program = vec![
        ins(BPF_LD_W_ABS, 0, 0, SECCOMP_DATA_ARCH),
        // another architecture: skip the prefix (to the main program)
        ins(BPF_JEQ_K, 0, skip, audit),
    ];
    program.extend(body);
    program
}
