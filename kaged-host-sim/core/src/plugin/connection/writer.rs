//! The writer task: the only owner of the plugin's stdin.

use std::sync::Arc;

use kaged_plugin_protocol::codec::write_line;
use tokio::io::AsyncWrite;
use tokio::sync::mpsc;

use super::Shared;

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
