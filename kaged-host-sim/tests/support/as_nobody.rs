//! Run one test of this binary again as an ordinary user (issue 45 item
//! 10: every hostile probe "as root and as an ordinary user"): when the
//! tests run as root, [`rerun`] runs the named test alone under `setpriv`
//! as `nobody`, with a home and a fixture directory of its own that
//! `nobody` owns (removed after), and fails when that run fails or does not
//! run the test. As an ordinary user already, the test itself is that run.
#![allow(dead_code)]

use std::process::Command;

/// Where the rerun's fixtures are staged ([`super::host::plugins_root`]).
pub const FIXTURES_BASE_ENV: &str = "KAGED_TEST_FIXTURES_BASE";

/// `nobody`'s uid and gid.
const NOBODY: u32 = 65534;

/// Run `test` (a test of this binary, `module::name`) as `nobody`;
/// `false` when this process is not root (nothing to do).
pub fn rerun(test: &str) -> bool {
    if !rustix::process::geteuid().is_root() {
        return false;
    }
    let home = tempfile::tempdir().expect("tempdir");
    let fixtures = home.path().join("fixtures");
    std::fs::create_dir(&fixtures).expect("fixtures dir");
    for dir in [home.path(), fixtures.as_path()] {
        std::os::unix::fs::chown(dir, Some(NOBODY), Some(NOBODY)).expect("chown to nobody");
    }
    let exe = std::env::current_exe().expect("this test binary");
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(exe)
        .args(["--exact", test, "--test-threads", "1", "--nocapture"])
        .env(FIXTURES_BASE_ENV, &fixtures)
        .env("HOME", home.path())
        .env("TMPDIR", home.path())
        .output()
        .expect("run setpriv (util-linux)");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{test} as nobody:\n{text}");
    assert!(
        text.contains("1 passed") && !text.contains("SKIPPED") && !text.contains("skipped:"),
        "{test} as nobody did not run:\n{text}"
    );
    true
}
