//! The cage (ADDENDUM §13): the compiler over an in-memory filesystem
//! (every capability form, symlinks, duplicates and nesting), its
//! properties, a real filesystem with real symlinks, cgroup detection, and
//! real bwrap runs of the compiled argv with the seccomp program, and the
//! Sandbox tests: plugins launched caged by the host.

#[path = "../../../tests/support/mod.rs"]
mod support;

mod as_user;
mod bwrap_run;
mod cgroup;
mod compile;
mod exec_and_roots;
mod exit_watch;
mod host_fs;
mod hostile;
mod hostile_limits;
mod landlock;
mod model;
mod net;
mod own_uid;
mod properties;
mod race;
mod sandbox;
