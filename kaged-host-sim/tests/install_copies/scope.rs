//! `local = false` (plugin-host.md § Project-load-driven install, step 6;
//! ADDENDUM §16): a plugin a project's load installed activates only for
//! the declaring project. The daemon's plugin list (`discover`, what `up`
//! starts) leaves it out without a project and under any other project.

use kaged_host_core::AuditLog;
use kaged_host_engine::{InstallError, PluginStore};
use kaged_host_sim::daemon::{discover, PluginSource};

use crate::support::host::shell_adapter_as;

/// A copy of the shell adapter named `name`.
fn adapter(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    shell_adapter_as(dir.path(), name);
    dir
}

#[test]
fn a_project_driven_install_activates_only_for_its_project() {
    let root = tempfile::tempdir().expect("store");
    let store = PluginStore::open(root.path(), AuditLog::memory()).expect("store");
    let (manual, driven) = (adapter("manual-one"), adapter("driven-one"));
    store
        .install(manual.path(), |_| true)
        .expect("manual install");
    store.set_enabled("manual-one", true).expect("enable");
    let entry = store
        .install_for_project(driven.path(), "/projects/a", Some("^0.1"), |_| true)
        .expect("project install");
    assert!(!entry.local && entry.enabled, "{entry:?}");
    assert_eq!(entry.projects, ["/projects/a"]);

    let names = |project: Option<&str>| -> Vec<String> {
        discover(&PluginSource::Store(root.path().into()), project)
            .expect("discover")
            .iter()
            .filter_map(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect()
    };
    assert_eq!(names(None), ["manual-one"]);
    assert_eq!(names(Some("/projects/b")), ["manual-one"]);
    assert_eq!(names(Some("/projects/a")), ["driven-one", "manual-one"]);

    // A second project's load adds itself; a manual install makes it local.
    let v2 = adapter("driven-one");
    let manifest = v2.path().join("kaged-plugin.yaml");
    let text = std::fs::read_to_string(&manifest).expect("read");
    std::fs::write(&manifest, text.replace("version: 0.1.0", "version: 0.2.0")).expect("write");
    let entry = store
        .install_for_project(v2.path(), "/projects/b", None, |_| true)
        .expect("upgrade for b");
    assert_eq!(entry.projects, ["/projects/a", "/projects/b"]);
    assert_eq!(names(Some("/projects/b")), ["driven-one", "manual-one"]);
}

#[test]
fn a_version_the_project_does_not_accept_is_refused_before_consent_or_copy() {
    let root = tempfile::tempdir().expect("store");
    let store = PluginStore::open(root.path(), AuditLog::memory()).expect("store");
    let src = adapter("picky");
    let mut asked = false;
    let err = store
        .install_for_project(src.path(), "/projects/a", Some(">=1.0"), |_| {
            asked = true;
            true
        })
        .expect_err("refused");
    assert!(matches!(err, InstallError::VersionUnmet { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "picky 0.1.0 does not meet the project's requirement `>=1.0`; nothing was installed"
    );
    assert!(
        !asked,
        "consent is not asked for a version the project refuses"
    );
    assert!(store.list().expect("list").is_empty());
    assert!(!store.plugin_dir("picky").exists());
}
