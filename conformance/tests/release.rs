//! Prebuilt binaries: `.github/workflows/release.yml` (on every tag `v*`,
//! `scripts/release-archive.sh` packs the tools and the release gets them)
//! and each tool crate's `[package.metadata.binstall]` agree, so that
//! `cargo binstall kaged-conformance` finds the archive and the binary in
//! it. The workflow is checked as the action is (its structure, every
//! script it runs exists), and the packing script runs here on the test
//! build's binaries: each archive is where binstall's `pkg-url` says and
//! holds the binary where its `bin-dir` says. The repository URL is the
//! workspace's one setting (`{ repo }` in every template).

mod support;

use kaged_test_support::command::assert_success;
use serde_json::Value;

/// The crates whose binaries a release carries: (package, binary).
const TOOLS: [(&str, &str); 3] = [
    ("kaged-conformance", "kaged-conformance"),
    ("kaged-host-sim", "kaged-host-sim"),
    ("cargo-kaged", "cargo-kaged"),
];
/// The target the workflow builds (and this machine is).
const TARGET: &str = "x86_64-unknown-linux-gnu";

fn toml_of(rel: &str) -> toml::Value {
    let text = std::fs::read_to_string(support::workspace().join(rel)).expect("read");
    toml::Value::Table(toml::from_str(&text).unwrap_or_else(|e| panic!("{rel}: {e}")))
}

/// binstall's template with the values it would substitute.
fn expand(template: &str, name: &str, bin: &str, version: &str, repo: &str) -> String {
    template
        .replace("{ repo }", repo)
        .replace("{ version }", version)
        .replace("{ name }", name)
        .replace("{ target }", TARGET)
        .replace("{ bin }", bin)
        .replace("{ binary-ext }", "")
}

fn manifest_dir(package: &str) -> &'static str {
    match package {
        "kaged-conformance" => "conformance",
        "kaged-host-sim" => "kaged-host-sim",
        _ => "conformance/cargo-kaged",
    }
}

#[test]
fn the_release_workflow_runs_the_packing_script_on_tags() {
    let text = std::fs::read_to_string(support::workspace().join(".github/workflows/release.yml"))
        .expect("release.yml");
    let w: Value = serde_saphyr::from_str(&text).expect("YAML");
    assert_eq!(w["on"]["push"]["tags"], serde_json::json!(["v*"]), "{w}");
    assert_eq!(w["permissions"]["contents"], "write", "attaching needs it");
    let job = &w["jobs"]["binaries"];
    assert_eq!(
        job["strategy"]["matrix"]["target"],
        serde_json::json!([TARGET])
    );
    let steps = job["steps"].as_array().expect("steps");
    let runs: Vec<&str> = steps.iter().filter_map(|s| s["run"].as_str()).collect();
    assert!(
        runs.iter()
            .any(|r| r.trim() == "scripts/release-archive.sh ${{ matrix.target }}"),
        "{runs:?}"
    );
    for r in runs {
        let script = r.split_whitespace().next().expect("a command");
        assert!(
            support::workspace().join(script).is_file(),
            "{script} exists"
        );
    }
    let attach = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("softprops/action-gh-release@"))
        })
        .expect("the release step");
    assert_eq!(attach["with"]["files"], "dist/*.tar.gz");
}

#[test]
fn binstall_finds_each_packed_archive_and_the_binary_in_it() {
    let root = toml_of("Cargo.toml");
    let repo = root["workspace"]["package"]["repository"]
        .as_str()
        .expect("the workspace's repository");
    let version = root["workspace"]["package"]["version"]
        .as_str()
        .expect("the workspace's version");
    let mut bins = Vec::new();
    for (_, bin) in TOOLS {
        match support::kit_binary(bin) {
            Some(path) => bins.push(path),
            None => return,
        }
    }
    let bin_dir = bins[0].parent().expect("bin dir").to_path_buf();
    let dist = tempfile::tempdir().expect("tempdir");
    let out = std::process::Command::new(support::workspace().join("scripts/release-archive.sh"))
        .args([TARGET, &bin_dir.display().to_string()])
        .env("DIST", dist.path())
        .env("GZIP_LEVEL", "1")
        .current_dir(support::workspace())
        .output()
        .expect("runs");
    assert_success("scripts/release-archive.sh", &out);
    for (package, bin) in TOOLS {
        let manifest = toml_of(&format!("{}/Cargo.toml", manifest_dir(package)));
        let package_table = &manifest["package"];
        assert!(
            package_table["repository"]
                .get("workspace")
                .and_then(toml::Value::as_bool)
                == Some(true),
            "{package}: the repository is the workspace's one setting"
        );
        let meta = &package_table["metadata"]["binstall"];
        assert_eq!(meta["pkg-fmt"].as_str(), Some("tgz"), "{package}");
        let template = |key: &str| {
            let t = meta[key]
                .as_str()
                .unwrap_or_else(|| panic!("{package}: {key}"));
            expand(t, package, bin, version, repo)
        };
        let url = template("pkg-url");
        let prefix = format!("{repo}/releases/download/v{version}/");
        let file = url
            .strip_prefix(&prefix)
            .unwrap_or_else(|| panic!("{package}: {url} is not a release asset of {repo}"));
        let archive = dist.path().join(file);
        assert!(archive.is_file(), "{package}: {file} packed");
        let listing = std::process::Command::new("tar")
            .arg("-tzf")
            .arg(&archive)
            .output()
            .expect("tar");
        assert_success("tar -tzf", &listing);
        let listing = String::from_utf8_lossy(&listing.stdout);
        let inside = template("bin-dir");
        for want in [inside.as_str(), &format!("{package}-{TARGET}/LICENSE-MIT")] {
            assert!(
                listing.lines().any(|l| l == want),
                "{package}: {want} in\n{listing}"
            );
        }
    }
}

/// Every Markdown, YAML and TOML file of the kit (not under `target/`,
/// `.git`, `node_modules` or a test's fixtures), relative to the
/// workspace.
fn text_files() -> Vec<(String, String)> {
    fn walk(dir: &std::path::Path, root: &std::path::Path, out: &mut Vec<(String, String)>) {
        let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if !["target", ".git", "node_modules", "fixtures"].contains(&name.as_str()) {
                    walk(&path, root, out);
                }
            } else if [".md", ".yml", ".yaml", ".toml"]
                .iter()
                .any(|ext| name.ends_with(ext))
            {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                let rel = path.strip_prefix(root).unwrap_or(&path);
                out.push((rel.display().to_string(), text));
            }
        }
    }
    let root = support::workspace();
    let mut out = Vec::new();
    walk(&root, &root, &mut out);
    out
}

/// The kit's home is one setting: the workspace's `repository`. Every
/// URL of the kit's repository in a doc, workflow or manifest is it (or
/// under it), every `uses:` of the conformance action is the reference
/// `kaged_conformance::home` derives from it, and no placeholder of an
/// earlier home is left.
#[test]
fn the_kits_home_is_one_setting_every_file_uses() {
    use kaged_conformance::home;
    let root = toml_of("Cargo.toml");
    let repo = root["workspace"]["package"]["repository"]
        .as_str()
        .expect("the workspace's repository");
    assert_eq!(
        repo,
        home::REPOSITORY,
        "home.rs reads the workspace's setting"
    );
    assert!(
        repo.starts_with("https://github.com/") && repo.split('/').count() == 5,
        "the release workflow and binstall's URLs need a GitHub repository: {repo}"
    );
    let url = regex::Regex::new(r"https?://[A-Za-z0-9._/-]*kaged-plugin-kit[A-Za-z0-9._/-]*")
        .expect("regex");
    let uses =
        regex::Regex::new(r"uses:\s*([^\s`]*(?:conformance/action|conformance-action)[^\s`]*)")
            .expect("regex");
    let files = text_files();
    assert!(
        files.iter().any(|(f, _)| f == "docs/conformance.md"),
        "walked the docs"
    );
    let mut seen = (0, 0);
    for (file, text) in &files {
        assert!(
            !text.contains("example.invalid/kaged"),
            "{file}: a placeholder home"
        );
        for m in url.find_iter(text) {
            seen.0 += 1;
            assert!(
                m.as_str().starts_with(repo),
                "{file}: {} is not under {repo}",
                m.as_str()
            );
        }
        for c in uses.captures_iter(text) {
            seen.1 += 1;
            assert_eq!(c[1], home::action_ref(), "{file}: the action's reference");
        }
    }
    assert!(
        seen.0 >= 5 && seen.1 >= 2,
        "found the kit's URLs and the action's uses: {seen:?}"
    );
    // `init` writes the same reference, when the kit's home is real; the
    // same steps inline while it is the placeholder (issue 48).
    let plan = kaged_conformance::init::CiPlan {
        runtime: kaged_conformance::init::Runtime::Python,
        runtime_version: None,
        policy: None,
        uncaged_allowed: false,
    };
    let workflow = kaged_conformance::init::workflow(&plan);
    assert_eq!(
        workflow.contains(&format!("uses: {}", home::action_ref())),
        home::is_real(),
        "{workflow}"
    );
    // And the docs' install-from-source lines are the ones home.rs makes.
    let docs = std::fs::read_to_string(support::workspace().join("docs/conformance.md"))
        .expect("docs/conformance.md");
    assert!(
        docs.contains(&home::cargo_install_git("cargo-kaged")),
        "docs/conformance.md"
    );
}
