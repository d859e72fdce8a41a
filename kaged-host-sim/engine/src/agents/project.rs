//! The project file model (the `AgentSpec` subset the plugin host needs);
//! [`Project::from_yaml_str`] and [`Project::load`] are in the private
//! `load` module.
//!
//! ```yaml
//! primary:
//!   plugins:                       # ordered: declaration order = hook order
//!     memory:
//!       package: "@kaged/memory-hindsight"
//!       version: "^1.4"            # semver requirement on the installed plugin
//!       source: ./plugins/memory   # where to install it from (named when missing)
//!       isolation: project         # agent (default) | project
//!       hooks: [on_session_start]  # omitted: the manifest's hooks
//!       config: { recall_budget: mid }
//!   compaction:
//!     delegate: { plugin: memory } # declaration key, or plugin name
//!   tools:
//!     "memory-hindsight.recall": { enabled: false }
//!   subagents:
//!     researcher:
//!       plugins: { memory: { hooks: [on_session_idle] } }
//! ```
//!
//! Other `AgentSpec` fields (model, cage, ...) and other top-level keys are
//! ignored. Plugin declarations are closed: an unknown field is an error
//! (a typo such as `hook:` would otherwise be silently dropped).

use kaged_plugin_protocol::manifest::Pos;
use serde_json::{Map, Value};

use super::error::SourcePos;
use super::local::SystemConfig;

/// The canonical path of the primary agent.
pub const PRIMARY: &str = "primary";

/// `isolation:` of a plugin declaration (ADR-0023).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Isolation {
    /// Each declaring agent's instance is independent (the default).
    #[default]
    Agent,
    /// One instance shared by the declaring agents; subagents cascade from
    /// the primary's declaration.
    Project,
}

impl Isolation {
    /// The YAML spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Isolation::Agent => "agent",
            Isolation::Project => "project",
        }
    }

    /// The isolation with this spelling.
    pub fn parse(s: &str) -> Option<Isolation> {
        match s {
            "agent" => Some(Isolation::Agent),
            "project" => Some(Isolation::Project),
            _ => None,
        }
    }
}

/// A value with the position where it is written.
#[derive(Debug, Clone, PartialEq)]
pub struct Located<T> {
    /// The value.
    pub value: T,
    /// Where it starts.
    pub pos: Pos,
}

/// One entry of an agent's `plugins:` map, as written (before the cascade).
#[derive(Debug, Clone, PartialEq)]
pub struct PluginDecl {
    /// The declaration key (`memory`).
    pub key: String,
    /// Where the key is written.
    pub pos: Pos,
    /// `package:`.
    pub package: Option<Located<String>>,
    /// `version:`: a semver requirement the installed plugin's version must
    /// meet (`^1.4`, `>=1.2, <2`); checked when the project is resolved.
    pub version: Option<Located<String>>,
    /// `source:`: where the plugin comes from (`./relative/path` from the
    /// project file's directory, a git URL); named when it is not installed.
    pub source: Option<Located<String>>,
    /// `isolation:`.
    pub isolation: Option<Located<Isolation>>,
    /// `hooks:` (each hook as written, unchecked).
    pub hooks: Option<Vec<Located<String>>>,
    /// `config:` (top-level fields in document order).
    pub config: Option<Map<String, Value>>,
}

/// One agent of the recursive tree.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentSpec {
    /// The canonical agent path (`primary.subagents.researcher`).
    pub path: String,
    /// Where the agent's mapping starts.
    pub pos: Pos,
    /// `plugins:` in declaration order.
    pub plugins: Vec<PluginDecl>,
    /// `compaction.delegate.plugin`.
    pub compaction_delegate: Option<Located<String>>,
    /// The names under `tools:` whose `enabled` is `false`.
    pub tools_disabled: Vec<String>,
    /// `subagents:` in declaration order.
    pub subagents: Vec<AgentSpec>,
}

impl AgentSpec {
    /// Whether this is the primary agent.
    pub fn is_primary(&self) -> bool {
        self.path == PRIMARY
    }

    /// The declaration with this key.
    pub fn plugin(&self, key: &str) -> Option<&PluginDecl> {
        self.plugins.iter().find(|d| d.key == key)
    }
}

/// A loaded project: the agent tree plus the operator-local system config.
#[derive(Debug, Clone, PartialEq)]
pub struct Project {
    /// The file name used in messages.
    pub file: String,
    /// The project id: `initialize.projects`, `projects.activated` /
    /// `deactivated` and every hook `_context` carry it. By default the
    /// project file's directory (see [`Project::with_id`]).
    pub id: String,
    /// The primary agent (root of the tree).
    pub primary: AgentSpec,
    /// The operator-local `[plugins."<package>"]` blocks (empty by default).
    pub system: SystemConfig,
}

impl Project {
    /// The same project with this id.
    pub fn with_id(mut self, id: impl Into<String>) -> Project {
        self.id = id.into();
        self
    }

    /// The same project with this operator-local system config.
    pub fn with_system_config(mut self, system: SystemConfig) -> Project {
        self.system = system;
        self
    }

    /// Every agent, primary first, then depth-first in declaration order.
    pub fn agents(&self) -> Vec<&AgentSpec> {
        fn walk<'a>(a: &'a AgentSpec, out: &mut Vec<&'a AgentSpec>) {
            out.push(a);
            for s in &a.subagents {
                walk(s, out);
            }
        }
        let mut out = Vec::new();
        walk(&self.primary, &mut out);
        out
    }

    /// The agent at a canonical path.
    pub fn agent(&self, path: &str) -> Option<&AgentSpec> {
        self.agents().into_iter().find(|a| a.path == path)
    }

    /// A declaration's `source:` as the operator can use it: a relative
    /// path (`./plugins/x`, `../x`) joined to the project file's directory,
    /// anything else (a URL) as written.
    ///
    /// ```
    /// use kaged_host_engine::agents::Project;
    /// let p = Project::from_yaml_str("primary: {}\n", "/srv/proj/project.yaml").unwrap();
    /// assert_eq!(p.resolve_source("./vendor/x"), "/srv/proj/vendor/x");
    /// assert_eq!(p.resolve_source("https://github.com/o/x"), "https://github.com/o/x");
    /// ```
    pub fn resolve_source(&self, source: &str) -> String {
        let is_path = source.starts_with("./") || source.starts_with("../");
        match (is_path, std::path::Path::new(&self.file).parent()) {
            (true, Some(dir)) if !dir.as_os_str().is_empty() => {
                let relative = source.strip_prefix("./").unwrap_or(source);
                dir.join(relative).display().to_string()
            }
            _ => source.to_string(),
        }
    }

    /// Every package the project declares, once each, in declaration order
    /// (primary first, then depth-first), with the first `version:` and
    /// `source:` written for it (a source resolved with
    /// [`Project::resolve_source`]).
    pub fn declared_packages(&self) -> Vec<DeclaredPackage> {
        let mut out: Vec<DeclaredPackage> = Vec::new();
        for agent in self.agents() {
            for d in &agent.plugins {
                let Some(package) = &d.package else { continue };
                let i = match out.iter().position(|p| p.package == package.value) {
                    Some(i) => i,
                    None => {
                        out.push(DeclaredPackage {
                            package: package.value.clone(),
                            version: None,
                            source: None,
                        });
                        out.len() - 1
                    }
                };
                let p = &mut out[i];
                if p.version.is_none() {
                    p.version = d.version.as_ref().map(|v| v.value.clone());
                }
                if p.source.is_none() {
                    p.source = d.source.as_ref().map(|s| self.resolve_source(&s.value));
                }
            }
        }
        out
    }

    /// A position in this project's file.
    pub fn source_pos(&self, pos: Pos) -> SourcePos {
        SourcePos {
            file: self.file.clone(),
            line: pos.line,
            column: pos.column,
        }
    }
}

/// A package a project declares ([`Project::declared_packages`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclaredPackage {
    /// The package (`@kaged/notes`).
    pub package: String,
    /// Its `version:` requirement, if any declaration gives one.
    pub version: Option<String>,
    /// Its `source:`, resolved, if any declaration gives one.
    pub source: Option<String>,
}

impl DeclaredPackage {
    /// The plugin name the package answers to: its last `/` segment
    /// (`@kaged/notes` → `notes`), the whole package without one.
    pub fn plugin_name(&self) -> &str {
        self.package.rsplit('/').next().unwrap_or(&self.package)
    }
}
