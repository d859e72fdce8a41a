//! The compiled argv run by the real bwrap, with the default seccomp
//! program on `--seccomp FD`. Without a working bwrap these tests fail
//! under `CI=true` and otherwise skip, saying why on stderr.

use std::ffi::OsString;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::{Command, Output};

use kaged_host_core::cage::landlock_fs::{FsAccess, FsRule};
use kaged_host_core::cage::landlock_rules;
use kaged_host_core::cage::{
    compile, init, seccomp, BindSource, CageFds, CageInputs, CagePolicy, LandlockSupport, Mode,
    Mount, OpenedBinds, BWRAP,
};

use crate::model::manifest;

/// Whether bwrap can make a sandbox here; `false` (after saying why) when
/// it cannot and this is not CI; a panic when it cannot under `CI=true`.
fn bwrap_works() -> bool {
    let probe = Command::new(BWRAP)
        .args([
            "--unshare-all",
            "--die-with-parent",
            "--ro-bind",
            "/",
            "/",
            "/bin/sh",
            "-c",
            "true",
        ])
        .output();
    let why = match probe {
        Ok(o) if o.status.success() => return true,
        Ok(o) => format!(
            "bwrap cannot make a sandbox here: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Err(e) => format!("bwrap is not installed ({e}); apt-get install bubblewrap"),
    };
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("CI=true and {why}");
    }
    eprintln!("SKIPPED (not CI): {why}");
    false
}

struct Plugin {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

impl Plugin {
    fn new() -> Plugin {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(tmp.path()).expect("canonical");
        std::fs::create_dir_all(root.join("plugin")).expect("mkdir");
        std::fs::create_dir_all(root.join("out")).expect("mkdir");
        Plugin { _tmp: tmp, root }
    }

    fn dir(&self) -> PathBuf {
        self.root.join("plugin")
    }

    fn policy(&self, caps: &[&str]) -> CagePolicy {
        let mut env = crate::model::env();
        let dir = self.dir().display().to_string();
        env.insert("HOME".into(), dir.clone());
        env.insert("KAGED_PLUGIN_DIR".into(), dir);
        compile(&manifest(caps), &CageInputs::new(self.dir(), env)).expect("compile")
    }
}

/// Run `cmd` in the cage of `policy` with the default seccomp program.
fn run(policy: &CagePolicy, cmd: &[&str]) -> Output {
    let program = seccomp::default_program().expect("seccomp program");
    let fd = seccomp::program_fd(&program).expect("pipe");
    // Inheritable for this spawn (the phase-2 spawner does this in the child).
    rustix::io::fcntl_setfd(&fd, rustix::io::FdFlags::empty()).expect("fcntl");
    let command: Vec<OsString> = cmd.iter().map(OsString::from).collect();
    // The bind sources, opened as the spawner opens them, inheritable here.
    let sources = OpenedBinds::open(policy).expect("open the bind sources");
    let descriptors = sources.descriptors();
    for d in descriptors.iter().flatten() {
        rustix::io::fcntl_setfd(d, rustix::io::FdFlags::empty()).expect("fcntl");
    }
    let argv = policy.bwrap_argv(
        &command,
        &CageFds {
            info: None,
            seccomp: fd.as_raw_fd(),
            binds: descriptors
                .iter()
                .map(|d| d.map(|d| BindSource::Fd(d.as_raw_fd())))
                .collect(),
        },
    );
    let out = Command::new(BWRAP).args(&argv).output().expect("run bwrap");
    drop(fd);
    drop(sources);
    out
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn seccomp_denies_unshare_with_eperm_and_allows_the_rest() {
    if !bwrap_works() {
        return;
    }
    let plugin = Plugin::new();
    let policy = plugin.policy(&[]);
    let ok = run(&policy, &["/usr/bin/true"]);
    assert!(
        ok.status.success(),
        "true failed in the cage: {}",
        stderr(&ok)
    );
    // bwrap unshares before it loads the filter; the plugin may not.
    let denied = run(&policy, &["/usr/bin/unshare", "-U", "/usr/bin/true"]);
    assert!(!denied.status.success());
    assert!(
        stderr(&denied).contains("Operation not permitted"),
        "expected EPERM from unshare: {}",
        stderr(&denied)
    );
}

#[test]
fn the_cage_hides_etc_and_keeps_home_read_only_and_grants_writable() {
    if !bwrap_works() {
        return;
    }
    let p = Plugin::new();
    let out = p.root.join("out");
    let policy = p.policy(&[&format!("write:fs:{}", out.display())]);
    let sh = |script: &str| run(&policy, &["/bin/sh", "-c", script]);
    let o = sh("cat /etc/passwd");
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("No such file or directory"),
        "{}",
        stderr(&o)
    );
    let o = sh("touch \"$HOME/x\"");
    assert!(
        stderr(&o).contains("Read-only file system"),
        "{}",
        stderr(&o)
    );
    let o = sh(&format!("echo hi > {}/made && pwd", out.display()));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        p.dir().display().to_string()
    );
    assert_eq!(std::fs::read_to_string(out.join("made")).unwrap(), "hi\n");
    let o = sh("touch /tmp/scratch && echo $KAGED_PLUGIN_NAME");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "demo");
}

/// `policy` with this test binary bound as the cage's init.
fn with_init(mut policy: CagePolicy) -> CagePolicy {
    let exe = std::fs::canonicalize(std::env::current_exe().expect("exe")).expect("canonical");
    policy.mounts.push(Mount::Bind {
        source: exe,
        dest: PathBuf::from(init::INIT_DEST),
        mode: Mode::Ro,
        missing: false,
        because: vec![init::BECAUSE_INIT.to_string()],
    });
    policy
}

/// Run `script` in `policy`'s cage through the init with `rules`.
fn through_init(policy: &CagePolicy, rules: &[FsRule], script: &str) -> Output {
    let command: Vec<OsString> = ["/bin/sh", "-c", script]
        .iter()
        .map(OsString::from)
        .collect();
    let argv: Vec<String> = init::wrap(rules, &command)
        .into_iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    run(policy, &argv)
}

#[test]
fn the_init_enters_the_landlock_rules_before_the_command_whatever_the_mounts() {
    if !bwrap_works() || !LandlockSupport::detect().fs {
        return;
    }
    let p = Plugin::new();
    let out = p.root.join("out");
    let policy = p.policy(&[&format!("write:fs:{}", out.display())]);
    // The rules of the cage as compiled (the init's own bind comes after).
    let rules = landlock_rules::fs_rules(&policy.mounts);
    assert_eq!(rules, policy.landlock.fs);
    let policy = with_init(policy);
    // With the cage's own rules: the grant and /tmp are writable.
    let script = format!(
        "touch /tmp/a && echo hi > {}/a && cat {}/a",
        out.display(),
        out.display()
    );
    let o = through_init(&policy, &rules, &script);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "hi");
    // Rules that make the grant read-only and leave /tmp out: the mounts
    // are the same (read-write), Landlock refuses.
    let narrowed: Vec<FsRule> = rules
        .iter()
        .filter(|r| r.path.as_os_str() != "/tmp")
        .map(|r| FsRule {
            access: if r.path == out {
                FsAccess::Read
            } else {
                r.access
            },
            path: r.path.clone(),
        })
        .collect();
    for script in [
        "touch /tmp/b".to_string(),
        format!("echo hi > {}/b", out.display()),
        format!("rm {}/a", out.display()),
    ] {
        let o = through_init(&policy, &narrowed, &script);
        assert!(!o.status.success(), "{script} got through");
        assert!(
            stderr(&o).contains("Permission denied"),
            "{script}: {}",
            stderr(&o)
        );
    }
    assert!(out.join("a").exists() && !out.join("b").exists());
    // Reading stays possible where a rule allows it; the init's own file,
    // not among the rules, is refused though mounted.
    let o = through_init(&policy, &narrowed, &format!("cat {}/a", out.display()));
    assert!(o.status.success(), "{}", stderr(&o));
    let o = through_init(&policy, &narrowed, &format!("head -c1 {}", init::INIT_DEST));
    assert!(stderr(&o).contains("Permission denied"), "{}", stderr(&o));
    // A bad rule list is one line and exit 127, before any command runs.
    let o = run(
        &policy,
        &[init::INIT_DEST, init::INIT_ARG, "{", "--", "/bin/true"],
    );
    assert_eq!(o.status.code(), Some(127), "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with("kaged cage init: the rules do not parse"),
        "{}",
        stderr(&o)
    );
}
