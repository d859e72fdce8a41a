//! Line framing: one JSON message per `\n`-terminated line, at most 4 MiB.
//!
//! The framing itself is the protocol crate's
//! ([`kaged_plugin_protocol::codec`], re-exported here); this module adds
//! the async side over tokio: [`LineReader`] reads [`Frame`]s from a
//! buffered reader and [`write_line`] writes one line. Used by both the
//! plugin runtime and the host simulator.

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};

pub use kaged_plugin_protocol::codec::*;

/// Reads [`Frame`]s from any buffered async reader with a [`LineDecoder`].
/// Partial lines are kept until their newline arrives; memory use is bounded
/// by the limit.
///
/// ```
/// # tokio_test_block(async {
/// use kaged_plugin_sdk::codec::{Frame, LineReader};
/// let mut r = LineReader::new(&b"{\"a\":1}\npartial"[..]);
/// assert_eq!(r.next_frame().await.unwrap(), Some(Frame::Line(b"{\"a\":1}".to_vec())));
/// assert_eq!(r.next_frame().await.unwrap(), Some(Frame::Line(b"partial".to_vec())));
/// assert_eq!(r.next_frame().await.unwrap(), None);
/// # });
/// # fn tokio_test_block(f: impl std::future::Future<Output = ()>) {
/// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f) }
/// ```
pub struct LineReader<R> {
    inner: R,
    decoder: LineDecoder,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    /// A reader with the protocol's 4 MiB limit.
    pub fn new(inner: R) -> LineReader<R> {
        LineReader::with_limit(inner, MAX_LINE_BYTES)
    }

    /// A reader with another limit (tests use small ones).
    pub fn with_limit(inner: R, limit: usize) -> LineReader<R> {
        LineReader {
            inner,
            decoder: LineDecoder::with_limit(limit),
        }
    }

    /// A reader splitting with `decoder` (a [`LineDecoder::at_once`] one,
    /// say).
    pub fn with_decoder(inner: R, decoder: LineDecoder) -> LineReader<R> {
        LineReader { inner, decoder }
    }

    /// The underlying reader, e.g. to see whether it holds more input
    /// already read (`tokio::io::BufReader::buffer`).
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The next frame, or `None` at end of input.
    pub async fn next_frame(&mut self) -> std::io::Result<Option<Frame>> {
        loop {
            let chunk = self.inner.fill_buf().await?;
            if chunk.is_empty() {
                return Ok(self.decoder.finish());
            }
            let (used, frame) = self.decoder.feed(chunk);
            self.inner.consume(used);
            if frame.is_some() {
                return Ok(frame);
            }
        }
    }
}

/// Write one already-encoded line and flush.
pub async fn write_line<W: AsyncWrite + Unpin>(w: &mut W, line: &[u8]) -> std::io::Result<()> {
    w.write_all(line).await?;
    w.flush().await
}
