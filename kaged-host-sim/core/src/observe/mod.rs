//! What the host records while it runs plugins: the audit log, the wire
//! transcript, the generated protocol reference, and error chains flattened
//! to one line.

pub mod audit;
mod audit_event;
pub mod golden;
mod jsonl;
pub mod last_words;
pub mod normal;
pub mod reference;
mod request_scope;
pub mod transcript;
pub mod violation;
pub mod visible;

pub use audit::{AuditEvent, AuditLog, AuditRecord};
pub use transcript::{Direction, Transcript, TranscriptRecord};
