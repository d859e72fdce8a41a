//! What `plugin install` copies, through the command line and into a
//! running copy (`copies`), and which installed plugins `up` starts for a
//! project (`scope`: `local = false`). The install flow itself is
//! `kaged-host-engine`'s `install` tests.

#[path = "../support/mod.rs"]
mod support;

mod copies;
mod scope;
