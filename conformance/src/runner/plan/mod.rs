//! Plan: what a run is made of. A table row ([`check::Check`]: a catalogue
//! case and the function that checks it, the function's kind giving its
//! stage) and a stage's rows expanded into runs per target
//! ([`expand::plan`]).

pub(crate) mod check;
pub(crate) mod expand;
