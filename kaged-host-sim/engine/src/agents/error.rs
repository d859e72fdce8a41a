//! Typed errors and warnings of project loading and resolution.

use std::path::PathBuf;

use super::event::HostEvent;

/// A place in a source file (`project.yaml:12:9`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SourcePos {
    /// The file name as given to the loader.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
}

impl std::fmt::Display for SourcePos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// Why a project file or an operator-local config file could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ProjectError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The text is not a single well-formed YAML document.
    #[error("{file}:{}: {message}", line.map_or_else(|| "?".to_string(), |l| format!("{l}:{}", column.unwrap_or(0))))]
    Syntax {
        /// The file name.
        file: String,
        /// 1-based line, when the parser knows.
        line: Option<usize>,
        /// 1-based column, when the parser knows.
        column: Option<usize>,
        /// What the parser said.
        message: String,
    },
    /// A field has the wrong shape or value.
    #[error("{at}: {path}: {message}")]
    Field {
        /// Where the offending node starts.
        at: SourcePos,
        /// The field path (`primary.subagents.researcher.plugins.memory.hooks[0]`).
        path: String,
        /// What is wrong.
        message: String,
    },
}

impl ProjectError {
    /// The field path of a [`ProjectError::Field`].
    pub fn field_path(&self) -> Option<&str> {
        match self {
            ProjectError::Field { path, .. } => Some(path),
            _ => None,
        }
    }

    /// The location of the error, when known.
    pub fn at(&self) -> Option<SourcePos> {
        match self {
            ProjectError::Field { at, .. } => Some(at.clone()),
            ProjectError::Syntax {
                file,
                line: Some(line),
                column,
                ..
            } => Some(SourcePos {
                file: file.clone(),
                line: *line,
                column: column.unwrap_or(1),
            }),
            _ => None,
        }
    }
}

/// A configuration error found while resolving a project against a catalogue.
/// Each names the agent path and the declaration key (or field) at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// A declaration has no `package` and nothing to inherit it from.
    #[error("{at}: agent `{agent_path}`, plugin `{key}`: missing `package` ({reason})")]
    MissingPackage {
        /// Where the declaration starts.
        at: SourcePos,
        /// The agent path.
        agent_path: String,
        /// The declaration key.
        key: String,
        /// Why nothing could be inherited.
        reason: String,
    },
    /// A subagent's cascading block sets `package` or `isolation` to another
    /// value than the primary's base declaration.
    #[error("{at}: agent `{agent_path}`, plugin `{key}`: `{field}` cannot be overridden on a subagent under isolation: project (primary declares `{base}`, found `{found}`)")]
    CascadeOverride {
        /// Where the offending field is written.
        at: SourcePos,
        /// The subagent's path.
        agent_path: String,
        /// The declaration key.
        key: String,
        /// `package`, `version` or `isolation`.
        field: &'static str,
        /// The primary's value.
        base: String,
        /// The subagent's value.
        found: String,
    },
    /// No plugin of the catalogue answers to the declared package.
    #[error("{at}: agent `{agent_path}`, plugin `{key}`: unknown package `{package}`{}", declared_source.as_ref().map_or_else(|| " (the declaration names no source: install it by hand with `plugin install`)".to_string(), |s| format!(" (source: `{s}`: install it from there with `plugin install`)")))]
    UnknownPackage {
        /// Where `package` is written (or the declaration, when inherited).
        at: SourcePos,
        /// The agent path.
        agent_path: String,
        /// The declaration key.
        key: String,
        /// The package string.
        package: String,
        /// The declaration's `source:`, where the plugin can be installed
        /// from (a relative path already resolved against the project
        /// file's directory).
        declared_source: Option<String>,
    },
    /// The installed plugin's version does not meet the declaration's
    /// `version:` requirement.
    #[error("{at}: agent `{agent_path}`, plugin `{key}`: `{package}` {installed} is installed, the project requires version `{required}`")]
    VersionMismatch {
        /// Where `version` is written.
        at: SourcePos,
        /// The agent path.
        agent_path: String,
        /// The declaration key.
        key: String,
        /// The package.
        package: String,
        /// The requirement as written.
        required: String,
        /// The installed plugin's manifest version.
        installed: String,
    },
    /// A declaration lists a hook that is not a defined hook.
    #[error("{at}: agent `{agent_path}`, plugin `{key}`: `{hook}` is not a lifecycle hook")]
    UnknownHook {
        /// Where the hook is written.
        at: SourcePos,
        /// The agent path.
        agent_path: String,
        /// The declaration key.
        key: String,
        /// The hook as written.
        hook: String,
    },
    /// A declaration subscribes to a hook the plugin's manifest does not list.
    #[error("{at}: agent `{agent_path}`, plugin `{key}`: hook `{hook}` is not in the `hooks` of plugin `{plugin}`'s manifest")]
    UndeclaredHook {
        /// Where the hook is written.
        at: SourcePos,
        /// The agent path.
        agent_path: String,
        /// The declaration key.
        key: String,
        /// The plugin (manifest) name.
        plugin: String,
        /// The hook.
        hook: String,
    },
    /// `compaction.delegate.plugin` names no plugin declared on the agent.
    #[error("{at}: agent `{agent_path}`: compaction.delegate.plugin `{plugin}` names no plugin declared on this agent")]
    DelegateUnknown {
        /// Where the delegate is written.
        at: SourcePos,
        /// The agent path.
        agent_path: String,
        /// The delegate as written.
        plugin: String,
    },
    /// The delegate's manifest does not claim the `compactor` role.
    #[error("{at}: agent `{agent_path}`: compaction.delegate.plugin `{plugin}` does not claim the compactor role")]
    DelegateNotCompactor {
        /// Where the delegate is written.
        at: SourcePos,
        /// The agent path.
        agent_path: String,
        /// The delegate as written.
        plugin: String,
    },
    /// The delegate does not receive `pre_compact` on this agent.
    #[error("{at}: agent `{agent_path}`: compaction.delegate.plugin `{plugin}` is not subscribed to pre_compact on this agent")]
    DelegateWithoutPreCompact {
        /// Where the delegate is written.
        at: SourcePos,
        /// The agent path.
        agent_path: String,
        /// The delegate as written.
        plugin: String,
    },
}

impl ResolveError {
    /// The agent path the error concerns.
    pub fn agent_path(&self) -> &str {
        match self {
            ResolveError::MissingPackage { agent_path, .. }
            | ResolveError::CascadeOverride { agent_path, .. }
            | ResolveError::UnknownPackage { agent_path, .. }
            | ResolveError::VersionMismatch { agent_path, .. }
            | ResolveError::UnknownHook { agent_path, .. }
            | ResolveError::UndeclaredHook { agent_path, .. }
            | ResolveError::DelegateUnknown { agent_path, .. }
            | ResolveError::DelegateNotCompactor { agent_path, .. }
            | ResolveError::DelegateWithoutPreCompact { agent_path, .. } => agent_path,
        }
    }
}

/// Every configuration error of a failed resolution, with the events
/// produced before the failure was known.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", render_errors(errors))]
pub struct ResolveErrors {
    /// The errors, in agent then declaration order (never empty).
    pub errors: Vec<ResolveError>,
    /// The audit-style events produced while resolving.
    pub events: Vec<HostEvent>,
}

fn render_errors(errors: &[ResolveError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A load-time warning that has no audit event of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResolveWarning {
    /// The plugin's name is a built-in tool namespace (a documented footgun).
    BuiltinNamespace {
        /// The agent path.
        agent_path: String,
        /// The plugin name (equal to the namespace).
        plugin: String,
    },
    /// A config key set both in the project and in the operator's local
    /// block: the project value is used (ADR-0023, ADDENDUM §15).
    ConfigCollision {
        /// The agent path.
        agent_path: String,
        /// The plugin.
        plugin: String,
        /// The keys set on both sides.
        keys: Vec<String>,
    },
    /// `compaction.delegate.plugin` names a declared plugin that is not
    /// active on the agent (refused or failed); the agent has no compactor.
    DelegateInactive {
        /// The agent path.
        agent_path: String,
        /// The delegate as written.
        plugin: String,
    },
}
