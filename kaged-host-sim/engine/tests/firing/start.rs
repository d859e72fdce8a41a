//! `on_session_start` and `on_session_idle` through [`AgentHost`], with
//! real plugin processes (`tests/fixtures/plugins/hooks-*`,
//! `tests/fixtures/projects/firing-start.yaml`).

use crate::support::firing;
use std::collections::HashSet;

use crate::support::firing::{
    finish, hook_budget_secs, of, plugin_dirs, sent, start, trail, PROJECT_ID,
};
use kaged_host_core::{AuditEvent, LaunchError};
use kaged_host_engine::{AgentHost, AgentHostError};
use kaged_plugin_protocol::{Message, MessageRole};
use serde_json::json;

const RESEARCHER: &str = "primary.subagents.researcher";

fn wrapped(name: &str, text: &str) -> String {
    format!("<plugin:{name}>\n{text}\n</plugin:{name}>")
}

#[tokio::test]
async fn session_start_fires_in_declaration_order_and_wraps_injects() {
    let (agents, audit, transcript) = start("firing-start.yaml").await;
    let s = agents
        .start_session("primary", "ses_1")
        .await
        .expect("start");
    // Declaration order (observer before greeter, not alphabetical), every
    // non-empty inject wrapped; the slow, erroring and malformed plugins
    // contribute nothing.
    let observer = wrapped("hooks-observer", "observer ready (tag=primary)");
    let greeter = wrapped("hooks-greeter", "greetings from greeter");
    assert_eq!(
        s.injects,
        [
            ("hooks-observer".to_string(), observer.clone()),
            ("hooks-greeter".to_string(), greeter.clone())
        ]
    );
    assert_eq!(s.system_prompt_prefix, format!("{observer}\n{greeter}"));
    let fired: Vec<String> = of(&s.audit, AuditEvent::HookFired)
        .iter()
        .map(|r| r.plugin.clone())
        .collect();
    assert_eq!(
        fired,
        [
            "hooks-observer",
            "hooks-slow",
            "hooks-greeter",
            "hooks-error",
            "hooks-malformed"
        ]
    );
    // Timeout → logged, treated as null, the next plugins still fire.
    let timeout = of(&s.audit, AuditEvent::HookTimeout);
    assert_eq!(timeout.len(), 1);
    assert_eq!(timeout[0].plugin, "hooks-slow");
    assert_eq!(timeout[0].get("hook"), "on_session_start");
    assert_eq!(timeout[0].get("agent_path"), "primary");
    // The effective budget: hook_timeout_sec 1 × 0.2.
    let budget = hook_budget_secs(&agents, "hooks-slow");
    assert_eq!(budget, 0.2);
    assert_eq!(timeout[0].get("timeout_sec"), budget);
    // Error → plugin.hook.failed, null; a malformed answer likewise.
    let failed = of(&s.audit, AuditEvent::HookFailed);
    assert_eq!(failed.len(), 2, "{:?}", audit.names());
    assert_eq!(failed[0].plugin, "hooks-error");
    assert_eq!(failed[0].get("error_code"), -32000);
    assert_eq!(failed[0].get("error_message"), "hook exploded");
    assert_eq!(failed[1].plugin, "hooks-malformed");
    assert_eq!(failed[1].get("malformed_answer"), true);
    let returned = trail(&s.audit, &[AuditEvent::HookReturned]);
    assert_eq!(
        returned.iter().map(|r| r.1.as_str()).collect::<Vec<_>>(),
        ["hooks-observer", "hooks-greeter", "hooks-malformed"]
    );
    // The session continues: a second start still works, the timed-out
    // plugin included (its hook lock was released).
    let again = agents
        .start_session("primary", "ses_2")
        .await
        .expect("start");
    assert_eq!(again.injects.len(), 2);
    assert_eq!(of(&again.audit, AuditEvent::HookTimeout).len(), 1);
    // Every hook call carried a full _context with a unique request id.
    let calls = sent(&transcript, "kaged.hook.on_session_start");
    assert_eq!(calls.len(), 10);
    let mut request_ids = HashSet::new();
    for (i, c) in calls.iter().enumerate() {
        let ctx = &c["params"]["_context"];
        let session = if i < 5 { "ses_1" } else { "ses_2" };
        assert_eq!(ctx["operator_id"], "operator");
        assert_eq!(ctx["project_id"], PROJECT_ID);
        assert_eq!(ctx["agent_path"], "primary");
        assert_eq!(ctx["session_id"], session);
        assert!(request_ids.insert(ctx["request_id"].to_string()), "{ctx}");
    }
    finish(agents).await;
}

#[tokio::test]
async fn session_hooks_never_fire_on_a_subagent() {
    let (agents, audit, transcript) = start("firing-start.yaml").await;
    // Resolution warned at load time.
    let illegal: Vec<(String, String)> = audit
        .of(AuditEvent::HookIllegal)
        .iter()
        .map(|r| (r.get("hook").to_string(), r.get("agent_path").to_string()))
        .collect();
    assert_eq!(
        illegal,
        [
            (
                "\"on_session_start\"".to_string(),
                format!("\"{RESEARCHER}\"")
            ),
            (
                "\"on_session_idle\"".to_string(),
                format!("\"{RESEARCHER}\"")
            ),
        ]
    );
    let s = agents
        .start_session(RESEARCHER, "ses_r")
        .await
        .expect("start");
    assert!(s.injects.is_empty() && s.system_prompt_prefix.is_empty());
    assert!(of(&s.audit, AuditEvent::HookFired).is_empty());
    let idle = agents
        .idle(
            RESEARCHER,
            "ses_r",
            vec![Message::new("u1", MessageRole::User, "hi")],
        )
        .await
        .expect("idle");
    assert!(idle.fired.is_empty() && idle.audit.is_empty());
    assert!(sent(&transcript, "kaged.hook.on_session_start").is_empty());
    assert!(sent(&transcript, "kaged.hook.on_session_idle").is_empty());
    finish(agents).await;
}

#[tokio::test]
async fn idle_sends_the_transcript_array_on_the_primary() {
    let (agents, _audit, transcript) = start("firing-start.yaml").await;
    let messages = vec![
        Message::new("u1", MessageRole::User, "hello"),
        Message::new("a1", MessageRole::Assistant, "hi there").keep(),
    ];
    let idle = agents
        .idle("primary", "ses_1", messages.clone())
        .await
        .expect("idle");
    // Subscribers in declaration order; the erroring one is null.
    assert_eq!(
        idle.fired,
        ["hooks-observer", "hooks-greeter", "hooks-error"]
    );
    assert_eq!(idle.acknowledged, ["hooks-observer", "hooks-greeter"]);
    let failed = of(&idle.audit, AuditEvent::HookFailed);
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].get("hook"), "on_session_idle");
    let calls = sent(&transcript, "kaged.hook.on_session_idle");
    assert_eq!(calls.len(), 3);
    for c in &calls {
        assert_eq!(c["params"]["transcript"], json!(messages));
        assert_eq!(c["params"]["_context"]["session_id"], "ses_1");
    }
    finish(agents).await;
}

#[tokio::test]
async fn each_agent_config_reaches_the_shared_process() {
    let (agents, audit, transcript) = start("firing-start.yaml").await;
    // One process per plugin, shared by the primary and the researcher.
    let spawned: Vec<String> = audit
        .of(AuditEvent::Spawned)
        .iter()
        .map(|r| r.plugin.clone())
        .collect();
    assert_eq!(
        spawned,
        [
            "hooks-observer",
            "hooks-slow",
            "hooks-greeter",
            "hooks-error",
            "hooks-malformed"
        ]
    );
    let c = agents
        .compact(RESEARCHER, firing::request("ses_r"))
        .await
        .expect("compact");
    assert_eq!(c.injects.len(), 1);
    assert!(c.injects[0].1.contains("tag=researcher"), "{:?}", c.injects);
    let s = agents
        .start_session("primary", "ses_1")
        .await
        .expect("start");
    assert!(s.injects[0].1.contains("tag=primary"), "{:?}", s.injects);
    // Sent at launch (primary; `{}` to the four plugins without a config,
    // ADDENDUM §15), then before each firing whose agent differs.
    let updates: Vec<_> = sent(&transcript, "config.update")
        .into_iter()
        .map(|m| m["params"].clone())
        .collect();
    let empty = json!({});
    assert_eq!(
        updates,
        [
            json!({"tag": "primary"}),
            empty.clone(),
            empty.clone(),
            empty.clone(),
            empty,
            json!({"tag": "researcher"}),
            json!({"tag": "primary"})
        ]
    );
    finish(agents).await;
}

#[tokio::test]
async fn unknown_agents_and_unresolvable_projects_are_typed_errors() {
    let (agents, _audit, _t) = start("firing-start.yaml").await;
    assert!(matches!(
        agents.start_session("primary.subagents.nobody", "s").await,
        Err(AgentHostError::UnknownAgent(p)) if p == "primary.subagents.nobody"
    ));
    finish(agents).await;
    let (host, audit, _t) = firing::host();
    let project = kaged_host_engine::agents::Project::from_yaml_str(
        "primary:\n  plugins:\n    x:\n      package: \"@kaged/not-installed\"\n",
        "inline.yaml",
    )
    .expect("parses");
    let err = AgentHost::start(host, &project, &plugin_dirs())
        .await
        .expect_err("does not resolve");
    assert!(matches!(err, AgentHostError::Resolve(_)), "{err:?}");
    assert!(audit.of(AuditEvent::Spawned).is_empty());
}

#[tokio::test]
async fn a_plugin_that_cannot_launch_does_not_block_the_others() {
    // Spec Spawn: "Failed plugins do not block daemon startup". One plugin
    // cannot be spawned (no command file), one fails its handshake (another
    // name in its initialize answer); the observer starts and serves hooks.
    let (host, audit, _t) = firing::host();
    let project = kaged_host_engine::agents::Project::from_yaml_str(
        "primary:\n  plugins:\n    observer:\n      package: \"@kaged/hooks-observer\"\n\
         \x20   broken:\n      package: \"@kaged/missing-command\"\n\
         \x20   liar:\n      package: \"@kaged/name-mismatch\"\n",
        "inline.yaml",
    )
    .expect("parses");
    let plugins = crate::support::host::plugins_root();
    let map = ["hooks-observer", "missing-command", "name-mismatch"]
        .map(|n| (format!("@kaged/{n}"), plugins.join(n)));
    let agents = AgentHost::start(
        host,
        &project,
        &kaged_host_engine::PluginDirs::Map(map.into()),
    )
    .await
    .expect("the failed plugins do not block the others");
    let failed: Vec<(&str, &[String])> = agents
        .failed()
        .iter()
        .map(|f| (f.name.as_str(), f.packages.as_slice()))
        .collect();
    assert_eq!(
        failed,
        [
            (
                "missing-command",
                &["@kaged/missing-command".to_string()][..]
            ),
            ("name-mismatch", &["@kaged/name-mismatch".to_string()][..])
        ]
    );
    assert!(
        matches!(agents.failed()[0].error, LaunchError::Spawn { .. }),
        "{:?}",
        agents.failed()[0].error
    );
    assert!(
        matches!(agents.failed()[1].error, LaunchError::Handshake { .. }),
        "{:?}",
        agents.failed()[1].error
    );
    let running: Vec<&str> = agents.plugins_running().map(|s| s.name()).collect();
    assert_eq!(running, ["hooks-observer"]);
    // Each failure is audited once as plugin.failed, after the launch's own
    // events: the spawn failure by the launch, the handshake failure (its
    // row, then the kill) by the AgentHost.
    let failures = of(&audit.events(), AuditEvent::Failed)
        .iter()
        .map(|r| (r.plugin.clone(), r.get("reason").clone()))
        .collect::<Vec<_>>();
    assert_eq!(
        failures,
        [
            ("missing-command".to_string(), json!("spawn failed")),
            ("name-mismatch".to_string(), json!("launch failed"))
        ]
    );
    let liar: Vec<&str> = audit
        .events()
        .iter()
        .filter(|r| r.plugin == "name-mismatch")
        .map(|r| r.event.as_str())
        .collect();
    assert_eq!(
        liar,
        [
            "plugin.spawned",
            "plugin.name_mismatch",
            "plugin.killed",
            "plugin.failed"
        ]
    );
    let launch_failed = one(&audit, "plugin.failed", "name-mismatch");
    assert_eq!(launch_failed.get("package"), "@kaged/name-mismatch");
    assert_eq!(
        launch_failed.get("error"),
        "handshake with plugin \"name-mismatch\" failed: name mismatch: manifest says \"name-mismatch\", plugin answered \"someone-else\""
    );
    // The running plugin serves its hooks; the failed ones are not fired.
    let s = agents
        .start_session("primary", "ses_1")
        .await
        .expect("start");
    let fired: Vec<String> = of(&s.audit, AuditEvent::HookFired)
        .iter()
        .map(|r| r.plugin.clone())
        .collect();
    assert_eq!(fired, ["hooks-observer"]);
    assert_eq!(s.injects.len(), 1);
    finish(agents).await;
}

/// The one record of `event` from `plugin`.
fn one(
    audit: &kaged_host_core::AuditLog,
    event: &str,
    plugin: &str,
) -> kaged_host_core::AuditRecord {
    let found: Vec<_> = audit
        .events()
        .into_iter()
        .filter(|r| r.event.as_str() == event && r.plugin == plugin)
        .collect();
    assert_eq!(found.len(), 1, "{:?}", audit.names());
    found.into_iter().next().expect("one")
}

#[tokio::test]
async fn plugins_start_for_the_project_and_hear_its_load_and_unload() {
    let (agents, _audit, transcript) = start("firing-start.yaml").await;
    let running: Vec<String> = agents
        .plugins_running()
        .map(|s| s.name().to_string())
        .collect();
    // Each plugin started for this project: `initialize` lists it.
    let inits = sent(&transcript, "initialize");
    assert_eq!(inits.len(), running.len());
    for init in &inits {
        assert_eq!(init["params"]["projects"], json!([PROJECT_ID]), "{init}");
    }
    // Loaded: each got `projects.activated {project, config}` once.
    let activated = sent(&transcript, "projects.activated");
    assert_eq!(activated.len(), running.len(), "{activated:?}");
    for a in &activated {
        assert_eq!(a["params"]["project"], PROJECT_ID, "{a}");
        assert!(a["params"]["config"].is_object(), "{a}");
    }
    assert!(sent(&transcript, "projects.deactivated").is_empty());
    // Unloaded: each still running gets `projects.deactivated {project}`
    // before its shutdown.
    finish(agents).await;
    let deactivated = sent(&transcript, "projects.deactivated");
    assert_eq!(deactivated.len(), running.len(), "{deactivated:?}");
    for d in &deactivated {
        assert_eq!(d["params"]["project"], PROJECT_ID, "{d}");
    }
    let records = transcript.records();
    let first = |method: &str| records.iter().position(|r| r.msg["method"] == method);
    assert!(
        first("projects.deactivated") < first("shutdown"),
        "the first plugin hears the unload before its shutdown"
    );
}

#[tokio::test]
async fn config_update_follows_initialized_before_any_call_even_when_empty() {
    // ADDENDUM §15: the merged config is always sent right after
    // `initialized`, `{}` when there is none.
    let (host, _audit, transcript) = firing::host();
    let project = kaged_host_engine::agents::Project::from_yaml_str(
        "primary:\n  plugins:\n    greeter:\n      package: \"@kaged/hooks-greeter\"\n",
        "inline.yaml",
    )
    .expect("parses");
    let agents = AgentHost::start(host, &project, &plugin_dirs())
        .await
        .expect("starts");
    agents
        .start_session("primary", "ses_1")
        .await
        .expect("start");
    let methods: Vec<String> = transcript
        .records()
        .into_iter()
        .filter(|r| r.dir == kaged_host_core::Direction::HostToPlugin)
        .filter_map(|r| r.msg["method"].as_str().map(str::to_string))
        .collect();
    assert_eq!(
        methods[..4],
        [
            "initialize",
            "initialized",
            "config.update",
            "projects.activated"
        ],
        "{methods:?}"
    );
    assert_eq!(sent(&transcript, "config.update")[0]["params"], json!({}));
    finish(agents).await;
}

/// ADDENDUM §16: a hook fires for every subscriber, but `inject` and
/// `retain` from a plugin without the observer role (`roles: []`) are
/// ignored, and audited `plugin.role_violation` naming what was ignored.
#[tokio::test]
async fn a_plugin_without_the_observer_role_is_fired_but_its_inject_is_ignored() {
    let (agents, audit, transcript) = start("firing-roleless.yaml").await;
    let s = agents
        .start_session("primary", "ses_1")
        .await
        .expect("start");
    assert_eq!(
        s.injects,
        [(
            "hooks-greeter".to_string(),
            wrapped("hooks-greeter", "greetings from greeter")
        )]
    );
    // It was fired, and answered.
    assert_eq!(sent(&transcript, "kaged.hook.on_session_start").len(), 2);
    let events = audit.events();
    let violations = of(&events, AuditEvent::RoleViolation);
    assert_eq!(violations.len(), 1, "{violations:?}");
    assert_eq!(violations[0].plugin, "hooks-roleless");
    assert_eq!(violations[0].data["hook"], "on_session_start");
    assert_eq!(violations[0].data["ignored"], json!(["inject"]));
    assert_eq!(violations[0].data["roles"], json!([]));
    finish(agents).await;
}
