//! The host side of a filtered cage: one task per cage reads the
//! listener's notifications and answers each in a task of its own (a
//! forwarded connect may take seconds; the others do not wait for it).
//!
//! For a `connect(2)`: the `sockaddr` is read from the plugin's memory
//! (`process_vm_readv`, then `SECCOMP_IOCTL_NOTIF_ID_VALID`: the call still
//! waits, so the pid is still the caller's), the socket copied
//! (`pidfd_getfd`) to learn its type and `O_NONBLOCK`, and
//! [`NetRules::decide`] decides:
//!
//! - made in the cage: answered `SECCOMP_USER_NOTIF_FLAG_CONTINUE` (unix
//!   and netlink sockets, the cage's own loopback);
//! - forwarded: the host connects ([`super::forward`]), makes the socket
//!   blocking or not as the plugin's was, puts it in place of the plugin's
//!   descriptor (`SECCOMP_IOCTL_NOTIF_ADDFD` with `SETFD`, close-on-exec as
//!   the plugin's was) and answers 0: the plugin's `connect` returns 0 on
//!   a connected socket (a valid outcome of a non-blocking connect too);
//! - refused: answered `ECONNREFUSED` at once, with a `tracing` warning
//!   naming the plugin and the address.
//!
//! `connect(AF_UNSPEC)` and `listen(2)` are made by the host on its copy
//! of the socket when that socket is the cage's own, and refused
//! (`EOPNOTSUPP`) on a socket the host handed over: a socket of the host's
//! network namespace must never listen there, nor lose its peer (after
//! which it could be bound or listen).
//!
//! The task ends when the listener reports the cage gone (`POLLHUP`: no
//! process of the cage is left); dropping the [`Supervisor`] ends it too,
//! and with it every answer still being made.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::unix::AsyncFd;
use tokio::task::JoinSet;

use super::decide::{parse_sockaddr, Decision, NetRules, Route, Target};
use super::sys::{self, Answer};

/// What every answer of one cage needs.
#[derive(Debug)]
struct Cage {
    listener: AsyncFd<OwnedFd>,
    rules: NetRules,
    plugin: String,
    connect_timeout: Duration,
}

/// The running supervisor of one cage; dropping it ends it.
#[derive(Debug)]
pub struct Supervisor {
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Supervisor {
    /// Start supervising `listener` for `plugin` (inside a tokio runtime).
    pub fn start(
        listener: OwnedFd,
        rules: NetRules,
        plugin: &str,
        connect_timeout: Duration,
    ) -> std::io::Result<Supervisor> {
        // SAFETY: the listener is owned by the AsyncFd, which deregisters
        // it before closing it (the I/O safety `register` asks for).
        let listener =
            unsafe { AsyncFd::register_with_interest(listener, tokio::io::Interest::READABLE) }
                .map_err(std::io::Error::from)?;
        let cage = Arc::new(Cage {
            listener,
            rules,
            plugin: plugin.to_string(),
            connect_timeout,
        });
        Ok(Supervisor {
            task: tokio::spawn(run(cage)),
        })
    }

    /// Whether it has ended (the cage is gone).
    pub fn is_finished(&self) -> bool {
        self.task.is_finished()
    }
}

/// What `poll(2)` says of the listener now, without waiting.
enum Pending {
    Notification,
    Nothing,
    Gone,
}

fn pending(fd: BorrowedFd<'_>) -> Pending {
    let mut p = libc::pollfd {
        fd: std::os::fd::AsRawFd::as_raw_fd(&fd),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one pollfd, no wait.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    if n < 0 || p.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
        Pending::Gone
    } else if p.revents & libc::POLLIN != 0 {
        Pending::Notification
    } else {
        Pending::Nothing
    }
}

async fn run(cage: Arc<Cage>) {
    let mut answers = JoinSet::new();
    loop {
        let Ok(mut guard) = cage.listener.readable().await else {
            return;
        };
        loop {
            match pending(cage.listener.get_ref().as_fd()) {
                Pending::Gone => return,
                Pending::Nothing => {
                    guard.clear_ready();
                    break;
                }
                // The receive blocks only when nothing is pending; poll
                // said something is (a caller gone meanwhile: ENOENT).
                Pending::Notification => match sys::recv(cage.listener.get_ref().as_fd()) {
                    Ok(n) => {
                        answers.spawn(answer(Arc::clone(&cage), n));
                    }
                    Err(e) => tracing::debug!(error = %e, "net filter: nothing received"),
                },
            }
        }
        while answers.try_join_next().is_some() {}
    }
}

async fn answer(cage: Arc<Cage>, n: libc::seccomp_notif) {
    if let Some(a) = decide(&cage, &n).await {
        let fd = cage.listener.get_ref().as_fd();
        if let Err(e) = sys::respond(fd, n.id, a) {
            // ENOENT: the call was interrupted (a signal) or its process died.
            tracing::debug!(plugin = %cage.plugin, error = %e, "net filter: no answer made");
        }
    }
}

/// The plugin's descriptor argument (an `int` in a 64-bit register).
fn fd_arg(n: &libc::seccomp_notif) -> RawFd {
    n.data.args[0] as u32 as RawFd
}

/// A copy of the caller's descriptor `fd`, the caller still waiting.
fn copy_socket(cage: &Cage, n: &libc::seccomp_notif, fd: RawFd) -> Result<OwnedFd, Answer> {
    let errno = |e: std::io::Error| Answer::Errno(e.raw_os_error().unwrap_or(libc::EBADF));
    let pidfd = sys::pidfd(n.pid).map_err(errno)?;
    if !sys::id_valid(cage.listener.get_ref().as_fd(), n.id) {
        return Err(Answer::Errno(libc::ESRCH));
    }
    sys::copy_fd(pidfd.as_fd(), fd).map_err(errno)
}

fn refuse(cage: &Cage, what: &str, why: &str, errno: i32) -> Answer {
    tracing::warn!(plugin = %cage.plugin, address = what, why, "net: refused by the cage");
    Answer::Errno(errno)
}

async fn decide(cage: &Cage, n: &libc::seccomp_notif) -> Option<Answer> {
    let listener = cage.listener.get_ref().as_fd();
    let nr = i64::from(n.data.nr);
    let fd = fd_arg(n);
    let io = |e: std::io::Error| Answer::Errno(e.raw_os_error().unwrap_or(libc::EIO));
    if nr == libc::SYS_listen {
        let sock = match copy_socket(cage, n, fd) {
            Ok(s) => s,
            Err(a) => return Some(a),
        };
        return Some(match sys::socket_kind(sock.as_fd()) {
            Err(e) => io(e),
            Ok(k) if k.in_host_namespace => refuse(
                cage,
                "listen",
                "a socket the host handed over never listens",
                libc::EOPNOTSUPP,
            ),
            Ok(_) => sys::listen(sock.as_fd(), n.data.args[1] as u32 as i32)
                .map_or_else(io, |()| Answer::Value(0)),
        });
    }
    if nr != libc::SYS_connect {
        return Some(Answer::Errno(libc::ENOSYS));
    }
    let len = usize::try_from(n.data.args[2] as u32).unwrap_or(0);
    let bytes = match sys::read_memory(n.pid, n.data.args[1], len) {
        Ok(b) => b,
        Err(_) => return Some(Answer::Errno(libc::EFAULT)),
    };
    // What was read is the caller's only while the call still waits.
    if !sys::id_valid(listener, n.id) {
        return None;
    }
    let Some(target) = parse_sockaddr(&bytes) else {
        return Some(Answer::Errno(libc::EINVAL));
    };
    if matches!(target, Target::Unix | Target::Netlink) {
        return Some(Answer::Continue);
    }
    let sock = match copy_socket(cage, n, fd) {
        Ok(s) => s,
        Err(a) => return Some(a),
    };
    let kind = match sys::socket_kind(sock.as_fd()) {
        Ok(k) => k,
        Err(e) => return Some(io(e)),
    };
    if target == Target::Unspec {
        return Some(if kind.in_host_namespace {
            refuse(
                cage,
                "AF_UNSPEC",
                "a socket the host handed over keeps its peer",
                libc::EOPNOTSUPP,
            )
        } else {
            sys::disconnect(sock.as_fd()).map_or_else(io, |()| Answer::Value(0))
        });
    }
    if matches!(target, Target::Inet(_)) && !kind.inet {
        // Not an inet socket: the kernel refuses the address itself.
        return Some(Answer::Continue);
    }
    let shown = match &target {
        Target::Inet(a) => a.to_string(),
        other => format!("{other:?}"),
    };
    let route = match cage.rules.decide(&target, kind.stream) {
        Decision::InCage => return Some(Answer::Continue),
        Decision::Refuse(why) => return Some(refuse(cage, &shown, &why, libc::ECONNREFUSED)),
        Decision::Forward(route) => route,
    };
    Some(forward(cage, n, fd, &route, kind).await)
}

async fn forward(
    cage: &Cage,
    n: &libc::seccomp_notif,
    fd: RawFd,
    route: &Route,
    kind: sys::SocketKind,
) -> Answer {
    let stream = match super::forward::connect(route, kind.v6, cage.connect_timeout).await {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(plugin = %cage.plugin, address = %route, error = %e, "net: the granted connect failed");
            return Answer::Errno(e.errno());
        }
    };
    if let Err(e) = stream.set_nonblocking(kind.nonblocking) {
        return Answer::Errno(e.raw_os_error().unwrap_or(libc::EIO));
    }
    let cloexec = sys::fd_cloexec(n.pid, fd).unwrap_or(true);
    let listener = cage.listener.get_ref().as_fd();
    match sys::inject(listener, n.id, stream.as_fd(), fd, cloexec) {
        Ok(()) => {
            tracing::debug!(plugin = %cage.plugin, address = %route, "net: connected by the host");
            Answer::Value(0)
        }
        Err(e) => Answer::Errno(e.raw_os_error().unwrap_or(libc::EIO)),
    }
}
