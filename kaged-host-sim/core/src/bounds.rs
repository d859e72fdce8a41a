//! Every memory bound of the host, in one place (architecture rule 5;
//! issue 19): what a plugin can make the host hold is bounded, and each
//! bound says what happens when a plugin reaches it. `docs/protocol.md`'s
//! generated reference lists them ([`ALL`]).

pub use kaged_plugin_protocol::codec::MAX_LINE_BYTES;

/// Bytes kept of one stderr line (in the transcript, the tracing log and
/// the `last_stderr` ring), counted after its control characters are
/// escaped (`observe::visible`); the rest is cut, marked `…`. A stderr line
/// past [`MAX_LINE_BYTES`] is not buffered: it is noted as discarded.
pub const STDERR_LINE_KEEP: usize = 2048;

/// Stderr lines kept for `plugin.crashed {last_stderr}` (every line, the
/// rate limit below or not: the last lines before a crash say why).
pub const STDERR_RING: usize = 50;

/// Stderr lines of one plugin passed on at once to the daemon's log and the
/// wire transcript before the rate below applies (a token bucket of this
/// size, refilled at [`STDERR_LINES_PER_SEC`]). A plugin's start-up chatter
/// and a stack trace of a few hundred frames pass whole; a plugin printing
/// in a loop is cut after a thousand lines. Past it lines are dropped and
/// counted: one `<N stderr lines dropped …>` line says how many, once the
/// flood has lasted the rate's window (one real second, `Timeouts::
/// stderr_window`) or ended, so a flood makes at most one such line a
/// second. `last_stderr` still gets every line.
pub const STDERR_BURST_LINES: usize = 1000;

/// Stderr lines of one plugin passed on per second past the burst: the
/// notification limit's 100 (ADDENDUM §8). A plugin logging at info level
/// stays far below it; the issue 45 probe wrote 100 000 a second.
pub const STDERR_LINES_PER_SEC: usize = 100;

/// Bytes (as printed, after escaping and cutting) of one plugin's stderr
/// passed on at once before [`STDERR_BYTES_PER_SEC`] applies: a thousand
/// lines of 256 bytes, or 128 lines cut at [`STDERR_LINE_KEEP`].
pub const STDERR_BURST_BYTES: usize = 256 * 1024;

/// Bytes of one plugin's stderr passed on per second past the burst: a
/// hundred lines of 160 bytes. With the line rate it bounds what one plugin
/// adds to the daemon's log: 16 KiB a second past the burst (the issue 45
/// probe added 21 MiB a second), whatever its lines' length.
pub const STDERR_BYTES_PER_SEC: usize = 16 * 1024;

/// Chars of a non-JSON stdout line kept in `plugin.stdout_noise`.
pub const NOISE_CHARS: usize = 200;

/// Plugin→host requests (storage) answered concurrently; past it a request
/// is answered `-32005 resource_busy` at once and `plugin.request_flood`
/// is audited (once until the plugin is back under the bound).
pub const MAX_PLUGIN_REQUESTS_IN_FLIGHT: usize = 64;

/// Bytes queued for a plugin's stdin that it has not read yet; past it the
/// plugin is killed (`plugin.protocol_violation {violation_type:
/// "stdin_backlog"}`): a plugin that sends requests and never reads the
/// answers would otherwise grow the host without bound.
pub const MAX_STDIN_BACKLOG_BYTES: usize = 16 * 1024 * 1024;

/// Notifications queued for each subscriber, and audit records for each
/// audit-stream subscriber: a slow subscriber misses the oldest (it is
/// told how many) and never grows the host.
pub const FANOUT_QUEUE: usize = 1024;

/// Chars kept of a line that is not JSON (noise, stderr) in a transcript.
pub const TRANSCRIPT_RAW_CHARS: usize = 4096;

/// Records an in-memory transcript keeps: past it the oldest go.
pub const TRANSCRIPT_MEMORY_RECORDS: usize = 100_000;

/// Bytes of messages an in-memory transcript keeps: past it the oldest go.
pub const TRANSCRIPT_MEMORY_BYTES: usize = 64 * 1024 * 1024;

/// Every bound: (name, value, unit, what happens at it), for the generated
/// reference.
pub const ALL: &[(&str, usize, &str, &str)] = &[
    ("MAX_LINE_BYTES", MAX_LINE_BYTES, "bytes", "a stdout line passing it kills the plugin at once (`protocol.oversize_message`), newline or not; a stderr line passing it is discarded"),
    ("STDERR_LINE_KEEP", STDERR_LINE_KEEP, "bytes", "the rest of a stderr line is cut"),
    ("STDERR_RING", STDERR_RING, "lines", "older stderr lines leave `last_stderr`"),
    ("STDERR_BURST_LINES", STDERR_BURST_LINES, "lines", "stderr lines past it (and past the rate) are dropped from the log and the transcript, counted in one `<N stderr lines dropped …>` line a second at most"),
    ("STDERR_LINES_PER_SEC", STDERR_LINES_PER_SEC, "lines a second", "the rate the burst refills at; past it lines are dropped and counted"),
    ("STDERR_BURST_BYTES", STDERR_BURST_BYTES, "bytes", "as the line burst, counted in bytes as printed"),
    ("STDERR_BYTES_PER_SEC", STDERR_BYTES_PER_SEC, "bytes a second", "as the line rate, counted in bytes as printed"),
    ("NOISE_CHARS", NOISE_CHARS, "chars", "the rest of a noise line is cut in `plugin.stdout_noise`"),
    ("MAX_PLUGIN_REQUESTS_IN_FLIGHT", MAX_PLUGIN_REQUESTS_IN_FLIGHT, "requests", "the next one is answered `-32005` at once; `plugin.request_flood`"),
    ("MAX_STDIN_BACKLOG_BYTES", MAX_STDIN_BACKLOG_BYTES, "bytes", "the plugin is killed (`stdin_backlog` violation)"),
    ("FANOUT_QUEUE", FANOUT_QUEUE, "messages", "a slow notification or audit-stream subscriber misses the oldest"),
    ("TRANSCRIPT_RAW_CHARS", TRANSCRIPT_RAW_CHARS, "chars", "the rest of a non-JSON line is cut in the transcript"),
    ("TRANSCRIPT_MEMORY_RECORDS", TRANSCRIPT_MEMORY_RECORDS, "records", "an in-memory transcript drops its oldest"),
    ("TRANSCRIPT_MEMORY_BYTES", TRANSCRIPT_MEMORY_BYTES, "bytes", "an in-memory transcript drops its oldest"),
];

#[cfg(test)]
mod tests {
    use crate::observe::audit::AuditEvent;

    /// Every event the table names (a backticked `a.b` word) is an audit
    /// event the host emits, spelled as it emits it.
    #[test]
    fn the_events_the_table_names_exist() {
        let mut named = 0;
        for (bound, _, _, what) in super::ALL {
            for word in what.split('`').skip(1).step_by(2) {
                if word.contains('.')
                    && word
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || "._".contains(c))
                {
                    named += 1;
                    assert!(
                        AuditEvent::parse(word).is_some(),
                        "{bound}: no audit event {word}"
                    );
                }
            }
        }
        assert!(named >= 2, "the table names the oversize and flood events");
    }
}
