//! Every handler kind and signature shape, and every plugin argument.

use kaged_plugin_sdk::protocol::{
    CompactParams, ObserverResult, SessionIdleParams, SessionStartResult,
};
use kaged_plugin_sdk::{kaged_plugin, Call, Host, KagedPlugin, PluginError};
use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize, schemars::JsonSchema)]
struct Query {
    /// What to look for.
    q: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Settings {
    // Only deserialized: the params type is what is tested.
    #[allow(dead_code)]
    limit: u32,
}

#[derive(Deserialize)]
struct Named {
    name: String,
}

struct Everything;

#[kaged_plugin(
    name = "everything",
    version = "2.0.0",
    description = "Shows every feature.",
    notifications("everything.changed", "everything.deleted"),
    roles(observer, compactor),
    capabilities("kaged:storage:read")
)]
impl Everything {
    #[method("everything.none")]
    async fn none(&self) -> Result<(), PluginError> {
        Ok(())
    }

    #[method("everything.params")]
    async fn params(&self, p: Named) -> Result<String, PluginError> {
        Ok(p.name)
    }

    #[method("everything.ctx")]
    async fn ctx(&self, call: Call) -> Result<String, PluginError> {
        Ok(call.method)
    }

    #[method("everything.both.of_them")]
    async fn both(&self, p: Value, _call: kaged_plugin_sdk::Call) -> Result<Value, PluginError> {
        Ok(p)
    }

    /// Find things.
    #[tool]
    async fn find(&self, args: Query) -> Result<Vec<String>, PluginError> {
        Ok(vec![args.q])
    }

    /// Find things, with the context.
    #[tool(name = "find_more")]
    async fn find_with_context(&self, args: Query, _call: Call) -> Result<usize, PluginError> {
        Ok(args.q.len())
    }

    #[hook]
    async fn on_session_start(&self) -> Result<Option<SessionStartResult>, PluginError> {
        Ok(None)
    }

    #[hook]
    async fn on_session_idle(&self, _p: SessionIdleParams, _call: Call) -> Result<(), PluginError> {
        Ok(())
    }

    #[hook(pre_compact)]
    async fn before(&self, _p: CompactParams) -> Result<ObserverResult, PluginError> {
        Ok(ObserverResult::default())
    }

    #[hook(post_compact)]
    async fn after(&self, _p: Value) -> Result<Option<ObserverResult>, PluginError> {
        Ok(None)
    }

    #[config]
    async fn configure(&self, _s: Settings, _host: Host) -> Result<(), PluginError> {
        Ok(())
    }

    #[shutdown]
    async fn stop(&self) {}
}

struct Small;

#[kaged_plugin(name = "small")]
impl Small {
    #[config]
    async fn configure(&self, _s: Settings) -> Result<(), PluginError> {
        Ok(())
    }
}

#[test]
fn every_feature_compiles_and_builds_its_definition() {
    let p = Everything.build().expect("valid");
    assert_eq!(p.version(), "2.0.0");
    assert_eq!(
        p.methods(),
        [
            "everything.none",
            "everything.params",
            "everything.ctx",
            "everything.both.of_them",
            "everything.find",
            "everything.find_more"
        ]
    );
    let m = p.manifest();
    assert_eq!(m.description, "Shows every feature.");
    assert_eq!(
        m.hooks,
        [
            "on_session_start",
            "on_session_idle",
            "pre_compact",
            "post_compact"
        ]
    );
    assert_eq!(m.roles, Some(vec!["observer".into(), "compactor".into()]));
    assert_eq!(
        m.notifications,
        ["everything.changed", "everything.deleted"]
    );
    assert_eq!(m.tools[1].name, "find_more");
    assert_eq!(
        m.tools[0].parameters_schema["properties"]["q"]["description"],
        "What to look for."
    );
    assert!(m.config_schema.is_some());
    p.check_tools().expect("valid schemas");

    let s = Small.build().expect("valid");
    assert_eq!(s.version(), env!("CARGO_PKG_VERSION"));
    assert!(s.config_schema().is_some());
}
