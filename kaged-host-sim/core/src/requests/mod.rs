//! Requests a plugin sends the host (`kaged.storage.*` and anything else):
//! the handler trait and its default ([`handler`]; the storage broker's
//! handler lives in `kaged-host-storage`), and waiting for requests still
//! being answered ([`in_flight`]).

pub mod handler;
pub mod in_flight;

pub use handler::{
    deny_unavailable_storage, DefaultHandler, PluginRequestHandler, RequestContext,
    STORAGE_UNAVAILABLE,
};
pub use in_flight::{InFlight, InFlightWaiter};
