//! Progress for a person at a terminal: one line on standard error that
//! says how far a long run (the suite, the fuzzer, a bench, the chaos
//! seeds) has got and how long it has taken, redrawn in place and cleared
//! when the run ends. It is drawn only when standard error is a terminal
//! and the command was not given `--quiet`; anywhere else (a pipe, a file,
//! a CI log) a [`Progress`] is hidden and costs nothing, so the output a
//! program reads never holds it.
//!
//! ```
//! use kaged_host_core::progress::Progress;
//! // Hidden here: a doctest's stderr is not a terminal.
//! let p = Progress::stderr("suite", "cases", Some(56), false);
//! p.set_message("ping.answers: pass");
//! p.inc(1);
//! // Lines printed on stdout while the line is drawn go above it.
//! p.suspend(|| println!("ping.answers  pass"));
//! assert_eq!(p.position(), 1);
//! assert!(!p.is_drawn());
//! p.finish();
//! ```

use std::borrow::Cow;
use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressFinish, ProgressStyle};

/// How often the line is redrawn while nothing advances (the spinner and
/// the elapsed time), so a long wait still shows the run is alive.
const TICK: Duration = Duration::from_millis(120);

/// A progress line: hidden unless made by [`Progress::stderr`] with
/// standard error a terminal. Clones share the line; it is cleared when
/// [`Progress::finish`] is called or the last clone is dropped.
#[derive(Debug, Clone)]
pub struct Progress {
    bar: ProgressBar,
}

impl Default for Progress {
    fn default() -> Progress {
        Progress::hidden()
    }
}

impl Progress {
    /// A line that is never drawn.
    pub fn hidden() -> Progress {
        Progress {
            bar: ProgressBar::hidden(),
        }
    }

    /// A line on standard error, drawn when it is a terminal and not
    /// `quiet`: `label` first, then the count of `unit` done (`suite:
    /// cases judged 12`, or with a `total`, a bar and `3/10 sequences`),
    /// the time so far and the last message.
    pub fn stderr(label: &str, unit: &str, total: Option<u64>, quiet: bool) -> Progress {
        if quiet || !std::io::stderr().is_terminal() {
            return Progress::hidden();
        }
        let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr())
            .with_style(style(label, unit, total.is_some()))
            .with_finish(ProgressFinish::AndClear);
        bar.enable_steady_tick(TICK);
        Progress { bar }
    }

    /// Whether the line is drawn at all (false off a terminal, or quiet).
    pub fn is_drawn(&self) -> bool {
        !self.bar.is_hidden()
    }

    /// `n` more units done.
    pub fn inc(&self, n: u64) {
        self.bar.inc(n);
    }

    /// The units done so far.
    pub fn position(&self) -> u64 {
        self.bar.position()
    }

    /// What the run is doing now, or what it did last.
    pub fn set_message(&self, message: impl Into<Cow<'static, str>>) {
        self.bar.set_message(message);
    }

    /// Run `f` (which prints) with the line taken away, then draw it again
    /// below what `f` printed.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        self.bar.suspend(f)
    }

    /// Clear the line: the run is over.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// The line's look (the default spinner should the template not parse).
fn style(label: &str, unit: &str, bounded: bool) -> ProgressStyle {
    ProgressStyle::with_template(&template(label, unit, bounded))
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
        .progress_chars("=> ")
}

/// The line's template; `label` and `unit` are the kit's own words (braces
/// in them would be read as placeholders, so they are dropped).
fn template(label: &str, unit: &str, bounded: bool) -> String {
    let plain = |s: &str| s.replace(['{', '}'], "");
    let (label, unit) = (plain(label), plain(unit));
    if bounded {
        format!(
            "{{spinner}} {label} [{{bar:20}}] {{pos}}/{{len}} {unit} · {{elapsed}} · {{wide_msg}}"
        )
    } else {
        format!("{{spinner}} {label}: {unit} {{pos}} · {{elapsed}} · {{wide_msg}}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_label_and_unit_make_a_valid_template() {
        for (label, unit) in [("suite", "cases"), ("a {pos} b", "}{"), ("", "")] {
            for bounded in [true, false] {
                let t = template(label, unit, bounded);
                assert!(ProgressStyle::with_template(&t).is_ok(), "{t}");
                assert_eq!(t.contains("{len}"), bounded, "{t}");
            }
        }
    }

    #[test]
    fn a_hidden_line_still_counts() {
        let p = Progress::hidden();
        p.inc(2);
        p.set_message("x");
        assert_eq!(p.position(), 2);
        assert!(!p.is_drawn());
        assert_eq!(p.suspend(|| 7), 7);
        p.finish();
    }
}
