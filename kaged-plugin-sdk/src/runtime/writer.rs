//! The writer task of [`Plugin::serve`](super::Plugin::serve): the only
//! owner of the output stream; lines queued together leave in one write.

use tokio::io::{AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::sync::mpsc;

use super::host::Outgoing;

pub(super) async fn write_loop<W: AsyncWrite + Unpin>(
    writer: W,
    mut rx: mpsc::UnboundedReceiver<Outgoing>,
) {
    let mut w = BufWriter::with_capacity(64 * 1024, writer);
    while let Some(first) = rx.recv().await {
        let mut next = Some(first);
        while let Some(item) = next.take() {
            match item {
                Outgoing::Line(line) => {
                    if let Err(e) = w.write_all(&line).await {
                        tracing::error!("writing to the host failed: {e}");
                        return;
                    }
                }
                Outgoing::Flush(done) => {
                    let _ = w.flush().await;
                    let _ = done.send(());
                }
            }
            next = rx.try_recv().ok();
        }
        if let Err(e) = w.flush().await {
            tracing::error!("flushing to the host failed: {e}");
            return;
        }
    }
    let _ = w.flush().await;
}
