//! How far the read loop has got with what the plugin wrote: the bytes it
//! took from the plugin's stdout, the bytes it has handled as whole lines,
//! and (for a child's pipe) the bytes still waiting in the pipe.
//! [`StdoutProgress::settled`] says whether everything the plugin wrote so
//! far has been handled (its messages delivered to the `inbound`
//! subscribers), however late the reader task got to run: a quiet window
//! that ends once the plugin sits idle asks it, so that what a plugin said
//! before going idle is seen in the window on a busy machine too.

use std::os::fd::OwnedFd;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

/// The read loop's progress through one plugin's stdout.
#[derive(Debug, Default)]
pub(crate) struct StdoutProgress {
    /// Reads under way (a byte being read is in neither the pipe nor `read`).
    reading: AtomicUsize,
    /// Bytes read from stdout.
    read: AtomicU64,
    /// Bytes handled: every line up to here went through the read loop.
    handled: AtomicU64,
    /// The read end of a child's stdout pipe (a duplicate), to ask how many
    /// bytes wait in it; `None` in-process.
    pipe: Option<OwnedFd>,
}

impl StdoutProgress {
    /// Progress through a child's pipe (`Some`, a duplicate of its read
    /// end) or an in-process stream (`None`).
    pub(crate) fn new(pipe: Option<OwnedFd>) -> StdoutProgress {
        StdoutProgress {
            pipe,
            ..StdoutProgress::default()
        }
    }

    /// Whether every byte the plugin has written so far was read and
    /// handled: no read under way, nothing waiting in the pipe, nothing read
    /// but not handled (a line without its newline yet counts as not
    /// handled). A read that begins or ends while this looks changes
    /// `reading` or `read` between the first and the last load.
    pub(crate) fn settled(&self) -> bool {
        let read = self.read.load(SeqCst);
        if self.reading.load(SeqCst) != 0 {
            return false;
        }
        let waiting = match &self.pipe {
            Some(fd) => rustix::io::ioctl_fionread(fd).map_or(true, |n| n > 0),
            None => false,
        };
        !waiting
            && self.handled.load(SeqCst) == read
            && self.reading.load(SeqCst) == 0
            && self.read.load(SeqCst) == read
    }

    /// The read loop handled a line and holds `unread` bytes read but not
    /// yet split into lines (its buffer; the line splitter holds none right
    /// after a line).
    pub(super) fn handled_all_but(&self, unread: usize) {
        let read = self.read.load(SeqCst);
        self.handled
            .store(read.saturating_sub(unread as u64), SeqCst);
    }
}

/// A reader that counts into a [`StdoutProgress`] what it reads.
pub(super) struct Counted<R> {
    inner: R,
    progress: Arc<StdoutProgress>,
}

impl<R> Counted<R> {
    pub(super) fn new(inner: R, progress: Arc<StdoutProgress>) -> Counted<R> {
        Counted { inner, progress }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Counted<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        this.progress.reading.fetch_add(1, SeqCst);
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            let n = buf.filled().len().saturating_sub(before);
            this.progress.read.fetch_add(n as u64, SeqCst);
        }
        this.progress.reading.fetch_sub(1, SeqCst);
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn settled_only_once_every_byte_read_was_handled() {
        let progress = Arc::new(StdoutProgress::new(None));
        let (mut plugin, host) = tokio::io::duplex(64);
        let mut reader = Counted::new(host, progress.clone());
        assert!(progress.settled(), "nothing written, nothing to handle");
        plugin.write_all(b"{\"a\":1}\n{\"b\"").await.expect("write");
        let mut buf = [0u8; 64];
        let n = reader.read(&mut buf).await.expect("read");
        assert_eq!(n, 12);
        assert!(!progress.settled(), "read, not handled");
        // The first line handled; 4 bytes (a partial line) still held.
        progress.handled_all_but(4);
        assert!(
            !progress.settled(),
            "a line without its newline is not handled"
        );
        progress.handled_all_but(0);
        assert!(progress.settled());
    }

    #[test]
    fn bytes_waiting_in_the_pipe_are_not_settled() {
        let (read_end, write_end) = rustix::pipe::pipe().expect("pipe");
        let progress = StdoutProgress::new(Some(read_end));
        assert!(progress.settled());
        rustix::io::write(&write_end, b"x\n").expect("write");
        assert!(!progress.settled(), "two bytes wait in the pipe");
    }
}
