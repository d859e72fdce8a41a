//! Consent recorded at install and checked at every start (ADDENDUM §16):
//! the consented capabilities and the manifest's SHA-256 are recorded, an
//! installed copy whose manifest asks more is refused until consent is
//! given again, and no grant may reach the store (an installed copy is
//! read-only to its own cage whatever the grants).

use std::path::Path;

use kaged_host_engine::manifest_digest;
use kaged_host_engine::{InstallError, PluginStore};

use super::{manifest, store};

/// The installed copy's manifest, rewritten by `edit` (as a plugin whose
/// grant covered its own copy would have rewritten it).
fn rewrite_installed(store: &PluginStore, name: &str, edit: impl FnOnce(&str) -> String) {
    let file = store.plugin_dir(name).join("kaged-plugin.yaml");
    let text = std::fs::read_to_string(&file).expect("read the installed manifest");
    std::fs::write(&file, edit(&text)).expect("rewrite the installed manifest");
}

fn install(store: &PluginStore, capabilities: &[&str]) -> tempfile::TempDir {
    let src = tempfile::tempdir().expect("tempdir");
    manifest(src.path(), "1.0.0", capabilities);
    store.install(src.path(), |_| true).expect("install");
    src
}

#[test]
fn install_records_the_consented_capabilities_and_the_manifest_digest() {
    let (root, store, _audit) = store();
    let src = install(&store, &["net:api.example.com:443", "kaged:storage:read"]);
    let bytes = std::fs::read(src.path().join("kaged-plugin.yaml")).expect("read");
    let entry = &store.list().expect("list")[0];
    assert_eq!(
        entry.capabilities,
        ["net:api.example.com:443", "kaged:storage:read"]
    );
    assert_eq!(
        entry.manifest_sha256.as_deref(),
        Some(manifest_digest(&bytes).as_str())
    );
    let record = std::fs::read_to_string(root.path().join("config.toml")).expect("config");
    assert!(
        record.contains(&format!(
            "manifest_sha256 = \"{}\"",
            manifest_digest(&bytes)
        )),
        "{record}"
    );
    let check = store.check_consent("oh-my-pi", None).expect("check");
    assert!(!check.refused() && !check.manifest_changed(), "{check:?}");
}

#[test]
fn a_manifest_asking_more_than_was_consented_is_refused_until_consent_is_given_again() {
    let (root, store, _audit) = store();
    install(&store, &["net:[]"]);
    rewrite_installed(&store, "oh-my-pi", |t| {
        t.replace(
            "  - \"net:[]\"\n",
            "  - \"net:[]\"\n  - \"read:fs:/root\"\n  - \"net:*\"\n",
        )
    });
    let check = store.check_consent("oh-my-pi", None).expect("check");
    assert!(check.refused());
    assert_eq!(check.over, ["read:fs:/root", "net:*"]);
    let reconsent = format!(
        "kaged-host-sim plugin consent oh-my-pi --store {}",
        root.path().display()
    );
    assert_eq!(check.reconsent, reconsent);
    let message = check.refusal_message().expect("refused");
    assert!(
        message.contains("read:fs:/root, net:*") && message.ends_with(&reconsent),
        "{message}"
    );

    // Declined: nothing changes.
    let err = store.consent("oh-my-pi", |_| false).expect_err("declined");
    assert!(matches!(err, InstallError::Declined { .. }), "{err}");
    assert!(store
        .check_consent("oh-my-pi", None)
        .expect("check")
        .refused());

    // Asked again, with what is new shown.
    let mut shown = String::new();
    let entry = store
        .consent("oh-my-pi", |plan| {
            shown = format!("{}\n{}", plan.render(), plan.question());
            true
        })
        .expect("consent");
    for line in [
        "  + read:fs:/root    (NEW)",
        "  + net:*    (NEW)",
        "Consent to what oh-my-pi asks?",
    ] {
        assert!(shown.contains(line), "{line} missing from:\n{shown}");
    }
    assert_eq!(entry.capabilities, ["net:[]", "read:fs:/root", "net:*"]);
    let check = store.check_consent("oh-my-pi", None).expect("check");
    assert!(!check.refused() && !check.manifest_changed(), "{check:?}");
}

#[test]
fn a_manifest_asking_less_or_changed_without_a_new_capability_starts() {
    let (_root, store, _audit) = store();
    install(&store, &["net:*", "read:fs:/srv/data"]);
    rewrite_installed(&store, "oh-my-pi", |t| {
        t.replace("\"net:*\"", "\"net:api.example.com:443\"")
            .replace("\"read:fs:/srv/data\"", "\"read:fs:/srv/data/cache\"")
            .replace("Preset catalogue.", "Another description.")
    });
    let check = store.check_consent("oh-my-pi", None).expect("check");
    assert!(!check.refused(), "narrower asks are covered: {check:?}");
    assert!(check.manifest_changed(), "the digest differs: {check:?}");
}

/// Install from a directory whose manifest asks `capability`.
fn install_asking(store: &PluginStore, capability: &str) -> Result<(), InstallError> {
    let src = tempfile::tempdir().expect("tempdir");
    manifest(src.path(), "1.0.0", &[capability]);
    store.install(src.path(), |_| true).map(|_| ())
}

#[test]
fn install_refuses_a_grant_that_reaches_the_store_or_its_own_copy() {
    let (root, store, _audit) = store();
    let real = kaged_host_core::cage::resolved_path(root.path());
    let copy = real.join("plugins/oh-my-pi");
    for (capability, covers) in [
        (format!("write:fs:{}", copy.display()), copy.clone()),
        (
            format!("write:fs:{}", real.parent().expect("parent").display()),
            real.clone(),
        ),
        (
            format!("read:fs:{}", real.join("config.toml").display()),
            real.join("config.toml"),
        ),
    ] {
        let err = install_asking(&store, &capability).expect_err(&capability);
        let InstallError::GrantCoversStore { grant, .. } = &err else {
            panic!("{capability}: {err}");
        };
        assert_eq!((&grant.capability, &grant.covers), (&capability, &covers));
        let text = err.to_string();
        assert!(
            text.contains(&format!("`{capability}`"))
                && text.contains(&covers.display().to_string())
                && text.contains("read-only to its own cage"),
            "{text}"
        );
    }
    assert!(store.list().expect("list").is_empty(), "nothing installed");
    assert!(!Path::new(&copy).exists());

    // `config:/` grants resolve under the config root: one kept in the
    // store may be granted what the store does not own.
    let store = store.with_config_root(Some(real.clone()));
    let err = install_asking(&store, "write:fs:config:/plugins").expect_err("the copies");
    assert!(
        matches!(&err, InstallError::GrantCoversStore { grant, .. } if grant.covers == real.join("plugins")),
        "{err}"
    );
    install_asking(&store, "write:fs:config:/memory").expect("a path the store does not own");
}
