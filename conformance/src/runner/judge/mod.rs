//! Judge: a case's verdict made a result. A check returns a [`verdict`];
//! its [`scope`] holds the evidence (the wire it touched, its audit
//! events); [`finalize`] turns the two into the reported result (level,
//! baseline, the cage's [`diagnosis`], the failure kind refined by what
//! [`ended`] the wait, the rule broken, the [`roots`] key) as one pure
//! step; the [`recorder`] calls it, keeps the transcripts, streams and
//! links each failure to its root.

pub(crate) mod diagnosis;
pub(crate) mod ended;
pub(crate) mod finalize;
pub(crate) mod recorder;
pub(crate) mod roots;
pub(crate) mod scope;
pub(crate) mod verdict;
