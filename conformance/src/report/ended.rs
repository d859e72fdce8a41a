//! How a case's last wait on the plugin ended ([`EndedBy`]).

use serde::Serialize;

/// What ended a case's last wait on the plugin, derived from its wire
/// transcript and audit events (`runner::ended`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EndedBy {
    /// The answer to what the host sent.
    Answer,
    /// An answer to nothing the host sent, which ended the wait at once.
    StrayAnswer,
    /// The budget ran out with the request unanswered.
    Timeout,
    /// The plugin exited (or closed stdout) before answering.
    Exit,
    /// Judged without waiting on the plugin (the manifest, the run's record).
    NoWait,
}

impl EndedBy {
    /// Its name in reports.
    pub const fn as_str(self) -> &'static str {
        match self {
            EndedBy::Answer => "answer",
            EndedBy::StrayAnswer => "stray_answer",
            EndedBy::Timeout => "timeout",
            EndedBy::Exit => "exit",
            EndedBy::NoWait => "no_wait",
        }
    }
}
