//! Stdio for the protocol. Stdout belongs to the protocol alone: at start
//! the runtime keeps the real stdout (a close-on-exec duplicate) for itself
//! and points file descriptor 1 at stderr, so a stray `println!` in plugin
//! code or a dependency cannot corrupt the stream.

use std::os::fd::{AsFd, OwnedFd};
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::unix::pipe;

/// The protocol's input: stdin, as a non-blocking pipe when it is one.
pub enum ProtocolIn {
    /// A pipe, read through the reactor.
    Pipe(pipe::Receiver),
    /// Anything else (a terminal, a file), read through tokio's stdin.
    Other(tokio::io::Stdin),
}

/// The protocol's output: the saved real stdout.
pub enum ProtocolOut {
    /// A pipe, written through the reactor.
    Pipe(pipe::Sender),
    /// Anything else (a terminal, a file).
    Other(tokio::fs::File),
}

/// Take over stdio: returns the protocol streams and leaves fd 1 pointing
/// at stderr. Must run inside a tokio runtime.
pub fn take_stdio() -> std::io::Result<(ProtocolIn, ProtocolOut)> {
    let stdout = std::io::stdout();
    let real_out: OwnedFd = rustix::io::fcntl_dupfd_cloexec(stdout.as_fd(), 3)?;
    rustix::stdio::dup2_stdout(std::io::stderr().as_fd())?;
    let out = match pipe::Sender::from_owned_fd(real_out.try_clone()?) {
        Ok(p) => ProtocolOut::Pipe(p),
        Err(_) => ProtocolOut::Other(tokio::fs::File::from_std(std::fs::File::from(real_out))),
    };
    let input = match rustix::io::fcntl_dupfd_cloexec(std::io::stdin().as_fd(), 3)
        .map_err(std::io::Error::from)
        .and_then(pipe::Receiver::from_owned_fd)
    {
        Ok(p) => ProtocolIn::Pipe(p),
        Err(_) => ProtocolIn::Other(tokio::io::stdin()),
    };
    Ok((input, out))
}

/// Whether stdin and stdout are both pipes (as a daemon spawns a plugin):
/// the blocking loop of a one-thread plugin serves only pipes.
pub fn stdio_are_pipes() -> bool {
    let is_pipe = |fd: std::os::fd::BorrowedFd<'_>| {
        rustix::fs::fstat(fd).is_ok_and(|st| {
            rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Fifo
        })
    };
    is_pipe(std::io::stdin().as_fd()) && is_pipe(std::io::stdout().as_fd())
}

/// Take over stdio as plain file descriptors (for the blocking loop of a
/// one-thread plugin): the protocol's input (a close-on-exec duplicate of
/// stdin) and output (of the real stdout); fd 1 points at stderr after.
pub fn take_stdio_fds() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let stdout = std::io::stdout();
    let real_out: OwnedFd = rustix::io::fcntl_dupfd_cloexec(stdout.as_fd(), 3)?;
    rustix::stdio::dup2_stdout(std::io::stderr().as_fd())?;
    let input: OwnedFd = rustix::io::fcntl_dupfd_cloexec(std::io::stdin().as_fd(), 3)?;
    Ok((input, real_out))
}

impl AsyncRead for ProtocolIn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            ProtocolIn::Pipe(p) => Pin::new(p).poll_read(cx, buf),
            ProtocolIn::Other(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for ProtocolOut {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            ProtocolOut::Pipe(p) => Pin::new(p).poll_write(cx, buf),
            ProtocolOut::Other(f) => Pin::new(f).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            ProtocolOut::Pipe(p) => Pin::new(p).poll_flush(cx),
            ProtocolOut::Other(f) => Pin::new(f).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            ProtocolOut::Pipe(p) => Pin::new(p).poll_shutdown(cx),
            ProtocolOut::Other(f) => Pin::new(f).poll_shutdown(cx),
        }
    }
}
