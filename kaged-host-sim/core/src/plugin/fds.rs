//! A plugin inherits fds 0, 1 and 2, and nothing else (ADDENDUM §15,
//! "Kernel interfaces"): a descriptor the host inherited without
//! close-on-exec (from the shell that started it: a secret file, a socket)
//! would otherwise pass through bwrap, which closes only its `--info-fd`,
//! straight into the plugin. Rust's standard library opens its own
//! descriptors close-on-exec; this closes the rest in the child, between
//! fork and exec, for caged and uncaged spawns alike.

/// In the child between fork and exec: mark every descriptor from 3 up
/// close-on-exec (`close_range(3, ~0, CLOSE_RANGE_CLOEXEC)`; on a kernel
/// before 5.11, one `fcntl` per descriptor below the open-files limit).
/// The spawner then clears the flag on the descriptors bwrap must read.
/// Makes system calls only: no allocation, no lock.
pub(crate) fn cloexec_from_3() -> std::io::Result<()> {
    // SAFETY: close_range with integer arguments; it only changes the
    // descriptor flags of this (child) process.
    let r = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    if r == 0 {
        return Ok(());
    }
    let err = std::io::Error::last_os_error();
    if !matches!(err.raw_os_error(), Some(libc::ENOSYS | libc::EINVAL)) {
        return Err(err);
    }
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .unwrap_or(1 << 20)
        .min(1 << 20);
    for fd in 3..i32::try_from(limit).unwrap_or(1 << 20) {
        // SAFETY: fcntl on a number that may or may not be open; an
        // unopened one answers EBADF, which is skipped.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
    Ok(())
}
