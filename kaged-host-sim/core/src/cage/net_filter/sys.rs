//! The host's system calls on a seccomp listener and on the plugin's
//! process: receive and answer notifications, inject a descriptor, read the
//! plugin's memory, copy one of its descriptors, read socket options.
//! Thin and unsafe-contained: the logic is in `super::supervisor`.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

/// `SO_NETNS_COOKIE` (asm-generic: x86_64, aarch64).
const SO_NETNS_COOKIE: libc::c_int = 71;
/// `PIDFD_THREAD` (Linux 6.9): a pidfd for a thread that does not lead
/// its process (`O_EXCL`).
const PIDFD_THREAD: libc::c_uint = libc::O_EXCL as libc::c_uint;

fn ioctl<T>(fd: BorrowedFd<'_>, request: libc::Ioctl, arg: *mut T) -> io::Result<libc::c_int> {
    // SAFETY: every caller passes the structure `request` expects.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), request, arg) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// `SECCOMP_IOCTL_NOTIF_RECV`: the next notification (`EAGAIN`-like
/// errors when none is pending, `ENOENT` when its caller went away).
pub fn recv(listener: BorrowedFd<'_>) -> io::Result<libc::seccomp_notif> {
    // SAFETY: the kernel requires a zeroed structure, which is valid.
    let mut n: libc::seccomp_notif = unsafe { std::mem::zeroed() };
    ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_RECV, &mut n)?;
    Ok(n)
}

/// How a notification is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// The call returns this value.
    Value(i64),
    /// The call fails with this errno.
    Errno(i32),
    /// The kernel runs the call as made (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`).
    Continue,
}

/// `SECCOMP_IOCTL_NOTIF_SEND`: answer notification `id`.
pub fn respond(listener: BorrowedFd<'_>, id: u64, answer: Answer) -> io::Result<()> {
    let (val, error, flags) = match answer {
        Answer::Value(v) => (v, 0, 0),
        Answer::Errno(e) => (0, -e, 0),
        Answer::Continue => (0, 0, libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32),
    };
    let mut r = libc::seccomp_notif_resp {
        id,
        val,
        error,
        flags,
    };
    ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_SEND, &mut r).map(|_| ())
}

/// `SECCOMP_IOCTL_NOTIF_ID_VALID`: the call of `id` still waits (its
/// process is alive, so the pid it came with is still that process's).
pub fn id_valid(listener: BorrowedFd<'_>, id: u64) -> bool {
    let mut id = id;
    ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_ID_VALID, &mut id).is_ok()
}

/// `SECCOMP_IOCTL_NOTIF_ADDFD` with `SECCOMP_ADDFD_FLAG_SETFD`: `src`
/// becomes descriptor `target` of the waiting process (replacing what was
/// there), close-on-exec when `cloexec`.
pub fn inject(
    listener: BorrowedFd<'_>,
    id: u64,
    src: BorrowedFd<'_>,
    target: RawFd,
    cloexec: bool,
) -> io::Result<()> {
    let mut a = libc::seccomp_notif_addfd {
        id,
        flags: libc::SECCOMP_ADDFD_FLAG_SETFD as u32,
        srcfd: u32::try_from(src.as_raw_fd()).map_err(|_| ebadf())?,
        newfd: u32::try_from(target).map_err(|_| ebadf())?,
        newfd_flags: if cloexec { libc::O_CLOEXEC as u32 } else { 0 },
    };
    ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_ADDFD, &mut a).map(|_| ())
}

fn ebadf() -> io::Error {
    io::Error::from_raw_os_error(libc::EBADF)
}

/// `len` bytes (at most 128) at `addr` in process `pid`'s memory.
pub fn read_memory(pid: u32, addr: u64, len: usize) -> io::Result<Vec<u8>> {
    let mut buf = vec![0u8; len.min(128)];
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let remote = libc::iovec {
        iov_base: usize::try_from(addr).map_err(|_| efault())? as *mut libc::c_void,
        iov_len: buf.len(),
    };
    let pid = libc::pid_t::try_from(pid).map_err(|_| efault())?;
    // SAFETY: `local` covers `buf`; the remote side is the kernel's to check.
    let n = unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) };
    let n = usize::try_from(n).map_err(|_| io::Error::last_os_error())?;
    buf.truncate(n);
    Ok(buf)
}

fn efault() -> io::Error {
    io::Error::from_raw_os_error(libc::EFAULT)
}

/// A pidfd for task `pid` (a thread that does not lead its process too,
/// on Linux ≥ 6.9).
pub fn pidfd(pid: u32) -> io::Result<OwnedFd> {
    let open = |flags: libc::c_uint| {
        // SAFETY: pidfd_open with integer arguments.
        let r = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, flags) };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            // SAFETY: a new descriptor, owned here.
            Ok(unsafe { OwnedFd::from_raw_fd(r as RawFd) })
        }
    };
    open(0).or_else(|e| match e.raw_os_error() {
        Some(libc::EINVAL) => open(PIDFD_THREAD),
        _ => Err(e),
    })
}

/// A copy of descriptor `fd` of the process of `pidfd` (`pidfd_getfd`).
pub fn copy_fd(pidfd: BorrowedFd<'_>, fd: RawFd) -> io::Result<OwnedFd> {
    rustix::process::pidfd_getfd(pidfd, fd, rustix::process::PidfdGetfdFlags::empty())
        .map_err(io::Error::from)
}

fn sockopt<T: Default>(fd: BorrowedFd<'_>, level: i32, name: i32) -> io::Result<T> {
    let mut v = T::default();
    let mut len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: `v` has room for `len` bytes.
    let r = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (&mut v as *mut T).cast(),
            &mut len,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(v)
}

/// What the host learns of one of the plugin's sockets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SocketKind {
    /// `SO_DOMAIN` is `AF_INET` or `AF_INET6`.
    pub inet: bool,
    /// `SO_DOMAIN` is `AF_INET6`.
    pub v6: bool,
    /// `SO_TYPE` is `SOCK_STREAM`.
    pub stream: bool,
    /// `O_NONBLOCK` is set on it.
    pub nonblocking: bool,
    /// It lives in the host's network namespace (one the host made).
    pub in_host_namespace: bool,
}

/// The kind of socket `fd` (not a socket: `ENOTSOCK`).
pub fn socket_kind(fd: BorrowedFd<'_>) -> io::Result<SocketKind> {
    let domain: libc::c_int = sockopt(fd, libc::SOL_SOCKET, libc::SO_DOMAIN)?;
    let ty: libc::c_int = sockopt(fd, libc::SOL_SOCKET, libc::SO_TYPE)?;
    let cookie: u64 = sockopt(fd, libc::SOL_SOCKET, SO_NETNS_COOKIE)?;
    // SAFETY: F_GETFL on a valid descriptor.
    let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(SocketKind {
        inet: domain == libc::AF_INET || domain == libc::AF_INET6,
        v6: domain == libc::AF_INET6,
        stream: ty == libc::SOCK_STREAM,
        nonblocking: flags & libc::O_NONBLOCK != 0,
        in_host_namespace: Some(cookie) == host_netns_cookie(),
    })
}

/// The host's network namespace's cookie, read once from a socket made
/// for it.
fn host_netns_cookie() -> Option<u64> {
    static COOKIE: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *COOKIE.get_or_init(|| {
        let s = std::net::UdpSocket::bind("127.0.0.1:0").ok()?;
        // SAFETY: `s` is open for the call.
        let fd = unsafe { BorrowedFd::borrow_raw(s.as_raw_fd()) };
        sockopt(fd, libc::SOL_SOCKET, SO_NETNS_COOKIE).ok()
    })
}

/// Whether descriptor `fd` of `pid` is close-on-exec (`/proc/PID/fdinfo`);
/// `None` when it cannot be read.
pub fn fd_cloexec(pid: u32, fd: RawFd) -> Option<bool> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{fd}")).ok()?;
    let flags = text.lines().find_map(|l| l.strip_prefix("flags:"))?;
    let flags = u32::from_str_radix(flags.trim(), 8).ok()?;
    Some(flags & libc::O_CLOEXEC as u32 != 0)
}

/// `connect(fd, AF_UNSPEC)`, made by the host on its copy of a socket of
/// the cage (dissolving its association, as the plugin asked).
pub fn disconnect(fd: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: a zeroed sockaddr with family AF_UNSPEC (0).
    let addr: libc::sockaddr = unsafe { std::mem::zeroed() };
    let len = std::mem::size_of::<libc::sockaddr>() as libc::socklen_t;
    // SAFETY: `addr` is valid for `len` bytes.
    let r = unsafe { libc::connect(fd.as_raw_fd(), &addr, len) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `listen(fd, backlog)`, made by the host on its copy of a socket of the
/// cage.
pub fn listen(fd: BorrowedFd<'_>, backlog: i32) -> io::Result<()> {
    // SAFETY: listen with integer arguments.
    if unsafe { libc::listen(fd.as_raw_fd(), backlog) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
