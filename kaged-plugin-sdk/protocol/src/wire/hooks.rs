//! Lifecycle hooks (ADR-0023), messages and the compactor contract
//! (ADR-0024, ADDENDUM §4-6).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::context::PluginCallContext;

/// The closed set of lifecycle hooks.
///
/// ```
/// use kaged_plugin_protocol::HookName;
/// assert_eq!(HookName::PreCompact.method(), "kaged.hook.pre_compact");
/// assert_eq!(HookName::parse("on_session_idle"), Some(HookName::OnSessionIdle));
/// assert!(HookName::OnSessionStart.primary_only());
/// ```
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum HookName {
    /// Before the first message of a session reaches the LLM (primary only).
    OnSessionStart,
    /// When the session goes idle (primary only).
    OnSessionIdle,
    /// Before the compaction strategy runs (per agent).
    PreCompact,
    /// After the compaction strategy ran (per agent).
    PostCompact,
}

impl HookName {
    /// Every hook, in the spec's order.
    pub const ALL: [HookName; 4] = [
        HookName::OnSessionStart,
        HookName::OnSessionIdle,
        HookName::PreCompact,
        HookName::PostCompact,
    ];

    /// The manifest name (`on_session_start`).
    pub const fn as_str(self) -> &'static str {
        match self {
            HookName::OnSessionStart => "on_session_start",
            HookName::OnSessionIdle => "on_session_idle",
            HookName::PreCompact => "pre_compact",
            HookName::PostCompact => "post_compact",
        }
    }

    /// The JSON-RPC method the host calls (`kaged.hook.on_session_start`).
    pub const fn method(self) -> &'static str {
        match self {
            HookName::OnSessionStart => "kaged.hook.on_session_start",
            HookName::OnSessionIdle => "kaged.hook.on_session_idle",
            HookName::PreCompact => "kaged.hook.pre_compact",
            HookName::PostCompact => "kaged.hook.post_compact",
        }
    }

    /// The hook with this manifest name.
    pub fn parse(name: &str) -> Option<HookName> {
        HookName::ALL.into_iter().find(|h| h.as_str() == name)
    }

    /// The hook called through this method name.
    pub fn from_method(method: &str) -> Option<HookName> {
        HookName::ALL.into_iter().find(|h| h.method() == method)
    }

    /// Whether the hook fires only on the primary agent.
    pub const fn primary_only(self) -> bool {
        matches!(self, HookName::OnSessionStart | HookName::OnSessionIdle)
    }
}

impl std::fmt::Display for HookName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MessageRole {
    /// The system prompt.
    System,
    /// The operator.
    User,
    /// The model.
    Assistant,
    /// A tool result.
    Tool,
}

impl MessageRole {
    /// The wire name (`system`, `user`, `assistant`, `tool`).
    ///
    /// ```
    /// use kaged_plugin_protocol::MessageRole;
    /// for role in [MessageRole::System, MessageRole::User, MessageRole::Assistant, MessageRole::Tool] {
    ///     assert_eq!(serde_json::to_value(role).unwrap(), role.as_str());
    /// }
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            MessageRole::System => "system",
            MessageRole::User => "user",
            MessageRole::Assistant => "assistant",
            MessageRole::Tool => "tool",
        }
    }
}

/// A message in a transcript or compaction list (ADDENDUM §4). Unknown
/// fields are preserved untouched.
///
/// ```
/// use kaged_plugin_protocol::MessageRole;
/// use kaged_plugin_protocol::Message;
/// let m: Message = serde_json::from_str(
///     r#"{"id":"m1","role":"user","content":"hi","always_keep":true,"tokens":3}"#).unwrap();
/// assert!(m.always_keep && m.role == MessageRole::User);
/// assert_eq!(m.extra["tokens"], 3);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Message {
    /// The message id.
    pub id: String,
    /// The author role.
    pub role: MessageRole,
    /// The text.
    pub content: String,
    /// Part of the always-keep set: a compactor must not drop it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub always_keep: bool,
    /// Any other fields, preserved.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Message {
    /// A message with no extra fields.
    pub fn new(id: impl Into<String>, role: MessageRole, content: impl Into<String>) -> Message {
        Message {
            id: id.into(),
            role,
            content: content.into(),
            always_keep: false,
            extra: Map::new(),
        }
    }

    /// Mark the message always-keep.
    pub fn keep(mut self) -> Message {
        self.always_keep = true;
        self
    }
}

/// `on_session_start` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SessionStartParams {
    /// The call context (fully populated for hooks).
    #[serde(rename = "_context")]
    pub context: PluginCallContext,
}

/// `on_session_idle` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SessionIdleParams {
    /// The call context.
    #[serde(rename = "_context")]
    pub context: PluginCallContext,
    /// The session's messages since start (or since the last idle fire).
    pub transcript: Transcript,
}

/// An idle transcript: an array of messages, or (older hosts) a plain
/// string handed to the plugin as-is (ADDENDUM §4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Transcript {
    /// The current shape.
    Messages(Vec<Message>),
    /// A plain string from an older host.
    Text(String),
}

/// The role a plugin is called in for one compaction (ADDENDUM §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PluginRole {
    /// May observe; may inject or retain content.
    Observer,
    /// The agent's designated compactor: replaces the message list.
    Compactor,
}

impl PluginRole {
    /// The manifest spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            PluginRole::Observer => "observer",
            PluginRole::Compactor => "compactor",
        }
    }
}

/// `pre_compact` / `post_compact` params (ADDENDUM §5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CompactParams {
    /// The call context.
    #[serde(rename = "_context")]
    pub context: PluginCallContext,
    /// `compactor` only for the agent's designated compactor.
    pub role: PluginRole,
    /// The messages the strategy is compacting.
    pub messages_being_compacted: Vec<Message>,
    /// The messages that stay.
    pub messages_remaining: Vec<Message>,
    /// The configured strategy (`summarize`, `drop`, ...).
    pub strategy: String,
    /// Why compaction runs (`threshold_crossed`, ...).
    pub trigger: String,
}

/// The `on_session_start` answer: optional text to prepend to the prompt.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct SessionStartResult {
    /// Text to inject; the host wraps it in `<plugin:NAME>` delimiters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inject: Option<String>,
}

/// An observer's answer to `pre_compact` / `post_compact`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct ObserverResult {
    /// Strings to retain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retain: Option<Vec<String>>,
    /// Text to inject.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inject: Option<String>,
}

/// The designated compactor's answer to `pre_compact` (ADR-0024).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CompactorResult {
    /// Must be `compactor`.
    pub role: PluginRole,
    /// The full new message list.
    pub messages: Vec<Message>,
    /// Ids of compacted messages to mark superseded.
    pub superseded: Vec<String>,
    /// Human-readable summary for the audit log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}
