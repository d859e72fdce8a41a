//! Shrinking inside and across operations, after proptest's value trees
//! ([`super::shrink`]): an operation dropped, a batch sent at once cut to
//! the one call that matters, arrays cut to the fewest items, strings to
//! the shortest, numbers toward zero, optional members dropped. Every candidate keeps each
//! tool call and config on its side of its schema ([`Judges`]), so the
//! replay expects what the run judged. [`Reducer`] is the search, without
//! the plugin: it proposes, the caller runs and says whether it still
//! fails.

use serde_json::Value;

use super::judge::Judges;
use super::plan::Op;

/// Arrays longer than this are only cut to a prefix (not item by item,
/// nor inside their items) until they are this short.
const ITEMWISE: usize = 64;

/// One step into a JSON value.
#[derive(Debug, Clone, PartialEq)]
enum Seg {
    Key(String),
    Index(usize),
}

/// A cut at a place in a value.
#[derive(Debug, Clone, PartialEq)]
enum Cut {
    /// An array to its first n items, a string to its first n characters.
    Truncate(usize),
    /// An array's item.
    Remove(usize),
    /// An object's member.
    Drop(String),
    /// A number to this one, nearer zero.
    Set(Value),
}

/// A cut at `path`.
#[derive(Debug, Clone, PartialEq)]
struct Edit {
    path: Vec<Seg>,
    cut: Cut,
}

/// A smaller sequence, as a change of the current one.
#[derive(Debug, Clone, PartialEq)]
enum Candidate {
    /// Without operation i.
    RemoveOp(usize),
    /// Batch i replaced by its member j alone.
    Alone(usize, usize),
    /// Batch i without its member j.
    RemoveMember(usize, usize),
    /// Operation i (member j of a batch) with its value cut.
    Value(usize, Option<usize>, Edit),
}

/// Shorter lengths of something `n` long, the biggest cut first: 0, then
/// half as far from n each time, down to n - 1.
fn shorter(n: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut gap = n;
    while gap > 0 {
        let len = n - gap;
        if out.last() != Some(&len) {
            out.push(len);
        }
        gap = if gap == 1 { 0 } else { gap.div_ceil(2) };
    }
    out
}

/// The cuts of `v` at `at`, outermost first. `schema`: tool arguments or
/// a config (every string, optional members); otherwise hook params (the
/// message lists and the messages' `content` only).
fn edits(v: &Value, schema: bool, at: &mut Vec<Seg>, out: &mut Vec<Edit>) {
    let mut cut = |cut| {
        out.push(Edit {
            path: at.clone(),
            cut,
        })
    };
    match v {
        Value::Array(items) => {
            shorter(items.len())
                .into_iter()
                .for_each(|n| cut(Cut::Truncate(n)));
            if items.len() > ITEMWISE {
                return;
            }
            (0..items.len()).for_each(|i| cut(Cut::Remove(i)));
            for (i, item) in items.iter().enumerate() {
                at.push(Seg::Index(i));
                edits(item, schema, at, out);
                at.pop();
            }
        }
        Value::Object(members) => {
            if schema {
                members.keys().for_each(|k| cut(Cut::Drop(k.clone())));
            }
            for (k, item) in members {
                at.push(Seg::Key(k.clone()));
                let content = matches!(item, Value::String(_)) && k == "content";
                if schema || content || !matches!(item, Value::String(_)) {
                    edits(item, schema || content, at, out);
                }
                at.pop();
            }
        }
        Value::String(s) if schema => shorter(s.chars().count())
            .into_iter()
            .for_each(|n| cut(Cut::Truncate(n))),
        Value::Number(n) if schema => nearer_zero(n).into_iter().for_each(|v| cut(Cut::Set(v))),
        _ => {}
    }
}

/// Numbers nearer zero than `n`, the nearest to zero first: an integer
/// halves its distance to itself from 0 each time (as [`shorter`]), any
/// other number becomes 0 and then its integer part.
fn nearer_zero(n: &serde_json::Number) -> Vec<Value> {
    if let Some(i) = n.as_i64() {
        let sign = i.signum();
        return shorter(i.unsigned_abs() as usize)
            .into_iter()
            .map(|m| Value::from(sign * m as i64))
            .collect();
    }
    let Some(f) = n.as_f64().filter(|f| f.is_finite()) else {
        return Vec::new();
    };
    let mut out = vec![Value::from(0)];
    if f.trunc() != 0.0 && f.trunc() != f {
        out.push(Value::from(f.trunc() as i64));
    }
    out
}

/// `v` with `edit` made, if it fits.
fn apply_edit(v: &Value, edit: &Edit) -> Option<Value> {
    let mut out = v.clone();
    let mut at = &mut out;
    for seg in &edit.path {
        at = match seg {
            Seg::Key(k) => at.get_mut(k.as_str())?,
            Seg::Index(i) => at.get_mut(*i)?,
        };
    }
    match (&edit.cut, at) {
        (Cut::Truncate(n), Value::Array(items)) if *n < items.len() => items.truncate(*n),
        (Cut::Truncate(n), Value::String(s)) => {
            let (cut, _) = s.char_indices().nth(*n)?;
            s.truncate(cut);
        }
        (Cut::Remove(i), Value::Array(items)) if *i < items.len() => {
            items.remove(*i);
        }
        (Cut::Drop(k), Value::Object(members)) => {
            members.shift_remove(k)?;
        }
        (Cut::Set(v), at @ Value::Number(_)) => *at = v.clone(),
        _ => return None,
    }
    Some(out)
}

/// The cuts of one operation's value.
fn op_edits(op: &Op) -> Vec<Edit> {
    let mut out = Vec::new();
    match op {
        Op::Tool { args: v, .. } | Op::Config { config: v, .. } => {
            edits(v, true, &mut Vec::new(), &mut out)
        }
        Op::Hook { params, .. } => edits(params, false, &mut Vec::new(), &mut out),
        Op::Ping | Op::Method { .. } | Op::Together(_) => {}
    }
    out
}

/// `op` with `edit` made, if it keeps the operation on its side of its
/// schema.
fn cut_op(op: &Op, edit: &Edit, judges: &Judges) -> Option<Op> {
    match op {
        Op::Tool {
            method,
            args,
            valid,
            ctx,
        } => {
            let args = apply_edit(args, edit)?;
            (judges.tool(method)?.valid(&args) == *valid).then(|| Op::Tool {
                method: method.clone(),
                args,
                valid: *valid,
                ctx: ctx.clone(),
            })
        }
        Op::Config { config, valid } => {
            let config = apply_edit(config, edit)?;
            (judges.config()?.valid(&config) == *valid).then_some(Op::Config {
                config,
                valid: *valid,
            })
        }
        Op::Hook { hook, params, ctx } => Some(Op::Hook {
            hook: *hook,
            params: apply_edit(params, edit)?,
            ctx: ctx.clone(),
        }),
        Op::Ping | Op::Method { .. } | Op::Together(_) => None,
    }
}

/// Every candidate smaller than `ops`, the likeliest cuts first.
fn candidates(ops: &[Op]) -> Vec<Candidate> {
    let mut out = Vec::new();
    if ops.len() > 1 {
        out.extend((0..ops.len()).map(Candidate::RemoveOp));
    }
    for (i, op) in ops.iter().enumerate() {
        if let Op::Together(members) = op {
            out.extend((0..members.len()).map(|j| Candidate::Alone(i, j)));
            if members.len() > 2 {
                out.extend((0..members.len()).map(|j| Candidate::RemoveMember(i, j)));
            }
        }
    }
    for (i, op) in ops.iter().enumerate() {
        match op {
            Op::Together(members) => {
                for (j, m) in members.iter().enumerate() {
                    out.extend(
                        op_edits(m)
                            .into_iter()
                            .map(|e| Candidate::Value(i, Some(j), e)),
                    );
                }
            }
            _ => out.extend(
                op_edits(op)
                    .into_iter()
                    .map(|e| Candidate::Value(i, None, e)),
            ),
        }
    }
    out
}

/// `ops` changed by `c`, if the change fits and keeps every validity.
fn apply(ops: &[Op], c: &Candidate, judges: &Judges) -> Option<Vec<Op>> {
    let mut out = ops.to_vec();
    let members = |i: usize| match ops.get(i) {
        Some(Op::Together(m)) => Some(m.clone()),
        _ => None,
    };
    match c {
        Candidate::RemoveOp(i) => {
            if *i >= out.len() {
                return None;
            }
            out.remove(*i);
        }
        Candidate::Alone(i, j) => out[*i] = members(*i)?.get(*j)?.clone(),
        Candidate::RemoveMember(i, j) => {
            let mut m = members(*i)?;
            if *j >= m.len() {
                return None;
            }
            m.remove(*j);
            out[*i] = Op::Together(m);
        }
        Candidate::Value(i, None, e) => out[*i] = cut_op(ops.get(*i)?, e, judges)?,
        Candidate::Value(i, Some(j), e) => {
            let mut m = members(*i)?;
            m[*j] = cut_op(m.get(*j)?, e, judges)?;
            out[*i] = Op::Together(m);
        }
    }
    Some(out)
}

/// The search: [`Reducer::next`] proposes a smaller sequence, the caller
/// runs it and answers [`Reducer::verdict`]. A candidate that still fails
/// becomes the sequence; the search goes on from the same place in the
/// new list of candidates, and starts over while a pass changed
/// anything. It ends when no candidate of a whole pass still fails (no
/// single cut is possible: the sequence is 1-minimal).
pub struct Reducer<'a> {
    best: Vec<Op>,
    judges: &'a Judges,
    list: Vec<Candidate>,
    at: usize,
    changed: bool,
    proposed: Option<Vec<Op>>,
}

impl<'a> Reducer<'a> {
    /// A search from `ops`, which fail.
    pub fn new(ops: Vec<Op>, judges: &'a Judges) -> Reducer<'a> {
        Reducer {
            list: candidates(&ops),
            best: ops,
            judges,
            at: 0,
            changed: false,
            proposed: None,
        }
    }

    /// The next candidate to run; `None` when the sequence is minimal.
    pub fn next(&mut self) -> Option<Vec<Op>> {
        loop {
            if self.at >= self.list.len() {
                if !std::mem::take(&mut self.changed) {
                    return None;
                }
                self.at = 0;
            }
            if self.list.is_empty() {
                return None;
            }
            if let Some(ops) = apply(&self.best, &self.list[self.at], self.judges) {
                self.proposed = Some(ops.clone());
                return Some(ops);
            }
            self.at += 1;
        }
    }

    /// Whether the candidate last proposed still fails.
    pub fn verdict(&mut self, still_fails: bool) {
        match self.proposed.take() {
            Some(ops) if still_fails => {
                self.list = candidates(&ops);
                self.best = ops;
                self.changed = true;
            }
            _ => self.at += 1,
        }
    }

    /// The smallest failing sequence found.
    #[cfg(test)]
    pub fn best(&self) -> &[Op] {
        &self.best
    }

    /// The smallest failing sequence found, taken.
    pub fn into_best(self) -> Vec<Op> {
        self.best
    }
}

#[cfg(test)]
#[path = "reduce_tests.rs"]
mod tests;
