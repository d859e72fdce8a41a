//! Session: how the suite plays the daemon for a case. The run's cage
//! ([`cage`]) and read-only context ([`context`]), the plugin processes a case gets
//! ([`processes`]) and the primary spawn ([`primary`]), the shutdown barrier
//! every session waits on ([`barrier`]), raw-channel probes ([`probe`]),
//! the `_context` a call carries ([`call_context`]) and the whole run seen
//! from its end ([`observations`]).

pub(crate) mod barrier;
pub(crate) mod cage;
pub(crate) mod call_context;
pub(crate) mod context;
pub(crate) mod observations;
pub(crate) mod primary;
pub(crate) mod probe;
pub(crate) mod processes;
