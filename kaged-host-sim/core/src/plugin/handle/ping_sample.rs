//! [`PingSample`]: one health ping as the monitor saw it.

/// One health ping: how long its answer took (or how long it waited), of
/// what budget, and whether it was healthy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PingSample {
    /// How long the answer took (the budget when none came).
    pub took: std::time::Duration,
    /// The ping's budget.
    pub budget: std::time::Duration,
    /// A healthy answer.
    pub ok: bool,
}

impl PingSample {
    /// Whether it used more than half its budget (or failed): what makes
    /// a plugin's health `degraded` (`Supervisor::health`).
    pub fn slow(&self) -> bool {
        !self.ok || self.took * 2 > self.budget
    }
}
