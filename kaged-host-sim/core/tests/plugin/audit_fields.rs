//! Fields the ADDENDUM puts on audit records beyond the event's own:
//! `"cage": "off"` on every record of a plugin run with `--cage off` (§15).

use crate::support::host::{fixture, host, EASY};
use kaged_host_core::{CageMode, HostSim};

#[tokio::test]
async fn cage_off_is_on_every_audit_record_of_the_plugin() {
    let (host, audit, _t) = host(EASY);
    let host = HostSim::new(host.config().clone().with_cage(CageMode::Off));
    let s = host.launch(&fixture("good")).await.expect("launch");
    assert!(!s.caged());
    s.call("notify.emit", None, None).await.expect("call");
    s.call("storage.try", None, None).await.expect("call");
    assert!(s.shutdown().await.is_clean());
    let events = audit.events();
    let names: Vec<&str> = events.iter().map(|r| r.event.as_str()).collect();
    // A record from the handshake, a call's notification, a denial and
    // the stop: each says how the plugin ran.
    for name in [
        "plugin.spawned",
        "plugin.initialized",
        "plugin.notification",
        "plugin.storage_denied",
        "plugin.stopped",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    for r in &events {
        assert_eq!(
            r.data.get("cage"),
            Some(&"off".into()),
            "{}: {:?}",
            r.event.as_str(),
            r.data
        );
    }
}

#[tokio::test]
async fn a_host_that_cages_adds_no_cage_field_but_to_plugin_spawned() {
    let (host, audit, _t) = host(EASY);
    let s = host.launch(&fixture("good")).await.expect("launch");
    assert!(s.shutdown().await.is_clean());
    for r in audit.events() {
        if r.event.as_str() != "plugin.spawned" {
            assert!(
                r.data.get("cage").is_none(),
                "{}: {:?}",
                r.event.as_str(),
                r.data
            );
        }
    }
}
