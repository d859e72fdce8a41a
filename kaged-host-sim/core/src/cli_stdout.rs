//! Standard output for the kit's command lines, where a closed pipe is the
//! end of the reader's interest, not an error: `kaged-conformance run … |
//! head -1` prints its line and the command runs to its end without
//! panicking (`println!` panics on a broken pipe, since Rust ignores
//! SIGPIPE; a host must, or a plugin exiting would kill it). Once stdout is
//! found closed, later output is dropped; any other write error panics as
//! `println!` does.
//!
//! ```
//! kaged_host_core::outln!("{} cases", 3);
//! kaged_host_core::out!("no newline");
//! assert!(!kaged_host_core::cli_stdout::closed());
//! ```

use std::fmt;
use std::io::{ErrorKind, Write};
use std::sync::atomic::{AtomicBool, Ordering};

static CLOSED: AtomicBool = AtomicBool::new(false);

/// Whether a write found stdout closed (its reader gone).
pub fn closed() -> bool {
    CLOSED.load(Ordering::Relaxed)
}

/// Write `args` (and a newline when `newline`) to stdout and flush; a
/// broken pipe marks stdout closed and drops this and every later write.
pub fn write(args: fmt::Arguments<'_>, newline: bool) {
    if closed() {
        return;
    }
    let mut out = std::io::stdout().lock();
    let written = out
        .write_fmt(args)
        .and_then(|()| {
            if newline {
                out.write_all(b"\n")
            } else {
                Ok(())
            }
        })
        .and_then(|()| out.flush());
    match written {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::BrokenPipe => CLOSED.store(true, Ordering::Relaxed),
        Err(e) => panic!("failed printing to stdout: {e}"),
    }
}

/// `println!` for a command line: a closed stdout ends the output, not the
/// program ([`cli_stdout`](crate::cli_stdout)).
#[macro_export]
macro_rules! outln {
    () => {
        $crate::cli_stdout::write(format_args!(""), true)
    };
    ($($arg:tt)*) => {
        $crate::cli_stdout::write(format_args!($($arg)*), true)
    };
}

/// `print!` for a command line ([`outln!`]).
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli_stdout::write(format_args!($($arg)*), false)
    };
}

#[cfg(test)]
mod tests {
    #[test]
    fn writes_while_stdout_is_open() {
        crate::outln!("cli_stdout test line");
        crate::out!("");
        assert!(!super::closed());
    }
}
