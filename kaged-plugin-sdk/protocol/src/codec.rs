//! Line framing: one JSON message per `\n`-terminated line, at most 4 MiB.
//!
//! Written once and used by both the plugin runtime and the host simulator.
//! [`LineDecoder`] splits bytes into frames and [`encode_line`] makes a
//! line, without any I/O. With the cargo feature `tokio`, `LineReader`
//! reads frames from an async stream with a decoder and `write_line` writes
//! one (the SDK turns the feature on; a host enables it too).

use serde::Serialize;

#[cfg(feature = "tokio")]
mod tokio_io;
#[cfg(feature = "tokio")]
pub use tokio_io::{write_line, LineReader};

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

/// Splits a byte stream into [`Frame`]s, without doing any I/O: feed it the
/// bytes as they arrive, in chunks of any size. Partial lines are kept until
/// their newline arrives; memory use is bounded by the limit. The async
/// `LineReader` (feature `tokio`) drives one over a reader.
///
/// ```
/// use kaged_plugin_protocol::codec::{Frame, LineDecoder};
/// let mut d = LineDecoder::new();
/// let input = b"{\"a\":1}\npartial";
/// let (used, frame) = d.feed(input);
/// assert_eq!((used, frame), (8, Some(Frame::Line(b"{\"a\":1}".to_vec()))));
/// assert_eq!(d.feed(&input[used..]), (7, None));
/// assert_eq!(d.finish(), Some(Frame::Line(b"partial".to_vec())));
/// assert_eq!(d.finish(), None);
/// ```
#[derive(Debug, Clone)]
pub struct LineDecoder {
    limit: usize,
    buf: Vec<u8>,
    /// Bytes of an oversize line discarded so far (its newline not seen yet).
    discarding: Option<usize>,
    /// Report an oversize line as soon as it passes the limit
    /// ([`LineDecoder::at_once`]).
    at_once: bool,
}

impl Default for LineDecoder {
    fn default() -> LineDecoder {
        LineDecoder::new()
    }
}

impl LineDecoder {
    /// A decoder with the protocol's 4 MiB limit.
    pub fn new() -> LineDecoder {
        LineDecoder::with_limit(MAX_LINE_BYTES)
    }

    /// A decoder with another limit (tests use small ones).
    pub fn with_limit(limit: usize) -> LineDecoder {
        LineDecoder {
            limit,
            buf: Vec::new(),
            discarding: None,
            at_once: false,
        }
    }

    /// Report an oversize line as soon as it passes the limit, with the
    /// bytes seen so far as its `len`, rather than when its newline
    /// arrives: a peer streaming an endless line is caught at the limit
    /// (the host kills such a plugin there). The rest of the line is
    /// discarded silently, up to and including its newline.
    ///
    /// ```
    /// use kaged_plugin_protocol::codec::{Frame, LineDecoder};
    /// let mut d = LineDecoder::with_limit(4).at_once();
    /// assert_eq!(d.feed(b"abc"), (3, None));
    /// assert_eq!(d.feed(b"defgh"), (5, Some(Frame::Oversize { len: 8 })));
    /// assert_eq!(d.feed(b"ij\nok\n"), (3, None));
    /// assert_eq!(d.feed(b"ok\n"), (3, Some(Frame::Line(b"ok".to_vec()))));
    /// ```
    pub fn at_once(mut self) -> LineDecoder {
        self.at_once = true;
        self
    }

    /// Take bytes from `chunk` up to and including the first `\n`, or all of
    /// it when it holds none. Returns how many bytes were taken (the caller
    /// gives the rest again later) and the frame that newline completed.
    pub fn feed(&mut self, chunk: &[u8]) -> (usize, Option<Frame>) {
        match chunk.iter().position(|&b| b == b'\n') {
            Some(pos) => {
                let frame = match self.discarding.take() {
                    // Already reported when it passed the limit.
                    Some(_) if self.at_once => {
                        self.buf.clear();
                        return (pos + 1, None);
                    }
                    Some(len) => Frame::Oversize { len: len + pos },
                    None if self.buf.len() + pos > self.limit => Frame::Oversize {
                        len: self.buf.len() + pos,
                    },
                    None => {
                        self.buf.extend_from_slice(&chunk[..pos]);
                        Frame::Line(std::mem::take(&mut self.buf))
                    }
                };
                self.buf.clear();
                (pos + 1, Some(frame))
            }
            None => {
                let n = chunk.len();
                match self.discarding.as_mut() {
                    Some(len) => *len += n,
                    None if self.buf.len() + n > self.limit => {
                        let len = self.buf.len() + n;
                        self.discarding = Some(len);
                        self.buf = Vec::new();
                        if self.at_once {
                            return (n, Some(Frame::Oversize { len }));
                        }
                    }
                    None => self.buf.extend_from_slice(chunk),
                }
                (n, None)
            }
        }
    }

    /// End of input: the final unterminated line (or the oversize report of
    /// one being discarded), if any. The decoder is empty afterwards.
    pub fn finish(&mut self) -> Option<Frame> {
        if let Some(len) = self.discarding.take() {
            return (!self.at_once).then_some(Frame::Oversize { len });
        }
        if self.buf.is_empty() {
            return None;
        }
        Some(Frame::Line(std::mem::take(&mut self.buf)))
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
/// let line = kaged_plugin_protocol::codec::encode_line(&serde_json::json!({"a": 1})).unwrap();
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
