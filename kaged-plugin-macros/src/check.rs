//! The name rules, checked at compile time with the protocol's own code
//! (`kaged_plugin_protocol::names`), and the consistency of the declarations.

use proc_macro2::Span;
use syn::Ident;

use crate::handler::Handler;
use crate::parse::{Kind, PluginArgs};
use crate::rules;

/// Collects every problem so that all of them are reported at once.
#[derive(Default)]
pub struct Errors(Option<syn::Error>);

impl Errors {
    /// Record a problem at `span`.
    pub fn at(&mut self, span: Span, message: impl std::fmt::Display) {
        self.push(syn::Error::new(span, message));
    }

    /// Record an error.
    pub fn push(&mut self, e: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(e),
            None => self.0 = Some(e),
        }
    }

    /// The errors, if any.
    pub fn finish(self) -> Result<(), syn::Error> {
        self.0.map_or(Ok(()), Err)
    }
}

/// Remembers the first occurrence of each name of one kind.
struct Seen<'a> {
    what: &'a str,
    first: Vec<(String, Span)>,
}

impl<'a> Seen<'a> {
    fn new(what: &'a str) -> Self {
        Seen {
            what,
            first: Vec::new(),
        }
    }

    fn get(&self, name: &str) -> Option<Span> {
        self.first.iter().find(|(n, _)| n == name).map(|(_, s)| *s)
    }

    fn check(&mut self, errors: &mut Errors, name: &str, span: Span) {
        match self.get(name) {
            Some(first) => {
                errors.at(span, format!("{} `{name}` is declared twice", self.what));
                errors.at(
                    first,
                    format!("first declaration of {} `{name}`", self.what),
                );
            }
            None => {
                self.first.push((name.to_string(), span));
            }
        }
    }
}

/// Check the plugin arguments and every handler.
pub fn check(args: &PluginArgs, handlers: &[Handler], errors: &mut Errors) {
    let plugin = args
        .name
        .as_ref()
        .map(syn::LitStr::value)
        .unwrap_or_default();
    if let Some(name) = &args.name {
        if let Some(p) = rules::plugin_name_problem(&name.value()) {
            errors.at(name.span(), p);
        }
    }
    let mut notes = Seen::new("notification");
    for n in &args.notifications {
        match rules::method_name_problem(&n.value()) {
            Some(p) => errors.at(n.span(), p.replace("method name", "notification name")),
            None => notes.check(errors, &n.value(), n.span()),
        }
    }
    let mut methods = Seen::new("method");
    let mut tools = Seen::new("tool");
    let mut hooks = Seen::new("hook");
    let mut singles = Seen::new("handler");
    for h in handlers {
        match &h.kind {
            Kind::Method(lit) => match rules::method_name_problem(&lit.value()) {
                Some(p) => errors.at(lit.span(), p),
                None => methods.check(errors, &lit.value(), lit.span()),
            },
            Kind::Tool { name, span, .. } => match rules::tool_name_problem(name) {
                Some(p) => errors.at(*span, format!("{p} (set it with #[tool(name = \"...\")])")),
                None => tools.check(errors, name, *span),
            },
            Kind::Hook { name, span } => {
                if rules::is_hook_name(name) {
                    hooks.check(errors, name, *span);
                } else {
                    errors.at(
                        *span,
                        format!(
                            "unknown hook `{name}`; hooks are {} (name the fn after one, or write #[hook(pre_compact)])",
                            rules::HOOK_NAMES.join(", ")
                        ),
                    );
                }
            }
            Kind::Config => singles.check(errors, "#[config]", h.attr_span),
            Kind::Shutdown => singles.check(errors, "#[shutdown]", h.attr_span),
        }
    }
    for (name, span) in &tools.first {
        let full = rules::prefixed_tool_name(&plugin, name);
        if methods.get(&full).is_some() {
            errors.at(
                *span,
                format!("tool `{name}` is called as `{full}`, which is also a #[method]"),
            );
        }
    }
    check_roles(&args.roles, hooks.get("pre_compact").is_some(), errors);
}

fn check_roles(roles: &[Ident], has_pre_compact: bool, errors: &mut Errors) {
    let mut seen = Seen::new("role");
    for role in roles {
        let r = role.to_string();
        if !rules::is_role_name(&r) {
            errors.at(
                role.span(),
                format!(
                    "unknown role `{r}`; roles are {}",
                    rules::ROLE_NAMES.join(", ")
                ),
            );
            continue;
        }
        seen.check(errors, &r, role.span());
        if r == "compactor" && !has_pre_compact {
            errors.at(
                role.span(),
                "the compactor role requires a pre_compact handler: add `#[hook] async fn pre_compact(&self, p: CompactParams) -> Result<CompactorResult, PluginError>`",
            );
        }
    }
}
