//! Shrinking a failing sequence to a minimal one that breaks the same
//! property: first the operation that broke, alone (most failures need
//! nothing before them: one run instead of a walk over the sequence); else
//! proptest's value trees (fewer operations, smaller numbers, earlier
//! choices); then [`Reducer`] inside the operations (a batch to the one
//! call, arrays to the fewest items, strings to the shortest, numbers
//! toward zero). Bounded by a number of runs (the same result on a busy
//! machine as on an idle one) and, as a safeguard, by a wall-clock budget
//! (a failure by timeout costs a timeout per run).

use std::time::Instant;

use proptest::strategy::ValueTree;

use super::exec::{Broken, Runner};
use super::judge::Judges;
use super::plan::Op;
use super::reduce::Reducer;

/// Runs of proptest's phase at most (the rest of the budget is the
/// reducer's).
const TREE_RUNS: usize = 200;

/// How long shrinking may go on.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Runs of a candidate sequence, at most.
    pub runs: usize,
    /// And no run starts past this.
    pub deadline: Instant,
}

impl Budget {
    fn left(&self, runs: usize) -> bool {
        runs < self.runs && Instant::now() < self.deadline
    }

    /// Whether the wall clock, not the count of runs, stopped shrinking.
    fn cut_by_clock(&self, runs: usize) -> bool {
        runs < self.runs && Instant::now() >= self.deadline
    }
}

/// How shrinking went.
#[derive(Debug, Clone, PartialEq)]
pub struct Shrunk {
    /// The minimal sequence found.
    pub ops: Vec<Op>,
    /// How it breaks the property.
    pub broken: Broken,
    /// Candidate sequences run.
    pub runs: usize,
    /// The wall-clock cap stopped it with candidates and runs left: the
    /// sequence may not be minimal, and a run on a less busy machine may
    /// shrink it further (reported).
    pub cut_short: bool,
}

/// A minimal sequence from `seq` that still breaks `broken.property`, the
/// way it breaks it, and the runs it took.
pub async fn shrink(
    runner: &Runner,
    judges: &Judges,
    tree: &mut impl ValueTree<Value = Vec<Op>>,
    seq: Vec<Op>,
    broken: Broken,
    budget: Budget,
) -> Shrunk {
    // The operations after the one that broke never ran.
    let mut best = (cut_after(seq, &broken), broken);
    let mut runs = 0;
    let mut still_fails = true;
    let mut cut_short = false;
    // One operation is proptest's tree no more (the reducer shrinks inside
    // it).
    let mut alone = best.0.len() == 1;
    if let Some(last) = best.0.last().filter(|_| !alone && budget.left(runs)) {
        let candidate = vec![last.clone()];
        runs += 1;
        if let Some(b) = runner.run(&candidate).await {
            if b.property == best.1.property {
                best = (cut_after(candidate, &b), b);
                alone = true;
            }
        }
    }
    while !alone && runs < TREE_RUNS && budget.left(runs) {
        let moved = if still_fails {
            tree.simplify()
        } else {
            tree.complicate()
        };
        if !moved {
            break;
        }
        runs += 1;
        let candidate = tree.current();
        match runner.run(&candidate).await {
            Some(b) if b.property == best.1.property => {
                best = (cut_after(candidate, &b), b);
                still_fails = true;
            }
            _ => still_fails = false,
        }
    }
    if runs < TREE_RUNS && budget.cut_by_clock(runs) {
        cut_short = true;
    }
    let (ops, mut broken) = best;
    let mut reducer = Reducer::new(ops, judges);
    loop {
        if !budget.left(runs) {
            cut_short |= budget.cut_by_clock(runs);
            break;
        }
        let Some(candidate) = reducer.next() else {
            break;
        };
        runs += 1;
        match runner.run(&candidate).await {
            Some(b) if b.property == broken.property => {
                broken = b;
                reducer.verdict(true);
            }
            _ => reducer.verdict(false),
        }
    }
    Shrunk {
        ops: reducer.into_best(),
        broken,
        runs,
        cut_short,
    }
}

/// `seq` up to the operation that broke.
fn cut_after(mut seq: Vec<Op>, broken: &Broken) -> Vec<Op> {
    seq.truncate(broken.step.max(1));
    seq
}
