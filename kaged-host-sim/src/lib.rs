//! kaged host simulator.
