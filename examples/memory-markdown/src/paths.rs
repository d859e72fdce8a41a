//! Where entries live: the `store` URI, the config root, and the
//! per-call directory composed from `_context` (sanitized so that no
//! context value can leave the store).
//!
//! Layout: `<store>/<project_id>/<agent_path>/` under agent isolation,
//! `<store>/<project_id>/_project/` under project isolation.

use std::path::{Component, Path, PathBuf};

use kaged_plugin_sdk::protocol::PluginCallContext;
use schemars::JsonSchema;
use serde::Deserialize;

/// Whose memory a call reads and writes (ADR-0023, Isolation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Isolation {
    /// Each agent has its own memory, keyed by its `agent_path`.
    #[default]
    Agent,
    /// Every agent of the project that declares the plugin shares one memory.
    Project,
}

/// The directory name of project-isolated memory.
pub const PROJECT_DIR: &str = "_project";

/// The `store` setting, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreSpec {
    /// `config:/<rel>`: under the plugin's config root.
    Config(PathBuf),
    /// `project:/<rel>`: under `<config root>/projects/<project_id>`.
    Project(PathBuf),
    /// An absolute path.
    Absolute(PathBuf),
}

/// A relative path with only normal components (no `..`, no root).
fn relative(rest: &str) -> Result<PathBuf, String> {
    let p = Path::new(rest.trim_start_matches('/'));
    if rest.contains('\0') {
        return Err("the path contains a NUL byte".into());
    }
    if p.components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    {
        Ok(p.to_path_buf())
    } else {
        Err(format!("`{rest}` must not contain `..`"))
    }
}

impl StoreSpec {
    /// Parse `config:/x`, `project:/x` or `/abs/path`.
    pub fn parse(store: &str) -> Result<StoreSpec, String> {
        if let Some(rest) = store.strip_prefix("config:/") {
            return relative(rest).map(StoreSpec::Config);
        }
        if let Some(rest) = store.strip_prefix("project:/") {
            return relative(rest).map(StoreSpec::Project);
        }
        let p = Path::new(store);
        if p.is_absolute()
            && !store.contains('\0')
            && !p.components().any(|c| c == Component::ParentDir)
        {
            return Ok(StoreSpec::Absolute(p.to_path_buf()));
        }
        Err(format!(
            "`{store}` must be `config:/<path>`, `project:/<path>` or an absolute path without `..`"
        ))
    }

    /// The store root for a call in `project_id` (already sanitized).
    pub fn root(&self, config_root: Option<&Path>, project_id: &str) -> Result<PathBuf, String> {
        let need_root = || {
            config_root.map(Path::to_path_buf).ok_or_else(|| {
                "no config root: set KAGED_CONFIG_ROOT or HOME, or use an absolute store"
                    .to_string()
            })
        };
        match self {
            StoreSpec::Absolute(p) => Ok(p.clone()),
            StoreSpec::Config(rel) => Ok(need_root()?.join(rel)),
            StoreSpec::Project(rel) => Ok(need_root()?.join("projects").join(project_id).join(rel)),
        }
    }
}

/// The plugin's config root: `$KAGED_CONFIG_ROOT` if set (and absolute),
/// else `$HOME/.config/kaged` (the host sets HOME to the plugin directory).
pub fn config_root_from(
    kaged_config_root: Option<String>,
    home: Option<String>,
) -> Option<PathBuf> {
    let abs = |s: String| Some(PathBuf::from(s)).filter(|p| p.is_absolute());
    kaged_config_root
        .and_then(abs)
        .or_else(|| home.and_then(abs).map(|h| h.join(".config").join("kaged")))
}

/// [`config_root_from`] with the process environment.
pub fn config_root() -> Option<PathBuf> {
    config_root_from(
        std::env::var("KAGED_CONFIG_ROOT").ok(),
        std::env::var("HOME").ok(),
    )
}

/// Check that a `_context` value is usable as one directory name: not
/// empty, not `.`/`..`, no `/`, `\`, NUL or control characters, not
/// starting with `_` (reserved for [`PROJECT_DIR`]), at most 200 bytes.
pub fn component<'a>(field: &str, value: &'a str) -> Result<&'a str, String> {
    let bad = value.is_empty()
        || value == "."
        || value == ".."
        || value.len() > 200
        || value.starts_with('_')
        || value
            .chars()
            .any(|c| c == '/' || c == '\\' || c.is_control());
    if bad {
        Err(format!(
            "_context.{field} {value:?} cannot name a memory directory (empty, `.`/`..`, `/`, `\\`, control characters, a leading `_` or over 200 bytes)"
        ))
    } else {
        Ok(value)
    }
}

/// Where one call's entries live, and how to name them to the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    /// The store root (holds `README.md`).
    pub root: PathBuf,
    /// The entry directory.
    pub dir: PathBuf,
    /// `agent` or `project`, for the session-start header.
    pub isolation: Isolation,
}

/// Why a call has no scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScopeError {
    /// A daemon-level call: no project or agent to remember for.
    NoAgent,
    /// A context value that would leave the store.
    Unsafe(String),
    /// The store cannot be resolved.
    Store(String),
}

/// The scope of a call from its context.
pub fn scope(
    ctx: Option<&PluginCallContext>,
    spec: &StoreSpec,
    isolation: Isolation,
    config_root: Option<&Path>,
) -> Result<Scope, ScopeError> {
    let (Some(project), Some(agent)) = (
        ctx.and_then(|c| c.project_id.as_deref()),
        ctx.and_then(|c| c.agent_path.as_deref()),
    ) else {
        return Err(ScopeError::NoAgent);
    };
    let project = component("project_id", project).map_err(ScopeError::Unsafe)?;
    let agent = component("agent_path", agent).map_err(ScopeError::Unsafe)?;
    let root = spec.root(config_root, project).map_err(ScopeError::Store)?;
    let leaf = match isolation {
        Isolation::Agent => agent,
        Isolation::Project => PROJECT_DIR,
    };
    let dir = root.join(project).join(leaf);
    Ok(Scope {
        root,
        dir,
        isolation,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(project: &str, agent: &str) -> PluginCallContext {
        PluginCallContext::agent(project, agent, "s", "r")
    }

    #[test]
    fn store_specs_resolve() {
        let root = Path::new("/cfg");
        let c = StoreSpec::parse("config:/memory").expect("config");
        assert_eq!(
            c.root(Some(root), "p").expect("root"),
            Path::new("/cfg/memory")
        );
        let p = StoreSpec::parse("project:/mem").expect("project");
        assert_eq!(
            p.root(Some(root), "p").expect("root"),
            Path::new("/cfg/projects/p/mem")
        );
        let a = StoreSpec::parse("/var/mem").expect("absolute");
        assert_eq!(a.root(None, "p").expect("root"), Path::new("/var/mem"));
        for bad in [
            "memory",
            "config:/../x",
            "project:/a/../../b",
            "/a/../b",
            "http://x",
        ] {
            assert!(StoreSpec::parse(bad).is_err(), "{bad}");
        }
        assert!(c.root(None, "p").is_err());
    }

    #[test]
    fn config_root_prefers_kaged_config_root() {
        let r = config_root_from(Some("/etc/k".into()), Some("/home/u".into()));
        assert_eq!(r.as_deref(), Some(Path::new("/etc/k")));
        let r = config_root_from(None, Some("/home/u".into()));
        assert_eq!(r.as_deref(), Some(Path::new("/home/u/.config/kaged")));
        assert_eq!(config_root_from(Some("rel".into()), None), None);
    }

    #[test]
    fn isolation_picks_the_leaf_and_traversal_is_refused() {
        let spec = StoreSpec::Absolute("/m".into());
        let s = scope(
            Some(&ctx("music", "primary")),
            &spec,
            Isolation::Agent,
            None,
        )
        .expect("ok");
        assert_eq!(s.dir, Path::new("/m/music/primary"));
        let s = scope(
            Some(&ctx("music", "primary")),
            &spec,
            Isolation::Project,
            None,
        )
        .expect("ok");
        assert_eq!(s.dir, Path::new("/m/music/_project"));
        for (p, a) in [
            ("..", "primary"),
            ("music", "../x"),
            ("/etc", "a"),
            ("m", "a\0b"),
            ("m", "_project"),
            ("", "a"),
        ] {
            let r = scope(Some(&ctx(p, a)), &spec, Isolation::Agent, None);
            assert!(
                matches!(r, Err(ScopeError::Unsafe(_))),
                "{p:?} {a:?}: {r:?}"
            );
        }
        let daemon = PluginCallContext::daemon("r");
        assert_eq!(
            scope(Some(&daemon), &spec, Isolation::Agent, None),
            Err(ScopeError::NoAgent)
        );
        assert_eq!(
            scope(None, &spec, Isolation::Agent, None),
            Err(ScopeError::NoAgent)
        );
    }
}
