//! The kinds of `plugin.protocol_violation` as data: the `violation_type`
//! the host writes, whether the plugin is killed for it, and when it is
//! raised. [`Violation::ALL`] is the one place the names are written; the
//! conformance suite's verdicts and `docs/protocol.md` read them from here.
//!
//! ```
//! use kaged_host_core::audit::Violation;
//! assert_eq!(Violation::UnknownResponseId.as_str(), "unknown_response_id");
//! assert_eq!(Violation::parse("batch"), Some(Violation::Batch));
//! assert!(!Violation::AnswerToNotification.is_fatal());
//! ```

crate::names::name_table! {
    /// A `violation_type` of `plugin.protocol_violation`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum Violation {
        /// Every kind, in table order.
        const ALL;
        /// The `violation_type` as written in the audit log.
        fn as_str;
        /// When it is raised (the doc comment).
        fn description = raw;
        /// The kind with this `violation_type`.
        fn parse;
        columns ViolationColumns {
            /// Whether the plugin is killed for it after the handshake
            /// (before `initialized` every violation kills it).
            is_fatal: bool,
        }
    }
    /// The plugin wrote a message before the host sent `initialize`.
    MessageBeforeInitialize => "message_before_initialize" { is_fatal: true },
    /// The plugin sent a request or notification (or a batch, or an invalid message) before `initialized`.
    MessageBeforeInitialized => "message_before_initialized" { is_fatal: true },
    /// The plugin sent a JSON array (batches are forbidden both ways). An array answering a batch the host sent on the raw channel is judged by that probe instead. After the handshake it is answered `-32600` with id null.
    Batch => "batch" { is_fatal: false },
    /// A JSON object that is not JSON-RPC 2.0. After the handshake the matching call fails with `-32603`, otherwise it is answered `-32600`.
    InvalidMessage => "invalid_message" { is_fatal: false },
    /// An answer whose id matches no request the host sent, or a second answer to one. (A late answer to a request the host gave up on, timed out or cancelled, is dropped without a violation.)
    UnknownResponseId => "unknown_response_id" { is_fatal: false },
    /// An answer with id null or no id when no request the host sent could have prompted one: notifications get no answer.
    AnswerToNotification => "answer_to_notification" { is_fatal: false },
    /// A request from the plugin whose id is not an integer, or not greater than its previous request's, or whose first request's id is not 1 (ids are monotonically increasing integers from 1, per direction).
    RequestIdNotIncreasing => "request_id_not_increasing" { is_fatal: false },
    /// More than `MAX_STDIN_BACKLOG_BYTES` (16 MiB) queued for the plugin's stdin and not read: a plugin that sends requests and never reads the answers. Fatal.
    StdinBacklog => "stdin_backlog" { is_fatal: true },
}
