//! The handlers: four tools, four hooks, config and shutdown, declared
//! with `#[kaged_plugin]`.

use std::time::SystemTime;

use kaged_plugin_sdk::protocol::{
    CompactParams, ObserverResult, SessionIdleParams, SessionStartParams, SessionStartResult,
};
use kaged_plugin_sdk::{kaged_plugin, log, Call, PluginError};
use serde_json::json;

use crate::config::Config;
use crate::entry::{valid_id, valid_tag, Source};
use crate::hooks::{headline, render_messages, session_start_text, IdleBuffer};
use crate::state::MemoryMarkdown;
use crate::tools::{
    count_tags, Forget, Forgotten, Hit, ListTags, Recall, Recalled, Retain, Retained, Tags,
    DEFAULT_LIMIT, ENTRY_NOT_FOUND, MAX_CONTENT_BYTES,
};
use crate::{rank, store};

fn check_tags(tags: &[String], field: &str) -> Result<(), PluginError> {
    match tags.iter().find(|t| !valid_tag(t)) {
        Some(t) => Err(PluginError::invalid_params(format!(
            "invalid params: field /{field}: tag {t:?} must be non-empty, at most 64 characters, without control characters"
        ))),
        None => Ok(()),
    }
}

#[kaged_plugin(
    name = "memory-markdown",
    roles(observer),
    manifest_base = "kaged-plugin.base.yaml"
)]
impl MemoryMarkdown {
    /// Store information in long-term memory: one markdown entry per call,
    /// found again with `recall` (by words or tags) and shown at the start
    /// of later sessions.
    #[tool]
    async fn retain(&self, args: Retain, call: Call) -> Result<Retained, PluginError> {
        let scope = self.scope(call.context.as_ref())?;
        if args.content.trim().is_empty() {
            return Err(PluginError::invalid_params(
                "invalid params: field /content: must not be empty",
            ));
        }
        if args.content.len() > MAX_CONTENT_BYTES {
            return Err(PluginError::invalid_params(format!(
                "invalid params: field /content: {} bytes is over the {MAX_CONTENT_BYTES}-byte limit",
                args.content.len()
            )));
        }
        check_tags(&args.tags, "tags")?;
        let context = args.context.as_deref().filter(|c| !c.trim().is_empty());
        let (entry, path) = self
            .save(&scope, &args.content, context, &args.tags, Source::Tool)
            .await?;
        if let Some(session) = call.context.as_ref().and_then(|c| c.session_id.as_deref()) {
            self.note_retained(&scope, session, headline(&entry.content, 200));
        }
        let file = path
            .strip_prefix(&scope.root)
            .unwrap_or(&path)
            .to_string_lossy()
            .into_owned();
        Ok(Retained {
            id: entry.id,
            created_at: entry.created_at,
            tags: entry.tags,
            file,
        })
    }

    /// Search long-term memory: entries matching more of the query's words
    /// rank first, newer ones break ties; filter by tags.
    #[tool]
    async fn recall(&self, args: Recall, call: Call) -> Result<Recalled, PluginError> {
        let scope = self.scope(call.context.as_ref())?;
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT) as usize;
        let entries: Vec<_> = self
            .entries(&scope)
            .await?
            .into_iter()
            .filter(|e| args.tags.iter().all(|t| e.tags.contains(t)))
            .collect();
        let ranked = rank::rank(entries, &args.query, limit, SystemTime::now());
        Ok(Recalled {
            entries: ranked.into_iter().map(|(e, s)| Hit::new(e, s)).collect(),
        })
    }

    /// Delete one entry from long-term memory by its id.
    #[tool]
    async fn forget(&self, args: Forget, call: Call) -> Result<Forgotten, PluginError> {
        let scope = self.scope(call.context.as_ref())?;
        if !valid_id(&args.id) {
            return Err(PluginError::invalid_params(format!(
                "invalid params: field /id: {:?} is not a memory entry id (like 20261122T211030123Z-0000)",
                args.id
            )));
        }
        let (dir, id) = (scope.dir.clone(), args.id.clone());
        let removed = tokio::task::spawn_blocking(move || store::remove(&dir, &id))
            .await
            .map_err(|e| PluginError::new(e.to_string()))??;
        if !removed {
            return Err(PluginError::with_domain_code(
                ENTRY_NOT_FOUND,
                format!("entry_not_found: no memory entry with id {}", args.id),
            )
            .with_data(json!({ "id": args.id })));
        }
        Ok(Forgotten {
            id: args.id,
            forgotten: true,
        })
    }

    /// List the tags used in long-term memory, with how many entries carry
    /// each.
    #[tool]
    async fn list_tags(&self, _args: ListTags, call: Call) -> Result<Tags, PluginError> {
        let scope = self.scope(call.context.as_ref())?;
        let entries = self.entries(&scope).await?;
        Ok(Tags {
            tags: count_tags(&entries),
            entries: entries.len(),
        })
    }

    /// Show the agent the newest retained entries.
    #[hook]
    async fn on_session_start(
        &self,
        p: SessionStartParams,
    ) -> Result<Option<SessionStartResult>, PluginError> {
        let n = self.config().project.recent_on_start as usize;
        if n == 0 {
            return Ok(None);
        }
        let scope = self.scope(Some(&p.context))?;
        let entries = self.entries(&scope).await?;
        Ok(session_start_text(&entries, n, scope.isolation)
            .map(|t| SessionStartResult { inject: Some(t) }))
    }

    /// Buffer the transcript; save it every `retain_every_n_turns` user turns.
    #[hook]
    async fn on_session_idle(&self, p: SessionIdleParams) -> Result<(), PluginError> {
        let scope = self.scope(Some(&p.context))?;
        let session = p.context.session_id.clone().unwrap_or_default();
        let every = self.config().project.retain_every_n_turns;
        let ready = {
            let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            let slot = idle
                .entry((scope.dir.clone(), session.clone()))
                .or_insert_with(|| (scope.clone(), IdleBuffer::default()));
            slot.1.push(&p.transcript, every)
        };
        if let Some(text) = ready {
            let context = format!("transcript of session {session}");
            let (entry, _) = self
                .save(&scope, &text, Some(&context), &[], Source::Transcript)
                .await?;
            log::info!(id = %entry.id, "saved the session transcript");
        }
        Ok(())
    }

    /// Ask compaction to keep what the agent retained this session in view.
    #[hook]
    async fn pre_compact(&self, p: CompactParams) -> Result<Option<ObserverResult>, PluginError> {
        let scope = self.scope(Some(&p.context))?;
        let session = p.context.session_id.clone().unwrap_or_default();
        let hints = self
            .retained
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&(scope.dir.clone(), session))
            .cloned()
            .unwrap_or_default();
        Ok((!hints.is_empty()).then_some(ObserverResult {
            retain: Some(hints),
            inject: None,
        }))
    }

    /// Save the compacted messages (not the always-keep ones, which stay).
    #[hook]
    async fn post_compact(&self, p: CompactParams) -> Result<Option<ObserverResult>, PluginError> {
        let scope = self.scope(Some(&p.context))?;
        let gone: Vec<_> = p
            .messages_being_compacted
            .iter()
            .filter(|m| !m.always_keep)
            .collect();
        if gone.is_empty() {
            return Ok(None);
        }
        let context = format!(
            "compaction ({}, {}) of session {}",
            p.strategy,
            p.trigger,
            p.context.session_id.as_deref().unwrap_or("")
        );
        let text = render_messages(gone.iter().copied());
        let (entry, _) = self
            .save(&scope, &text, Some(&context), &[], Source::Compaction)
            .await?;
        let note = format!(
            "memory-markdown saved {} compacted message(s) as entry {}; find them with memory-markdown.recall",
            gone.len(),
            entry.id
        );
        Ok(Some(ObserverResult {
            retain: Some(vec![note]),
            inject: None,
        }))
    }

    /// Take a new config (the host merges the project and operator-local
    /// halves); `-32004` naming the field when it does not validate.
    #[config]
    async fn configure(&self, config: Config) -> Result<(), PluginError> {
        config
            .check()
            .map_err(|e| PluginError::config_invalid(format!("invalid config: {e}")))?;
        log::info!(
            store = %config.project.store,
            isolation = ?config.project.isolation,
            secrets = config.system.redact_secrets.len(),
            "configured"
        );
        self.set_config(config);
        Ok(())
    }

    /// Save buffered idle transcripts before exiting.
    #[shutdown]
    async fn flush(&self) {
        let pending: Vec<_> = {
            let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            idle.drain()
                .filter_map(|((_, s), (scope, mut b))| b.take().map(|t| (scope, s, t)))
                .collect()
        };
        for (scope, session, text) in pending {
            let context = format!("transcript of session {session} (saved at shutdown)");
            if let Err(e) = self
                .save(&scope, &text, Some(&context), &[], Source::Transcript)
                .await
            {
                log::error!("could not save a buffered transcript: {e}");
            }
        }
    }
}
