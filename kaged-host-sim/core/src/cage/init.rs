//! The cage's init (issue 45 item 3): the host's own executable, bound
//! read-only at [`INIT_DEST`] and run by bwrap in place of the plugin's
//! command, enters the Landlock filesystem rules
//! ([`super::landlock_fs`]) and then executes the command, so that the
//! plugin and everything it starts run under them.
//!
//! ```text
//! bwrap ... -- /.kaged-cage-init --kaged-cage-init '[{"path":"/","access":"list"},...]' -- CMD ARGS...
//! ```
//!
//! Every executable that links this crate (the `kaged-host-sim` and
//! `kaged-conformance` CLIs, the test binaries) answers that argument
//! before `main` runs (a constructor, [`ctor`]), so the init is always
//! there and of the same build as the host that wrote its rules. The
//! spawner prefers the small `kaged-cage-init` binary beside the host's
//! executable ([`init_executable`]): a large executable takes milliseconds
//! longer to start. It opens each rule's path in the cage (the plugin has not
//! run yet, so nothing can have been swapped), restricts itself (best
//! effort: what the kernel lacks is left out), and `execv`s the command
//! with the environment bwrap gave it. A failure is one line on stderr,
//! `kaged cage init: ...`, and exit code 127.

use std::ffi::{CString, OsString};
use std::path::PathBuf;

use landlock::{
    Access, AccessFs, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, ABI,
};

use super::landlock_fs::FsRule;

/// The argument that makes an executable of the kit the cage's init.
pub const INIT_ARG: &str = "--kaged-cage-init";
/// Where the init is bound in the cage.
pub const INIT_DEST: &str = "/.kaged-cage-init";
/// Why the init is bound (a `Mount::Bind`'s `because`).
pub const BECAUSE_INIT: &str = "cage init";

/// The small init's file name (the `kaged-cage-init` binary of
/// `kaged-host-sim`).
pub const INIT_BIN: &str = "kaged-cage-init";

/// What the small init says when run without [`INIT_ARG`].
pub fn usage() -> String {
    format!(
        "{INIT_BIN}: the kaged cage's init, run by the host in each cage as \
         `{INIT_BIN} {INIT_ARG} RULES -- COMMAND...`; not a command for people"
    )
}

/// The executable to bind as the init: [`INIT_BIN`] beside the host's
/// own executable (or one directory up, for test binaries under
/// `target/*/deps`), else the host's executable itself; or why there is
/// none.
pub fn init_executable() -> Result<PathBuf, String> {
    let exe = std::fs::read_link("/proc/self/exe")
        .map_err(|e| format!("cannot read /proc/self/exe: {e}"))?;
    if exe.as_os_str().as_encoded_bytes().ends_with(b" (deleted)") {
        return Err(format!(
            "the host's executable {} was replaced on disk since it started",
            exe.display()
        ));
    }
    let small = exe
        .ancestors()
        .skip(1)
        .take(2)
        .map(|dir| dir.join(INIT_BIN))
        .find(|c| super::available::is_executable(c));
    Ok(small.unwrap_or(exe))
}

/// The command bwrap runs: the init, its rules, `--`, then `command`.
pub fn wrap(rules: &[FsRule], command: &[OsString]) -> Vec<OsString> {
    // A list of plain structs always serialises.
    let spec = serde_json::to_string(rules).unwrap_or_else(|_| "[]".to_string());
    let mut v: Vec<OsString> = vec![INIT_DEST.into(), INIT_ARG.into(), spec.into(), "--".into()];
    v.extend(command.iter().cloned());
    v
}

#[ctor::ctor(unsafe)]
fn cage_init_hook() {
    let Ok(cmdline) = std::fs::read("/proc/self/cmdline") else {
        return;
    };
    let mut args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
    if args.last().is_some_and(|a| a.is_empty()) {
        args.pop();
    }
    if args.get(1).copied() != Some(INIT_ARG.as_bytes()) {
        return;
    }
    let why = run(&args[2..]);
    eprintln!("kaged cage init: {why}");
    std::process::exit(127);
}

/// `SPEC -- CMD ARGS...`: restrict, then exec; returns only why it could
/// not.
fn run(args: &[&[u8]]) -> String {
    let [spec, sep, command @ ..] = args else {
        return "expected RULES -- COMMAND".to_string();
    };
    if *sep != b"--" || command.is_empty() {
        return "expected RULES -- COMMAND".to_string();
    }
    let rules: Vec<FsRule> = match serde_json::from_slice(spec) {
        Ok(r) => r,
        Err(e) => return format!("the rules do not parse: {e}"),
    };
    if let Err(e) = restrict(&rules) {
        return format!("cannot enter the Landlock rules: {e}");
    }
    let argv: Result<Vec<CString>, _> = command.iter().map(|a| CString::new(*a)).collect();
    let Ok(argv) = argv else {
        return "an argument holds a NUL byte".to_string();
    };
    let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    // SAFETY: `argv` outlives the call; the pointer list ends with NULL;
    // the environment is the process's own (bwrap's `--setenv`).
    unsafe { libc::execv(ptrs[0], ptrs.as_ptr()) };
    format!(
        "cannot run {}: {}",
        String::from_utf8_lossy(command[0]),
        std::io::Error::last_os_error()
    )
}

fn restrict(rules: &[FsRule]) -> Result<(), landlock::RulesetError> {
    let abi = ABI::V6;
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))?
        .create()?;
    for rule in rules {
        // A path the cage does not have (a missing source left out).
        let Ok(meta) = std::fs::metadata(&rule.path) else {
            continue;
        };
        let Ok(fd) = PathFd::new(&rule.path) else {
            continue;
        };
        let mut access = rule.access.rights();
        if !meta.is_dir() {
            access &= AccessFs::from_file(abi);
        }
        if access.is_empty() {
            continue;
        }
        ruleset = ruleset.add_rule(PathBeneath::new(fd, access))?;
    }
    ruleset.restrict_self()?;
    Ok(())
}
