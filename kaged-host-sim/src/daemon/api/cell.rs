//! The daemon the API serves, in one cell: `up` swaps in a new daemon when
//! a pending project loads (`daemon::pending`), and every request after
//! the swap, on a new connection or a kept-alive one, reaches the new one.
//! A long-lived subscriber (the notification socket) watches the cell
//! ([`DaemonCell::watch`]) and follows the swap.

use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use tokio::sync::watch;

use super::super::running::Daemon;

/// The daemon the API serves (see the module docs).
#[derive(Debug, Clone)]
pub struct DaemonCell(Arc<watch::Sender<Arc<Daemon>>>);

impl DaemonCell {
    /// A cell holding `daemon`.
    pub fn new(daemon: Arc<Daemon>) -> DaemonCell {
        DaemonCell(Arc::new(watch::Sender::new(daemon)))
    }

    /// The daemon served now.
    pub fn get(&self) -> Arc<Daemon> {
        Arc::clone(&self.0.borrow())
    }

    /// Serve `daemon` from now on; answers the one it replaces.
    pub fn replace(&self, daemon: Arc<Daemon>) -> Arc<Daemon> {
        self.0.send_replace(daemon)
    }

    /// A receiver that wakes when [`DaemonCell::replace`] swaps the daemon.
    pub(super) fn watch(&self) -> watch::Receiver<Arc<Daemon>> {
        self.0.subscribe()
    }
}

/// The extractor of the daemon served when the request arrived.
pub(super) struct Current(pub(super) Arc<Daemon>);

impl FromRequestParts<DaemonCell> for Current {
    type Rejection = Infallible;

    async fn from_request_parts(_: &mut Parts, cell: &DaemonCell) -> Result<Current, Infallible> {
        Ok(Current(cell.get()))
    }
}
