//! `kaged-conformance`: runs `kaged-host-sim` against any plugin binary and
//! reports per-case verdicts. The case catalogue and runner arrive with
//! issue #5; this crate is a workspace member so the layout is fixed now.
