//! Helpers of the agents tests (`tests/agents/`): fixture projects, the
//! fixture catalogue, resolution.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use kaged_host_core::AuditEvent;
use kaged_host_engine::agents::{
    resolve, Catalogue, HostEvent, Project, Resolution, ResolveErrors, SystemConfig,
};

/// `tests/fixtures/projects`.
pub fn dir() -> PathBuf {
    super::tests_dir().join("fixtures/projects")
}

/// Every fixture plugin, keyed by manifest name.
pub fn catalogue() -> Catalogue {
    Catalogue::load_dir(&dir().join("plugins")).expect("fixture manifests load")
}

/// The environment `local.toml` is substituted from.
pub fn env() -> BTreeMap<String, String> {
    BTreeMap::from([
        ("KAGED_HINDSIGHT_TOKEN".to_string(), "hs-token".to_string()),
        ("SMART_COMPACTOR_KEY".to_string(), "42".to_string()),
    ])
}

/// `local.toml`, substituted.
pub fn system() -> SystemConfig {
    SystemConfig::load(&dir().join("local.toml"), &env()).expect("local.toml loads")
}

/// A fixture project with `local.toml` as its system config.
pub fn fixture(name: &str) -> Project {
    Project::load(&dir().join(name))
        .expect("fixture project loads")
        .with_system_config(system())
}

/// An inline project with `local.toml` as its system config.
pub fn inline(yaml: &str) -> Project {
    Project::from_yaml_str(yaml, "inline.yaml")
        .expect("inline project parses")
        .with_system_config(system())
}

/// Resolve against the fixture catalogue, expecting success.
pub fn ok(project: &Project) -> Resolution {
    match resolve(project, &catalogue()) {
        Ok(r) => r,
        Err(e) => panic!("resolution failed:\n{e}"),
    }
}

/// Resolve against the fixture catalogue, expecting failure.
pub fn err(project: &Project) -> ResolveErrors {
    match resolve(project, &catalogue()) {
        Ok(r) => panic!("resolution succeeded: {r:#?}"),
        Err(e) => e,
    }
}

/// The events of one kind on one agent.
pub fn events<'a>(res: &'a Resolution, path: &str, kind: AuditEvent) -> Vec<&'a HostEvent> {
    res.agent(path)
        .map(|a| a.events.iter().filter(|e| e.event == kind).collect())
        .unwrap_or_default()
}
