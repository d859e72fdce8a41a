//! The stderr capture task: every line of the plugin's stderr, control
//! characters escaped (`observe::visible`) and cut to
//! `bounds::STDERR_LINE_KEEP`, goes to the `last_stderr` ring; what the
//! rate limit ([`StderrGate`]) passes also goes to the operational log
//! (`tracing`, target `kaged_plugin_stderr`, tagged with the plugin's name)
//! and the wire transcript, and what it drops is counted there in one
//! `<N stderr lines dropped …>` line per episode (a warning in the log).

use std::sync::Arc;

use kaged_plugin_protocol::codec::{Frame, LineDecoder, LineReader};
use tokio::io::{AsyncRead, BufReader};
use tokio::time::Instant;

use super::stderr_gate::{Dropped, StderrGate};
use super::Shared;
use crate::bounds::{MAX_LINE_BYTES, STDERR_LINE_KEEP};
use crate::observe::transcript::Direction;
use crate::observe::visible::visible;

/// The printable form of one stderr frame, and the bytes the plugin wrote.
fn render(frame: Frame) -> (String, usize) {
    match frame {
        Frame::Line(l) => {
            // Escaping only lengthens: no more than the kept bytes of the
            // line can show.
            let raw = String::from_utf8_lossy(&l[..l.len().min(STDERR_LINE_KEEP)]);
            let mut text = String::with_capacity(raw.len().min(STDERR_LINE_KEEP) + 32);
            let mut cut = l.len() > STDERR_LINE_KEEP;
            let mut buf = [0u8; 4];
            for c in raw.chars() {
                let shown = visible(c.encode_utf8(&mut buf));
                if text.len() + shown.len() > STDERR_LINE_KEEP {
                    cut = true;
                    break;
                }
                text.push_str(&shown);
            }
            if cut {
                text.push_str(&format!("… ({} bytes)", l.len()));
            }
            (text, l.len())
        }
        Frame::Oversize { len } => (
            format!("<stderr line passing {MAX_LINE_BYTES} bytes ({len} read) discarded>"),
            len,
        ),
    }
}

/// Pass one line on: the log and the transcript.
fn pass(shared: &Shared, text: &str) {
    tracing::info!(target: "kaged_plugin_stderr", plugin = %shared.plugin, "{text}");
    shared
        .cfg
        .transcript
        .record(Direction::PluginStderr, text.as_bytes());
}

/// Say what an episode dropped, where the lines would have gone.
fn report(shared: &Shared, dropped: Dropped) {
    let text = dropped.line();
    tracing::warn!(target: "kaged_plugin_stderr", plugin = %shared.plugin, dropped = dropped.lines, "{text}");
    shared
        .cfg
        .transcript
        .record(Direction::PluginStderr, text.as_bytes());
}

pub(super) async fn stderr_loop(shared: Arc<Shared>, stderr: Box<dyn AsyncRead + Send + Unpin>) {
    // Never more than one line's bound buffered, and a line passing it is
    // dropped as it passes (bounds::MAX_LINE_BYTES).
    let mut lines = LineReader::with_decoder(BufReader::new(stderr), LineDecoder::new().at_once());
    let mut gate = StderrGate::new(shared.cfg.timeouts.stderr_window, Instant::now());
    loop {
        // While lines are being dropped, wake at the episode's end to
        // report it even if the plugin falls silent (`next_frame` keeps a
        // partial line across the cancellation: its state is the decoder's
        // and the buffer's).
        let next = match gate.episode_end() {
            Some(end) => match tokio::time::timeout_at(end, lines.next_frame()).await {
                Ok(next) => next,
                Err(_) => {
                    if let Some(d) = gate.flush(Some(Instant::now())) {
                        report(&shared, d);
                    }
                    continue;
                }
            },
            None => lines.next_frame().await,
        };
        let Ok(Some(frame)) = next else { break };
        let (text, read) = render(frame);
        let verdict = gate.admit(Instant::now(), text.len(), read);
        if let Some(d) = verdict.report {
            report(&shared, d);
        }
        if verdict.pass {
            pass(&shared, &text);
        }
        shared.push_stderr(text);
    }
    if let Some(d) = gate.flush(None) {
        report(&shared, d);
    }
    shared.mark_stderr_done();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_escaped_then_cut() {
        let (text, read) = render(Frame::Line(b"a\rb\x1b[31mc\td".to_vec()));
        assert_eq!((text.as_str(), read), ("a\\rb\\x1b[31mc\td", 11));
        // A line of control characters is cut on a whole escape.
        let (text, read) = render(Frame::Line(vec![0x07; 1000]));
        assert_eq!(read, 1000);
        let (kept, marker) = text.split_once('…').expect("cut");
        assert_eq!(kept, "\\x07".repeat(STDERR_LINE_KEEP / 4));
        assert_eq!(marker, " (1000 bytes)");
    }
}
