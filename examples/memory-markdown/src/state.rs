//! The plugin's state and the operations its handlers share: resolving a
//! call's scope, writing and reading entries off the async threads.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::SystemTime;

use kaged_plugin_sdk::protocol::PluginCallContext;
use kaged_plugin_sdk::PluginError;

use crate::config::Config;
use crate::entry::{Entry, IdGen, Source};
use crate::hooks::IdleBuffer;
use crate::paths::{self, Scope, ScopeError, StoreSpec};
use crate::store;
use crate::tools::merge_tags;

/// The memory-markdown plugin.
#[derive(Debug)]
pub struct MemoryMarkdown {
    pub(crate) config: RwLock<Arc<Config>>,
    pub(crate) config_root: Option<PathBuf>,
    pub(crate) ids: IdGen,
    /// Idle transcripts not saved yet, by session (and directory).
    pub(crate) idle: Mutex<HashMap<(PathBuf, String), (Scope, IdleBuffer)>>,
    /// Headlines retained with the tool, by session (pre_compact hints).
    pub(crate) retained: Mutex<HashMap<(PathBuf, String), Vec<String>>>,
}

/// How many retained headlines a session keeps for `pre_compact`.
pub const RETAIN_HINTS: usize = 10;

impl MemoryMarkdown {
    /// A plugin with the default config and the config root from the
    /// environment (`$KAGED_CONFIG_ROOT`, else `$HOME/.config/kaged`).
    pub fn from_env() -> MemoryMarkdown {
        MemoryMarkdown::with_config_root(paths::config_root())
    }

    /// A plugin with the default config and this config root.
    pub fn with_config_root(config_root: Option<PathBuf>) -> MemoryMarkdown {
        MemoryMarkdown {
            config: RwLock::new(Arc::new(Config::default())),
            config_root,
            ids: IdGen::default(),
            idle: Mutex::new(HashMap::new()),
            retained: Mutex::new(HashMap::new()),
        }
    }

    /// The current config.
    pub fn config(&self) -> Arc<Config> {
        Arc::clone(&self.config.read().unwrap_or_else(|p| p.into_inner()))
    }

    pub(crate) fn set_config(&self, config: Config) {
        *self.config.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(config);
    }

    /// The scope of a call: `-32006` for daemon-level calls, `-32602` for a
    /// context that would leave the store.
    pub fn scope(&self, ctx: Option<&PluginCallContext>) -> Result<Scope, PluginError> {
        let cfg = self.config();
        let spec = StoreSpec::parse(&cfg.project.store).map_err(PluginError::config_invalid)?;
        paths::scope(ctx, &spec, cfg.project.isolation, self.config_root.as_deref()).map_err(|e| match e {
            ScopeError::NoAgent => PluginError::not_applicable(
                "memory-markdown needs an agent context (project_id, agent_path, session_id); daemon-level calls have no memory",
            ),
            ScopeError::Unsafe(m) => PluginError::invalid_params(m),
            ScopeError::Store(m) => PluginError::new(format!("cannot locate the memory store: {m}")),
        })
    }

    /// Write a new entry (secrets redacted, configured tags added).
    pub async fn save(
        &self,
        scope: &Scope,
        content: &str,
        context: Option<&str>,
        tags: &[String],
        source: Source,
    ) -> Result<(Entry, PathBuf), PluginError> {
        let cfg = self.config();
        let auto = [source.as_str().to_string()];
        let source_tag: &[String] = if source == Source::Tool { &[] } else { &auto };
        let mut entry = Entry {
            id: String::new(),
            created_at: String::new(),
            tags: merge_tags([tags, source_tag, cfg.project.tags.as_slice()]),
            context: context.map(|c| cfg.system.redact(c)),
            source,
            content: cfg.system.redact(content),
        };
        for _ in 0..16 {
            (entry.id, entry.created_at) = self.ids.next(SystemTime::now());
            let (s, e) = (scope.clone(), entry.clone());
            match blocking(move || store::insert(&s, &e)).await {
                Ok(path) => return Ok((entry, path)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(io_error("write", &scope.dir, e)),
            }
        }
        Err(PluginError::new("could not find a free entry id"))
    }

    /// Every entry of a scope, oldest first.
    pub async fn entries(&self, scope: &Scope) -> Result<Vec<Entry>, PluginError> {
        let dir = scope.dir.clone();
        blocking(move || store::list(&dir))
            .await
            .map_err(|e| io_error("read", &scope.dir, e))
    }

    /// Remember a tool-retained headline for the session's `pre_compact`.
    pub(crate) fn note_retained(&self, scope: &Scope, session: &str, headline: String) {
        let mut map = self.retained.lock().unwrap_or_else(|p| p.into_inner());
        let list = map
            .entry((scope.dir.clone(), session.to_string()))
            .or_default();
        list.push(headline);
        if list.len() > RETAIN_HINTS {
            list.remove(0);
        }
    }
}

/// Run blocking file work off the async threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> std::io::Result<T> + Send + 'static,
) -> std::io::Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(std::io::Error::other)?
}

fn io_error(what: &str, dir: &std::path::Path, e: std::io::Error) -> PluginError {
    PluginError::new(format!("cannot {what} memory in {}: {e}", dir.display()))
}
