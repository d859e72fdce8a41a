//! The writer task (the only owner of the plugin's stdin) and the stderr
//! capture task.

use std::sync::Arc;

use kaged_plugin_protocol::codec::{write_line, Frame, LineDecoder, LineReader};
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::sync::mpsc;

use super::Shared;
use crate::bounds::{MAX_LINE_BYTES, STDERR_LINE_KEEP};
use crate::observe::transcript::Direction;

pub(super) async fn write_loop<W: AsyncWrite + Unpin>(
    shared: Arc<Shared>,
    mut writer: W,
    mut rx: mpsc::UnboundedReceiver<Vec<u8>>,
) {
    while let Some(line) = rx.recv().await {
        if line.is_empty() {
            // The close-stdin marker (real lines always end in `\n`):
            // dropping the writer gives the plugin end of input.
            tracing::debug!(plugin = %shared.plugin, "closing the plugin's stdin");
            return;
        }
        if let Err(e) = write_line(&mut writer, &line).await {
            tracing::debug!(plugin = %shared.plugin, error = %e, "plugin stdin closed");
            return;
        }
        shared.written(line.len());
    }
}

pub(super) async fn stderr_loop(shared: Arc<Shared>, stderr: Box<dyn AsyncRead + Send + Unpin>) {
    // Never more than one line's bound buffered, and a line passing it is
    // dropped as it passes (bounds::MAX_LINE_BYTES); what is kept of a
    // line is cut to bounds::STDERR_LINE_KEEP.
    let mut lines = LineReader::with_decoder(BufReader::new(stderr), LineDecoder::new().at_once());
    while let Ok(Some(frame)) = lines.next_frame().await {
        let text = match frame {
            Frame::Line(l) => {
                let keep = l.len().min(STDERR_LINE_KEEP);
                let mut text = String::from_utf8_lossy(&l[..keep]).into_owned();
                if keep < l.len() {
                    text.push_str(&format!("… ({} bytes)", l.len()));
                }
                text
            }
            Frame::Oversize { len } => {
                format!("<stderr line passing {MAX_LINE_BYTES} bytes ({len} read) discarded>")
            }
        };
        tracing::info!(target: "kaged_plugin_stderr", plugin = %shared.plugin, "{text}");
        shared
            .cfg
            .transcript
            .record(Direction::PluginStderr, text.as_bytes());
        shared.push_stderr(text);
    }
    shared.mark_stderr_done();
}
