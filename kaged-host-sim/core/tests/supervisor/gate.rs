//! The start gate (ADDENDUM §16, "Consent is checked at every start"): run
//! before the first start and before every restart; a refusal spawns
//! nothing, audits its record then `plugin.disabled`, and leaves the plugin
//! `disabled` until enabled, when the gate runs again.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use kaged_host_core::{AuditEvent, PluginState, StartGate, StartRefusal};
use serde_json::json;

use crate::helpers::{lifecycle, names, pid, supervise, wait_restarted, wait_state};
use crate::support::host::{assert_group_gone, fixture, one};

/// Refuses while `refuse` is set; counts nothing else.
#[derive(Debug, Default)]
struct Switch {
    refuse: AtomicBool,
}

impl StartGate for Switch {
    fn check(&self, dir: &Path) -> Result<(), Box<StartRefusal>> {
        if !self.refuse.load(Ordering::SeqCst) {
            return Ok(());
        }
        Err(Box::new(StartRefusal {
            reason: "capability_overreach".into(),
            capabilities: vec!["net:*".into()],
            remedy: Some("consent again".into()),
            message: format!("{} asks net:* beyond its consent", dir.display()),
            event: Some(AuditEvent::CapabilityOverreach),
            data: json!({"reason": "not_consented", "excess": ["net:*"]}),
        }))
    }
}

#[tokio::test]
async fn a_refused_restart_spawns_nothing_and_enable_asks_the_gate_again() {
    let (sup, audit) = supervise(&fixture("good"), 0.1);
    let gate = Arc::new(Switch::default());
    sup.set_start_gate(gate.clone());
    sup.start().await.expect("start");
    wait_state(&sup, PluginState::Running).await;
    assert_eq!(sup.refusal(), None);
    let first = pid(&sup).expect("pid");

    // The plugin exits (as one that rewrote its manifest would); its
    // restart meets the gate.
    gate.refuse.store(true, Ordering::SeqCst);
    let kill = rustix::process::Pid::from_raw(first as i32).expect("a pid");
    rustix::process::kill_process(kill, rustix::process::Signal::KILL).expect("SIGKILL");
    wait_state(&sup, PluginState::Disabled).await;
    assert_group_gone(first);
    assert_eq!(
        sup.spawn_attempts(),
        1,
        "the refused restart spawned nothing"
    );
    let refusal = sup.refusal().expect("the refusal stands");
    assert_eq!(refusal.capabilities, ["net:*"]);
    let ev = lifecycle(&audit);
    assert_eq!(
        names(&ev)[names(&ev).len() - 3..],
        [
            "plugin.crashed",
            "plugin.capability_overreach",
            "plugin.disabled"
        ]
    );
    let over = one(&audit, "plugin.capability_overreach");
    assert_eq!(over.get("excess"), &json!(["net:*"]));
    let disabled = one(&audit, "plugin.disabled");
    assert_eq!(disabled.get("reason"), "capability_overreach");
    assert!(
        disabled
            .get("detail")
            .as_str()
            .is_some_and(|d| d.contains("beyond its consent")),
        "{disabled:?}"
    );

    // Enabled while still refused: refused again, nothing spawned.
    sup.enable().await.expect("enable");
    wait_state(&sup, PluginState::Disabled).await;
    assert_eq!(sup.spawn_attempts(), 1);
    // Consent given: the next enable starts it, and the refusal is gone.
    gate.refuse.store(false, Ordering::SeqCst);
    sup.enable().await.expect("enable");
    let second = wait_restarted(&sup, first).await;
    assert_eq!(sup.refusal(), None);
    assert_eq!(sup.spawn_attempts(), 2);
    sup.stop().await;
    assert_group_gone(second);
}
