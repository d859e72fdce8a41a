//! Run: the planned rows carried out. The cases judged without a session
//! of their own ([`direct`]), the session cases split into lanes that run
//! at once ([`lanes`]) and the `Started` stage that records them in table
//! order ([`started`]).

pub(crate) mod direct;
pub(crate) mod lanes;
pub(crate) mod started;
