//! The stdio loop of [`Plugin::run`] on one thread (the default): the
//! protocol's own syscalls and nothing else. While no handler is in flight
//! the loop blocks in `read(2)` on stdin (no reactor, no `epoll_wait`),
//! serves every frame the read brought (a handler that finishes without
//! waiting answers inline), and writes every answer and notification queued
//! with one `write(2)`. A handler that waits (a storage call, a timer) goes
//! on in its task; while one is in flight the loop waits for input through
//! the reactor instead, driving the runtime, so the handler progresses and
//! the host's answers to it are read at once (architecture rule 3: the
//! reader never waits on a handler).

use std::os::fd::{AsFd, OwnedFd};

use rustix::io::Errno;
use tokio::net::unix::pipe;
use tokio::runtime::Runtime;
use tokio::sync::mpsc;

use super::builder::Plugin;
use super::host::{Host, Outgoing};
use super::serve::{Phase, ServeExit, Step};
use crate::codec::LineDecoder;

/// Frames served before the answers so far are written (a pipelining host
/// gets answers while later requests are served).
const WRITE_EVERY: usize = 8;

/// Serve on `input` and `output` (stdin and the saved stdout) with `rt`, a
/// current-thread runtime; see the module docs.
pub(super) fn serve_blocking(
    plugin: &Plugin,
    rt: &Runtime,
    input: OwnedFd,
    output: OwnedFd,
) -> std::io::Result<ServeExit> {
    set_blocking(&output, true)?;
    let mut input = {
        let _enter = rt.enter();
        Input::new(input)?
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let host = Host::new(plugin.name().to_string(), tx);
    let mut decoder = LineDecoder::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut phase = Phase::Fresh;
    let exit = 'serve: loop {
        let read = if rt.metrics().num_alive_tasks() == 0 {
            input.read_blocking(&mut buf)
        } else {
            match rt.block_on(wait_input(&mut input, &mut buf, &mut rx)) {
                Wake::Output(item) => {
                    write_queued(Some(item), &mut rx, &output)?;
                    continue;
                }
                Wake::Input(read) => read,
            }
        };
        let n = match read {
            Ok(n) => n,
            Err(e) => {
                tracing::error!("reading from the host failed: {e}");
                break ServeExit::Eof;
            }
        };
        if n == 0 {
            if let Some(frame) = decoder.finish() {
                if let Step::Exit(exit) =
                    rt.block_on(plugin.handle_frame(frame, &host, &mut phase, true))
                {
                    break exit;
                }
            }
            break ServeExit::Eof;
        }
        let mut chunk = &buf[..n];
        let mut served = 0;
        while !chunk.is_empty() {
            let (used, frame) = decoder.feed(chunk);
            chunk = &chunk[used..];
            let Some(frame) = frame else { continue };
            let step = rt.block_on(plugin.handle_frame(frame, &host, &mut phase, true));
            if let Step::Exit(exit) = step {
                break 'serve exit;
            }
            served += 1;
            if served % WRITE_EVERY == 0 {
                write_queued(None, &mut rx, &output)?;
            }
        }
        write_queued(None, &mut rx, &output)?;
    };
    if let Some(on_shutdown) = &plugin.def.on_shutdown {
        rt.block_on(on_shutdown());
    }
    write_queued(None, &mut rx, &output)?;
    host.fail_pending();
    Ok(exit)
}

/// Why the wait for input ended.
enum Wake {
    /// Input was read (or reading failed).
    Input(std::io::Result<usize>),
    /// A handler queued something to send.
    Output(Outgoing),
}

/// Drive the runtime (the handlers in flight) until input is read or a
/// handler queues output. Cancel-safe: input is consumed only by the branch
/// that returns it.
async fn wait_input(
    input: &mut Input,
    buf: &mut [u8],
    rx: &mut mpsc::UnboundedReceiver<Outgoing>,
) -> Wake {
    tokio::select! {
        biased;
        Some(item) = rx.recv() => Wake::Output(item),
        read = input.read_async(buf) => Wake::Input(read),
    }
}

/// Stdin, read blocking (no reactor) while nothing else is in flight and
/// through the reactor while a handler is: the same pipe, its `O_NONBLOCK`
/// switched only when the way of reading changes.
struct Input {
    fd: OwnedFd,
    pipe: pipe::Receiver,
    nonblocking: bool,
}

impl Input {
    /// Must be called inside the runtime (the pipe registers with it).
    fn new(fd: OwnedFd) -> std::io::Result<Input> {
        let pipe = pipe::Receiver::from_owned_fd(fd.try_clone()?)?;
        Ok(Input {
            fd,
            pipe,
            nonblocking: true,
        })
    }

    fn read_blocking(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.nonblocking {
            set_blocking(&self.fd, true)?;
            self.nonblocking = false;
        }
        loop {
            match rustix::io::read(&self.fd, &mut *buf) {
                Ok(n) => return Ok(n),
                Err(Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }

    async fn read_async(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if !self.nonblocking {
            set_blocking(&self.fd, false)?;
            self.nonblocking = true;
        }
        loop {
            self.pipe.readable().await?;
            match self.pipe.try_read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

/// Write `first` and everything queued, in one `write(2)` when the pipe
/// takes it; answer the flush requests among them once written.
fn write_queued(
    first: Option<Outgoing>,
    rx: &mut mpsc::UnboundedReceiver<Outgoing>,
    output: &OwnedFd,
) -> std::io::Result<()> {
    let mut bytes = Vec::new();
    let mut flushed = Vec::new();
    let mut next = first.or_else(|| rx.try_recv().ok());
    while let Some(item) = next {
        match item {
            Outgoing::Line(line) => bytes.extend_from_slice(&line),
            Outgoing::Flush(done) => flushed.push(done),
        }
        next = rx.try_recv().ok();
    }
    let mut rest = &bytes[..];
    while !rest.is_empty() {
        match rustix::io::write(output, rest) {
            Ok(n) => rest = &rest[n..],
            Err(Errno::INTR) => {}
            Err(e) => {
                tracing::error!("writing to the host failed: {e}");
                return Err(e.into());
            }
        }
    }
    for done in flushed {
        let _ = done.send(());
    }
    Ok(())
}

/// Set or clear `O_NONBLOCK` (`blocking`: clear it).
fn set_blocking(fd: &OwnedFd, blocking: bool) -> std::io::Result<()> {
    let flags = rustix::fs::fcntl_getfl(fd.as_fd())?;
    let flags = if blocking {
        flags - rustix::fs::OFlags::NONBLOCK
    } else {
        flags | rustix::fs::OFlags::NONBLOCK
    };
    rustix::fs::fcntl_setfl(fd.as_fd(), flags)?;
    Ok(())
}
