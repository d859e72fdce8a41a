//! One case of the catalogue: everything the suite knows of it besides the
//! function that checks it (`runner::cases::CHECKS` pairs the two) and the
//! fixture that proves it can fail (`tests/fail_proofs.rs`). Its rule, how
//! binding it is ([`Level`]), what it runs for ([`Per`]), what its failure
//! is ([`Kind`]), which lane its sessions share ([`Lane`]) and whether its
//! failure means the plugin did not start (`start_gate`).

use serde::Serialize;

use super::kind::Kind;

/// How binding the checked rule is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Level {
    /// A failure fails the run.
    #[serde(rename = "MUST")]
    Must,
    /// A failure warns (fails the run only with `--strict`).
    #[serde(rename = "SHOULD")]
    Should,
}

impl Level {
    /// `MUST` or `SHOULD`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Level::Must => "MUST",
            Level::Should => "SHOULD",
        }
    }
}

/// One case of the catalogue. Cases run [`Per`] method, tool or hook have
/// ids `id[name]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CaseDef {
    /// Stable dotted id.
    pub id: &'static str,
    /// One-line title.
    pub title: &'static str,
    /// MUST or SHOULD.
    pub level: Level,
    /// The spec section checked.
    pub spec: &'static str,
    /// The sentence of the spec the case checks.
    pub sentence: &'static str,
    /// What the case runs for: once, or once per method, tool or hook.
    #[serde(skip_serializing_if = "Per::is_plugin")]
    pub per: Per,
    /// What its failure is when the wire shows nothing more specific (a
    /// timeout, an exit, the cage, a missing capability refine it).
    pub kind: Kind,
    /// The lane its sessions run in.
    #[serde(skip)]
    pub lane: Lane,
    /// Its failure means the plugin did not start: a case that could not
    /// run for want of a plugin follows from it.
    #[serde(skip)]
    pub start_gate: bool,
    /// Rules a failure of a given kind breaks instead of [`sentence`]
    /// (more precise than the sentence, quoted with their source).
    ///
    /// [`sentence`]: CaseDef::sentence
    #[serde(skip)]
    pub rules: &'static [(Kind, &'static str)],
}

impl CaseDef {
    /// The id of this case run for `target` (a method, tool or hook):
    /// `id[target]`.
    pub fn instance_id(&self, target: &str) -> String {
        format!("{}[{target}]", self.id)
    }

    /// The rule a failure of `kind` breaks: the case's own rule for that
    /// kind, else the kind's own rule when it is not the case's kind
    /// ([`Kind::rule`]), else the case's sentence.
    ///
    /// ```
    /// use kaged_conformance::catalogue::{Kind, HOOKS_ANSWERS, METHODS_ANSWERS};
    /// assert!(HOOKS_ANSWERS.rule_broken(Kind::WrongAnswer).starts_with("ADDENDUM §5"));
    /// assert!(METHODS_ANSWERS.rule_broken(Kind::StdoutNoise).contains("Stdout discipline"));
    /// assert_eq!(METHODS_ANSWERS.rule_broken(Kind::WrongAnswer), METHODS_ANSWERS.sentence);
    /// ```
    pub fn rule_broken(&self, kind: Kind) -> &'static str {
        self.rules
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, rule)| *rule)
            .or_else(|| kind.rule().filter(|_| kind != self.kind))
            .unwrap_or(self.sentence)
    }
}

/// What a case runs for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Per {
    /// Once for the plugin.
    Plugin,
    /// Once per declared method and per tool.
    MethodOrTool,
    /// Once per declared (custom) method.
    Method,
    /// Once per tool.
    Tool,
    /// Once per subscribed hook.
    Hook,
}

/// The kinds of target a case runs for, in the order the suite runs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    /// A declared method.
    Method,
    /// A tool.
    Tool,
    /// A subscribed hook.
    Hook,
}

impl TargetKind {
    /// Every kind, in run order.
    pub const ALL: [TargetKind; 3] = [TargetKind::Method, TargetKind::Tool, TargetKind::Hook];
}

impl Per {
    /// Whether the case runs once, for the plugin.
    pub fn is_plugin(&self) -> bool {
        *self == Per::Plugin
    }

    /// What the case's id names in brackets (`None` for [`Per::Plugin`]):
    /// `methods.answers[<method or tool>]`.
    pub fn placeholder(self) -> Option<&'static str> {
        match self {
            Per::Plugin => None,
            Per::MethodOrTool => Some("method or tool"),
            Per::Method => Some("method"),
            Per::Tool => Some("tool"),
            Per::Hook => Some("hook"),
        }
    }

    /// Whether a case run this way runs for targets of `kind`.
    pub fn covers(self, kind: TargetKind) -> bool {
        matches!(
            (self, kind),
            (Per::MethodOrTool, TargetKind::Method | TargetKind::Tool)
                | (Per::Method, TargetKind::Method)
                | (Per::Tool, TargetKind::Tool)
                | (Per::Hook, TargetKind::Hook)
        )
    }

    /// The last kind of target it runs for (`None` for [`Per::Plugin`]).
    pub fn last_kind(self) -> Option<TargetKind> {
        match self {
            Per::Plugin => None,
            Per::MethodOrTool | Per::Tool => Some(TargetKind::Tool),
            Per::Method => Some(TargetKind::Method),
            Per::Hook => Some(TargetKind::Hook),
        }
    }

    /// Why a case run this way is skipped when it has no target (`None`
    /// for [`Per::Plugin`], which always has one).
    pub fn no_target(self) -> Option<&'static str> {
        match self {
            Per::Plugin => None,
            Per::MethodOrTool => Some("the manifest declares no methods and no tools"),
            Per::Method => Some("the manifest declares no methods"),
            Per::Tool => Some("the manifest declares no tools"),
            Per::Hook => Some("the manifest subscribes to no hook"),
        }
    }
}

/// Which lane a case's sessions run in (`runner::run::lanes`): lanes run
/// at once (`--jobs`), each on plugin processes of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    /// A lane of its own.
    Own,
    /// One lane with every case of the same name, in table order (a
    /// project is deactivated after it was activated; a profile's examples
    /// are one scenario across methods).
    Shared(&'static str),
    /// The first lane, on the primary spawn's session: its verdict judges
    /// the plugin's shutdown for the whole run, and every other session
    /// waits for it before it ends. One case is the barrier.
    Barrier,
}
