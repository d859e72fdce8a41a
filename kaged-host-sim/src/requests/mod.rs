//! Requests a plugin sends the host (`kaged.storage.*` and anything else):
//! the handler trait and its default ([`handler`]), the storage broker's
//! handler ([`storage`]), and waiting for requests still being answered
//! ([`in_flight`]).

pub mod handler;
pub mod in_flight;
pub mod storage;

pub use handler::{DefaultHandler, PluginRequestHandler, RequestContext};
pub use in_flight::{InFlight, InFlightWaiter};
pub use storage::BrokerHandler;
