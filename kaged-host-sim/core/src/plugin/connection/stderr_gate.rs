//! The stderr rate limit of one plugin: two token buckets, lines and bytes
//! (`bounds::STDERR_BURST_LINES` refilled at `STDERR_LINES_PER_SEC`,
//! `STDERR_BURST_BYTES` at `STDERR_BYTES_PER_SEC`, per window of
//! `Timeouts::stderr_window`). A line that finds either bucket short starts
//! a drop *episode*: every line is dropped and counted until the episode
//! has lasted one window, then the count is reported once ([`Dropped`])
//! and lines are judged by the buckets again (refilled meanwhile). A flood
//! therefore makes at most one report per window, whatever its rate.

use std::time::Duration;

use tokio::time::Instant;

use crate::bounds::{
    STDERR_BURST_BYTES, STDERR_BURST_LINES, STDERR_BYTES_PER_SEC, STDERR_LINES_PER_SEC,
};

/// What an episode dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dropped {
    /// Lines dropped.
    pub(crate) lines: u64,
    /// Bytes of those lines, as the plugin wrote them.
    pub(crate) bytes: u64,
}

impl Dropped {
    /// The line that reports it, in the log and the transcript.
    pub(crate) fn line(&self) -> String {
        format!(
            "<{} stderr lines dropped ({} bytes): past {STDERR_LINES_PER_SEC} lines and {STDERR_BYTES_PER_SEC} bytes a second after bursts of {STDERR_BURST_LINES} lines and {STDERR_BURST_BYTES} bytes>",
            self.lines, self.bytes
        )
    }
}

/// What to do with one line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Verdict {
    /// An episode ended before this line: report it first.
    pub(crate) report: Option<Dropped>,
    /// Pass the line on (else it is dropped and counted).
    pub(crate) pass: bool,
}

#[derive(Debug)]
struct Episode {
    started: Instant,
    dropped: Dropped,
}

/// One token bucket.
#[derive(Debug)]
struct Bucket {
    tokens: f64,
    burst: f64,
    per_window: f64,
}

impl Bucket {
    fn new(burst: usize, per_window: usize) -> Bucket {
        Bucket {
            tokens: burst as f64,
            burst: burst as f64,
            per_window: per_window as f64,
        }
    }

    fn refill(&mut self, windows: f64) {
        self.tokens = (self.tokens + windows * self.per_window).min(self.burst);
    }
}

/// The gate (see the module docs).
#[derive(Debug)]
pub(crate) struct StderrGate {
    window: Duration,
    lines: Bucket,
    bytes: Bucket,
    refilled: Instant,
    episode: Option<Episode>,
}

impl StderrGate {
    /// A full gate: the bursts are available at once.
    pub(crate) fn new(window: Duration, now: Instant) -> StderrGate {
        StderrGate {
            window: window.max(Duration::from_millis(1)),
            lines: Bucket::new(STDERR_BURST_LINES, STDERR_LINES_PER_SEC),
            bytes: Bucket::new(STDERR_BURST_BYTES, STDERR_BYTES_PER_SEC),
            refilled: now,
            episode: None,
        }
    }

    fn refill(&mut self, now: Instant) {
        let windows = now.duration_since(self.refilled).as_secs_f64() / self.window.as_secs_f64();
        self.lines.refill(windows);
        self.bytes.refill(windows);
        self.refilled = now;
    }

    /// When the running episode may be reported (`None`: none is running):
    /// the stderr task reports it then if no line comes first.
    pub(crate) fn episode_end(&self) -> Option<Instant> {
        self.episode.as_ref().map(|e| e.started + self.window)
    }

    /// End the episode if it has lasted its window by `now`, or at once
    /// when `now` is `None` (the end of stderr); its count to report.
    pub(crate) fn flush(&mut self, now: Option<Instant>) -> Option<Dropped> {
        let due = match (now, self.episode_end()) {
            (_, None) => false,
            (None, Some(_)) => true,
            (Some(now), Some(end)) => now >= end,
        };
        if due {
            self.episode.take().map(|e| e.dropped)
        } else {
            None
        }
    }

    /// Judge a line arriving at `now`, `printed` bytes as it would be
    /// passed on, `read` bytes as the plugin wrote it.
    pub(crate) fn admit(&mut self, now: Instant, printed: usize, read: usize) -> Verdict {
        self.refill(now);
        let report = self.flush(Some(now));
        let cost = printed as f64;
        let pass = self.episode.is_none() && self.lines.tokens >= 1.0 && self.bytes.tokens >= cost;
        if pass {
            self.lines.tokens -= 1.0;
            self.bytes.tokens -= cost;
        } else {
            let episode = self.episode.get_or_insert(Episode {
                started: now,
                dropped: Dropped { lines: 0, bytes: 0 },
            });
            episode.dropped.lines += 1;
            episode.dropped.bytes += read as u64;
        }
        Verdict { report, pass }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: Duration = Duration::from_secs(1);

    /// Lines passed and reports made when `n` lines of `len` bytes arrive
    /// `gap` apart, and stderr then ends.
    fn run(n: usize, len: usize, gap: Duration) -> (usize, Vec<Dropped>) {
        let t0 = Instant::now();
        let mut g = StderrGate::new(W, t0);
        let (mut passed, mut reports) = (0, Vec::new());
        for i in 0..n {
            let now = t0 + gap * u32::try_from(i).expect("few lines");
            if let Some(end) = g.episode_end().filter(|end| *end <= now) {
                reports.extend(g.flush(Some(end)));
            }
            let v = g.admit(now, len, len);
            reports.extend(v.report);
            passed += usize::from(v.pass);
        }
        reports.extend(g.flush(None));
        (passed, reports)
    }

    #[test]
    fn a_burst_passes_whole_and_a_flood_is_counted_once_a_window() {
        // 200 000 lines at once: the burst passes, one report counts the rest.
        let (passed, reports) = run(200_000, 20, Duration::ZERO);
        assert_eq!(passed, STDERR_BURST_LINES);
        assert_eq!(reports.len(), 1);
        assert_eq!(reports[0].lines as usize, 200_000 - STDERR_BURST_LINES);
        assert_eq!(
            reports[0].bytes as usize,
            20 * (200_000 - STDERR_BURST_LINES)
        );
        // 10 000 lines a second for 10 seconds: the burst, then the rate;
        // one report a window, and every line either passed or counted.
        let (passed, reports) = run(100_000, 20, Duration::from_micros(100));
        let counted: u64 = reports.iter().map(|d| d.lines).sum();
        assert_eq!(passed + counted as usize, 100_000);
        assert!(reports.len() <= 11, "{}", reports.len());
        assert!(
            passed <= STDERR_BURST_LINES + 10 * STDERR_LINES_PER_SEC + 1,
            "{passed}"
        );
        assert!(
            passed >= STDERR_BURST_LINES + 8 * STDERR_LINES_PER_SEC,
            "{passed}"
        );
    }

    #[test]
    fn long_lines_are_limited_by_bytes_and_a_slow_writer_never() {
        let (passed, reports) = run(1000, 2048, Duration::ZERO);
        assert_eq!(passed, STDERR_BURST_BYTES / 2048);
        assert_eq!(reports.len(), 1);
        // Fifty lines a second for a minute: under both rates, all pass.
        let (passed, reports) = run(3000, 100, Duration::from_millis(20));
        assert_eq!((passed, reports.len()), (3000, 0));
    }

    #[test]
    fn the_report_says_how_many() {
        let line = Dropped {
            lines: 12,
            bytes: 345,
        }
        .line();
        assert!(
            line.starts_with("<12 stderr lines dropped (345 bytes): past 100 lines"),
            "{line}"
        );
    }
}
