//! The async side of the line framing, over tokio (cargo feature `tokio`):
//! [`LineReader`] reads [`Frame`]s from a buffered async reader with a
//! [`LineDecoder`] and [`write_line`] writes one line. Used by both the
//! plugin runtime (`kaged-plugin-sdk`) and the host simulator.

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};

use super::{Frame, LineDecoder, MAX_LINE_BYTES};

/// Reads [`Frame`]s from any buffered async reader with a [`LineDecoder`].
/// Partial lines are kept until their newline arrives; memory use is bounded
/// by the limit.
///
/// ```
/// # tokio_test_block(async {
/// use kaged_plugin_protocol::codec::{Frame, LineReader};
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

#[cfg(test)]
mod tests {
    use super::*;

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime")
            .block_on(f)
    }

    #[test]
    fn lines_in_small_chunks_and_an_oversize_one() {
        block_on(async {
            let input: &[u8] = b"ab\ncdefgh\nij";
            let reader = tokio::io::BufReader::with_capacity(2, input);
            let mut r = LineReader::with_limit(reader, 4);
            let mut frames = Vec::new();
            while let Some(f) = r.next_frame().await.expect("read") {
                frames.push(f);
            }
            assert_eq!(
                frames,
                [
                    Frame::Line(b"ab".to_vec()),
                    Frame::Oversize { len: 6 },
                    Frame::Line(b"ij".to_vec()),
                ]
            );
        });
    }

    #[test]
    fn write_line_writes_the_bytes() {
        block_on(async {
            let mut out = Vec::new();
            write_line(&mut out, b"{}\n").await.expect("write");
            assert_eq!(out, b"{}\n");
        });
    }
}
