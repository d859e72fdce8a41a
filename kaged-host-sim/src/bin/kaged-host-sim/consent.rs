//! The operator's consent to an install, asked on the terminal.

use std::io::{BufRead, IsTerminal};

use kaged_host_sim::InstallPlan;

/// Ask on the terminal; `None` when there is no terminal to ask.
pub(super) fn ask(plan: &InstallPlan) -> Option<bool> {
    if !std::io::stdin().is_terminal() {
        return None;
    }
    // `out!` flushes: the question shows before the answer is read.
    kaged_host_core::out!("{} [y/N] ", plan.question());
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer).ok()?;
    Some(matches!(answer.trim(), "y" | "Y" | "yes"))
}
