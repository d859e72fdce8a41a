//! The filter the spawn child loads before it runs bwrap, and the hand-over
//! of its listener to the host.
//!
//! A classic BPF program on this machine's architecture (x86_64, aarch64:
//! another fails the spawn with [`CageError::NetFilter`]):
//!
//! ```text
//!  another architecture, an x32 syscall  → EPERM (the default profile kills or refuses them too)
//!  connect, listen                       → SECCOMP_RET_USER_NOTIF (the host decides: super::supervisor)
//!  sendto, sendmmsg (flags: args[3]),
//!  sendmsg (flags: args[2]) with MSG_FASTOPEN → EOPNOTSUPP (a connect that is not a connect(2))
//!  anything else                         → ALLOW (bwrap's default profile decides)
//! ```
//!
//! It is loaded with `SECCOMP_FILTER_FLAG_NEW_LISTENER` (and
//! `SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV` where the kernel has it) in the
//! child (`no_new_privs` set first, so an unprivileged child may), in addition to
//! the default profile that bwrap loads later: the kernel runs both and the
//! stricter action wins (`ERRNO` over `USER_NOTIF`); the default profile
//! does not refuse `connect` or `listen`. The child sends the listener to
//! the host over a socket pair (`SCM_RIGHTS`) and closes its own copy.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use crate::cage::CageError;

const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JEQ_K: u16 = 0x15;
const BPF_JSET_K: u16 = 0x45;
const BPF_RET_K: u16 = 0x06;
const DATA_NR: u32 = 0;
const DATA_ARCH: u32 = 4;
/// `seccomp_data.args[i]`, its low 32 bits (little-endian: x86_64, aarch64).
const fn data_arg(i: u32) -> u32 {
    16 + 8 * i
}
const X32_SYSCALL_BIT: u32 = 0x4000_0000;
const MSG_FASTOPEN: u32 = 0x2000_0000;

/// This architecture: its audit number and the numbers of the calls
/// (connect, listen, sendto, sendmsg, sendmmsg).
#[cfg(target_arch = "x86_64")]
const ARCH: Option<(u32, [i64; 5])> = Some((
    62 | 0x8000_0000 | 0x4000_0000,
    [
        libc::SYS_connect,
        libc::SYS_listen,
        libc::SYS_sendto,
        libc::SYS_sendmsg,
        libc::SYS_sendmmsg,
    ],
));
#[cfg(target_arch = "aarch64")]
const ARCH: Option<(u32, [i64; 5])> = Some((
    183 | 0x8000_0000 | 0x4000_0000,
    [
        libc::SYS_connect,
        libc::SYS_listen,
        libc::SYS_sendto,
        libc::SYS_sendmsg,
        libc::SYS_sendmmsg,
    ],
));
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const ARCH: Option<(u32, [i64; 5])> = None;

fn ins(code: u16, jt: u8, jf: u8, k: u32) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

/// The program (see the module's documentation), or why there is none.
pub fn program() -> Result<Vec<libc::sock_filter>, CageError> {
    let Some((audit, [connect, listen, sendto, sendmsg, sendmmsg])) = ARCH else {
        return Err(CageError::NetFilter {
            why: format!(
                "the connect filter is written for x86_64 and aarch64, not {}",
                std::env::consts::ARCH
            ),
        });
    };
    let nr = |n: i64| u32::try_from(n).unwrap_or(u32::MAX);
    let eperm = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
    let refuse = libc::SECCOMP_RET_ERRNO | libc::EOPNOTSUPP as u32;
    let mut p = vec![
        ins(BPF_LD_W_ABS, 0, 0, DATA_ARCH),
        ins(BPF_JEQ_K, 1, 0, audit),
        ins(BPF_RET_K, 0, 0, eperm),
        ins(BPF_LD_W_ABS, 0, 0, DATA_NR),
    ];
    if cfg!(target_arch = "x86_64") {
        p.push(ins(BPF_JSET_K, 0, 1, X32_SYSCALL_BIT));
        p.push(ins(BPF_RET_K, 0, 0, eperm));
    }
    for call in [connect, listen] {
        p.push(ins(BPF_JEQ_K, 0, 1, nr(call)));
        p.push(ins(BPF_RET_K, 0, 0, libc::SECCOMP_RET_USER_NOTIF));
    }
    for (call, flags) in [(sendto, 3), (sendmmsg, 3), (sendmsg, 2)] {
        // not this call: skip its four instructions
        p.push(ins(BPF_JEQ_K, 0, 4, nr(call)));
        p.push(ins(BPF_LD_W_ABS, 0, 0, data_arg(flags)));
        p.push(ins(BPF_JSET_K, 0, 1, MSG_FASTOPEN));
        p.push(ins(BPF_RET_K, 0, 0, refuse));
        p.push(ins(BPF_RET_K, 0, 0, libc::SECCOMP_RET_ALLOW));
    }
    p.push(ins(BPF_RET_K, 0, 0, libc::SECCOMP_RET_ALLOW));
    Ok(p)
}

/// What the spawn child needs, made before the fork: the program and its
/// end of the socket pair.
#[derive(Debug)]
pub struct ChildSide {
    program: Vec<libc::sock_filter>,
    socket: OwnedFd,
}

/// The host's end of the socket pair, on which the listener arrives.
#[derive(Debug)]
pub struct HostSide {
    socket: OwnedFd,
}

/// The program and a socket pair (close-on-exec both ends).
pub fn prepare() -> Result<(ChildSide, HostSide), CageError> {
    let program = program()?;
    let mut fds = [-1 as RawFd; 2];
    // SAFETY: `fds` has room for the two descriptors socketpair writes.
    let r = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if r != 0 {
        return Err(CageError::Setup {
            what: "the network filter's socket pair",
            source: io::Error::last_os_error(),
        });
    }
    // SAFETY: both were just opened, and are owned here only.
    let (child, host) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    Ok((
        ChildSide {
            program,
            socket: child,
        },
        HostSide { socket: host },
    ))
}

/// In the spawn child, between fork and exec: set `no_new_privs`, load
/// the filter with a new listener, send the listener to the host, close
/// it. Only system calls, on memory allocated before the fork
/// (async-signal-safe); works unprivileged.
pub fn enter(child: &ChildSide) -> io::Result<()> {
    let check = |r: libc::c_long| {
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(r)
        }
    };
    // SAFETY: prctl with integer arguments.
    check(unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) }.into())?;
    let prog = libc::sock_fprog {
        len: u16::try_from(child.program.len()).unwrap_or(u16::MAX),
        filter: child.program.as_ptr().cast_mut(),
    };
    let load = |flags: libc::c_ulong| {
        // SAFETY: `prog` points at the program, alive for the call.
        check(unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                flags,
                &prog as *const libc::sock_fprog,
            )
        })
    };
    // Killable only once the host has the call (Linux ≥ 5.19): a signal
    // the plugin handles (Go's preemption signal, SIGCHLD) does not
    // interrupt a connect the host is making, which a restart would ask
    // again and again. Before 5.19: without it.
    let listener =
        load(libc::SECCOMP_FILTER_FLAG_NEW_LISTENER | libc::SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
            .or_else(|e| match e.raw_os_error() {
                Some(libc::EINVAL) => load(libc::SECCOMP_FILTER_FLAG_NEW_LISTENER),
                _ => Err(e),
            })?;
    let listener =
        RawFd::try_from(listener).map_err(|_| io::Error::from_raw_os_error(libc::EBADF))?;
    // SAFETY: the kernel just returned it; owned here, closed on return.
    let listener = unsafe { OwnedFd::from_raw_fd(listener) };
    send_fd(child.socket.as_raw_fd(), listener.as_raw_fd())
}

/// `sendmsg` of one byte carrying `fd` (`SCM_RIGHTS`), on the stack.
fn send_fd(socket: RawFd, fd: RawFd) -> io::Result<()> {
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    // Room for one descriptor's control message, aligned as cmsghdr is.
    let mut control = [0u64; 4];
    // SAFETY: an all-zero msghdr is valid; every pointer set below points
    // at locals alive for the call, and the control buffer is larger than
    // CMSG_SPACE(sizeof(int)) (24 bytes on 64-bit).
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) as usize;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null() {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as usize;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>(), fd);
        if libc::sendmsg(socket, &msg, libc::MSG_NOSIGNAL) != 1 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

impl HostSide {
    /// The listener the child sent (it is queued once the spawn returned:
    /// the child sends it before it runs bwrap).
    pub fn receive(self) -> io::Result<OwnedFd> {
        let mut byte = [0u8; 1];
        let mut iov = libc::iovec {
            iov_base: byte.as_mut_ptr().cast(),
            iov_len: 1,
        };
        let mut control = [0u64; 4];
        // SAFETY: as in `send_fd`; the kernel writes at most
        // `msg_controllen` bytes of control data into `control`.
        unsafe {
            let mut msg: libc::msghdr = std::mem::zeroed();
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = std::mem::size_of_val(&control);
            let n = libc::recvmsg(
                self.socket.as_raw_fd(),
                &mut msg,
                libc::MSG_DONTWAIT | libc::MSG_CMSG_CLOEXEC,
            );
            if n < 0 {
                return Err(io::Error::last_os_error());
            }
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            if n != 1
                || cmsg.is_null()
                || (*cmsg).cmsg_level != libc::SOL_SOCKET
                || (*cmsg).cmsg_type != libc::SCM_RIGHTS
            {
                return Err(io::Error::other("no listener in the child's message"));
            }
            let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>());
            Ok(OwnedFd::from_raw_fd(fd))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    #[test]
    fn the_program_notifies_connect_and_listen_and_allows_the_rest() {
        let p = program().unwrap();
        let rets: Vec<u32> = p
            .iter()
            .filter(|i| i.code == BPF_RET_K)
            .map(|i| i.k)
            .collect();
        assert_eq!(
            rets.iter()
                .filter(|k| **k == libc::SECCOMP_RET_USER_NOTIF)
                .count(),
            2
        );
        assert_eq!(rets.last(), Some(&libc::SECCOMP_RET_ALLOW));
        // Every jump lands inside the program.
        for (at, i) in p.iter().enumerate() {
            if i.code == BPF_JEQ_K || i.code == BPF_JSET_K {
                assert!(at + 1 + usize::from(i.jt.max(i.jf)) < p.len(), "{at}");
            }
        }
    }
}
