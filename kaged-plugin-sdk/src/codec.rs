//! Line framing: one JSON message per `\n`-terminated line, at most 4 MiB.
//!
//! Written once and used by both the plugin runtime and the host simulator.

use serde::Serialize;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};

/// The largest line either side accepts or writes: 4 MiB, newline excluded.
pub const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// One unit read from a line-delimited stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// A complete line, without its terminating `\n` (a final unterminated
    /// line at end of input is delivered too).
    Line(Vec<u8>),
    /// A line longer than the limit; its bytes were discarded up to and
    /// including the next `\n`. `len` counts the discarded bytes.
    Oversize {
        /// Bytes discarded (at least `limit + 1`).
        len: usize,
    },
}

/// Reads [`Frame`]s from any buffered async reader. Partial lines are kept
/// until their newline arrives; memory use is bounded by the limit.
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
    limit: usize,
    buf: Vec<u8>,
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
            limit,
            buf: Vec::new(),
        }
    }

    /// The underlying reader, e.g. to see whether it holds more input
    /// already read (`tokio::io::BufReader::buffer`).
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The next frame, or `None` at end of input.
    pub async fn next_frame(&mut self) -> std::io::Result<Option<Frame>> {
        let mut discarding: Option<usize> = None;
        loop {
            let chunk = self.inner.fill_buf().await?;
            if chunk.is_empty() {
                // End of input.
                if let Some(len) = discarding {
                    return Ok(Some(Frame::Oversize { len }));
                }
                if self.buf.is_empty() {
                    return Ok(None);
                }
                return Ok(Some(Frame::Line(std::mem::take(&mut self.buf))));
            }
            match chunk.iter().position(|&b| b == b'\n') {
                Some(pos) => {
                    let frame = match discarding {
                        Some(len) => Frame::Oversize { len: len + pos },
                        None if self.buf.len() + pos > self.limit => Frame::Oversize {
                            len: self.buf.len() + pos,
                        },
                        None => {
                            self.buf.extend_from_slice(&chunk[..pos]);
                            Frame::Line(std::mem::take(&mut self.buf))
                        }
                    };
                    self.inner.consume(pos + 1);
                    self.buf.clear();
                    return Ok(Some(frame));
                }
                None => {
                    let n = chunk.len();
                    match discarding.as_mut() {
                        Some(len) => *len += n,
                        None if self.buf.len() + n > self.limit => {
                            discarding = Some(self.buf.len() + n);
                            self.buf = Vec::new();
                        }
                        None => self.buf.extend_from_slice(chunk),
                    }
                    self.inner.consume(n);
                }
            }
        }
    }
}

/// A message that would make a line over the limit.
#[derive(Debug, thiserror::Error)]
pub enum EncodeError {
    /// The serialized message is larger than the limit.
    #[error("message of {len} bytes exceeds the {limit}-byte line limit")]
    TooLarge {
        /// The serialized length.
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// Serialization itself failed.
    #[error("could not serialize message: {0}")]
    Json(#[from] serde_json::Error),
}

/// Serialize `msg` as one line (with its `\n`), refusing lines over
/// [`MAX_LINE_BYTES`].
///
/// ```
/// let line = kaged_plugin_sdk::codec::encode_line(&serde_json::json!({"a": 1})).unwrap();
/// assert_eq!(line, b"{\"a\":1}\n");
/// ```
pub fn encode_line<T: Serialize + ?Sized>(msg: &T) -> Result<Vec<u8>, EncodeError> {
    encode_line_with_limit(msg, MAX_LINE_BYTES)
}

/// [`encode_line`] with another limit.
pub fn encode_line_with_limit<T: Serialize + ?Sized>(
    msg: &T,
    limit: usize,
) -> Result<Vec<u8>, EncodeError> {
    let mut out = serde_json::to_vec(msg)?;
    if out.len() > limit {
        return Err(EncodeError::TooLarge {
            len: out.len(),
            limit,
        });
    }
    out.push(b'\n');
    Ok(out)
}

/// Write one already-encoded line and flush.
pub async fn write_line<W: AsyncWrite + Unpin>(w: &mut W, line: &[u8]) -> std::io::Result<()> {
    w.write_all(line).await?;
    w.flush().await
}
