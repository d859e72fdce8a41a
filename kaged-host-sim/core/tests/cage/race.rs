//! Race probes (issue 45; ADDENDUM §16: "a bind source is resolved once,
//! in the host, without following a link out of its declared root, and the
//! cage mounts what was resolved"). The spawner is paused between compile
//! and exec (`cage::race_hook`), where an attacker racing it would act, and
//! the test swaps a granted directory for a symlink to a directory outside
//! the grant (a temporary one standing in for the host's `/`). Bound by
//! path, bwrap followed the link and the plugin read the outside; bound by
//! the descriptor the host opened, the cage gets the directory that was
//! resolved. Nothing outside the test's temporary directory is touched.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use kaged_host_core::cage::race_hook;
use kaged_host_core::CageMode;
use serde_json::json;

use crate::hostile::{caged_here, host_in, probe};

/// A copy of the hostile plugin with `caps`, in `base/plugin`.
pub(crate) fn hostile_with(base: &Path, caps: &[&str]) -> PathBuf {
    let src = crate::support::host::fixture("hostile");
    let dir = base.join("plugin");
    std::fs::create_dir_all(&dir).expect("plugin dir");
    for f in ["plugin.py", "kproto.py"] {
        std::fs::copy(src.join(f), dir.join(f)).expect("copy");
    }
    let manifest = std::fs::read_to_string(src.join("kaged-plugin.yaml")).expect("read");
    let list: Vec<String> = caps.iter().map(|c| format!("\"{c}\"")).collect();
    let manifest = manifest.replace(
        "capabilities: []",
        &format!("capabilities: [{}]", list.join(", ")),
    );
    std::fs::write(dir.join("kaged-plugin.yaml"), manifest).expect("write");
    dir
}

/// A temporary directory (removed on drop) and its canonical path.
pub(crate) fn temp_base() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = std::fs::canonicalize(tmp.path()).expect("canonical");
    (tmp, base)
}

#[tokio::test]
async fn a_grant_swapped_for_a_symlink_before_bwrap_binds_what_was_resolved() {
    if !caged_here().await {
        return;
    }
    let (_tmp, base) = temp_base();
    let root = base.join("config-root");
    let data = root.join("shared/data");
    let moved = root.join("shared/data-moved");
    let outside = base.join("outside");
    std::fs::create_dir_all(&data).expect("data");
    std::fs::create_dir_all(&outside).expect("outside");
    std::fs::write(data.join("marker"), "inside").expect("marker");
    std::fs::write(outside.join("marker"), "OUTSIDE").expect("marker");
    let dir = hostile_with(&base, &["write:fs:config:/shared/data"]);
    let (d, m, o) = (data.clone(), moved.clone(), outside.clone());
    let swapped = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let seen = swapped.clone();
    let _hook = race_hook::before_bwrap(
        &dir,
        Arc::new(move |_| {
            // The attacker's move: the granted directory away, a link to
            // the outside in its place.
            std::fs::rename(&d, &m).expect("rename");
            std::os::unix::fs::symlink(&o, &d).expect("symlink");
            seen.store(true, std::sync::atomic::Ordering::SeqCst);
        }),
    );
    let s = host_in(CageMode::Require, Some(root.clone()))
        .launch(&dir)
        .await
        .expect("launch caged");
    assert!(
        swapped.load(std::sync::atomic::Ordering::SeqCst),
        "the hook ran"
    );
    let r = probe(
        &s,
        json!({"name": "read", "path": data.join("marker").display().to_string()}),
    )
    .await;
    assert_eq!(
        r["text"], "inside",
        "the cage followed the swapped link: {r}"
    );
    // What the plugin writes lands in the directory that was resolved.
    let made = data.join("made");
    let r = probe(
        &s,
        json!({"name": "create", "paths": [made.display().to_string()]}),
    )
    .await;
    assert_eq!(r["ok"], true, "{r}");
    s.shutdown().await;
    assert_eq!(
        std::fs::read_dir(&outside).expect("outside").count(),
        1,
        "only the marker is outside"
    );
}

#[tokio::test]
async fn a_grant_swapped_before_its_source_is_opened_does_not_start() {
    if !caged_here().await {
        return;
    }
    // The same swap, made before the spawner opens the sources: the open
    // refuses the link, and the plugin does not start.
    let (_tmp, base) = temp_base();
    let data = base.join("data");
    let outside = base.join("outside");
    std::fs::create_dir_all(&data).expect("data");
    std::fs::create_dir_all(&outside).expect("outside");
    let dir = hostile_with(&base, &[&format!("read:fs:{}", data.display())]);
    let manifest = kaged_plugin_protocol::manifest::Manifest::load_dir(&dir).expect("manifest");
    let (inputs, _) =
        kaged_host_core::cage_inputs_for_dir(&manifest, &dir, "info").expect("inputs");
    let policy = kaged_host_core::cage::compile(&manifest, &inputs).expect("compile");
    std::fs::rename(&data, base.join("data-moved")).expect("rename");
    std::os::unix::fs::symlink(&outside, &data).expect("symlink");
    let e = kaged_host_core::cage::OpenedBinds::open(&policy).expect_err("refused");
    let text = e.to_string();
    assert!(
        text.contains("changed after the cage was compiled"),
        "{text}"
    );
    assert!(text.contains(&data.display().to_string()), "{text}");
}

/// ADDENDUM §16: "writable binds are `nosuid,nodev`" (bwrap mounts every
/// bind so; checked from inside, where the plugin sees its mount table).
#[tokio::test]
async fn every_bind_is_nosuid_and_nodev() {
    if !caged_here().await {
        return;
    }
    let (_tmp, base) = temp_base();
    let out = base.join("out");
    std::fs::create_dir_all(&out).expect("out");
    let dir = hostile_with(&base, &[&format!("write:fs:{}", out.display())]);
    let s = host_in(CageMode::Require, None)
        .launch(&dir)
        .await
        .expect("launch caged");
    let r = probe(&s, json!({"name": "mounts"})).await;
    let mounts = r["mounts"].as_array().expect("mounts").clone();
    s.shutdown().await;
    let of = |at: &Path| {
        mounts
            .iter()
            .find(|m| m["at"] == at.display().to_string())
            .map(|m| m["options"].as_str().unwrap_or_default().to_string())
    };
    for (at, rw) in [
        (out.as_path(), true),
        (dir.as_path(), false),
        (Path::new("/usr"), false),
    ] {
        let options =
            of(at).unwrap_or_else(|| panic!("{} is not mounted: {mounts:?}", at.display()));
        let options: Vec<&str> = options.split(',').collect();
        assert!(
            options.contains(&"nosuid") && options.contains(&"nodev"),
            "{}: {options:?}",
            at.display()
        );
        assert_eq!(options.contains(&"rw"), rw, "{}: {options:?}", at.display());
    }
}

/// Issue 45: "setuid files owned by the host's root". The plugin is uid 0
/// of a namespace mapped to the host's uid, so on a root host a file it
/// made setuid in its grant was `-rwsr-xr-x root` on the host. The seccomp
/// profile refuses the set-id bits on every call that sets a mode from a
/// register, and `openat2` (whose mode is in memory) answers `ENOSYS`.
#[tokio::test]
async fn no_set_id_file_can_be_made_in_a_grant() {
    if !caged_here().await {
        return;
    }
    let (_tmp, base) = temp_base();
    let out = base.join("out");
    std::fs::create_dir_all(&out).expect("out");
    {
        use std::os::unix::fs::PermissionsExt;
        // Writable by whatever uid the plugin has.
        std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    }
    let dir = hostile_with(&base, &[&format!("write:fs:{}", out.display())]);
    let s = host_in(CageMode::Require, None)
        .launch(&dir)
        .await
        .expect("launch caged");
    let r = probe(
        &s,
        json!({"name": "set_id", "dir": out.display().to_string()}),
    )
    .await;
    s.shutdown().await;
    for way in ["chmod", "chmod_setgid", "fchmod", "open_creat", "mknod"] {
        assert_eq!(r[way]["errno"], "EPERM", "{way}: {r}");
    }
    assert_eq!(r["openat2"]["errno"], "ENOSYS", "{r}");
    for (name, mode) in r["modes"].as_object().expect("modes") {
        let mode = u32::from_str_radix(mode.as_str().unwrap_or("0").trim_start_matches("0o"), 8)
            .expect("octal");
        assert_eq!(mode & 0o6000, 0, "{name}: {r}");
    }
    assert_eq!(
        std::fs::read_dir(&out).expect("out").count(),
        0,
        "cleaned up"
    );
}
