//! Parsing: the `#[kaged_plugin(..)]` arguments and the handler attributes
//! (`#[method]`, `#[tool]`, `#[hook]`, `#[config]`, `#[shutdown]`) of the
//! impl block's functions.

use proc_macro2::Span;
use syn::parse::ParseStream;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, Ident, ImplItemFn, LitStr, Path, Token};

/// The arguments of `#[kaged_plugin(..)]`.
#[derive(Default)]
pub struct PluginArgs {
    pub name: Option<LitStr>,
    pub version: Option<LitStr>,
    pub description: Option<LitStr>,
    pub notifications: Vec<LitStr>,
    pub roles: Vec<Ident>,
    pub capabilities: Vec<LitStr>,
    pub manifest_base: Option<LitStr>,
    /// `migrations = EXPR`: the schema steps (see `kaged_plugin_sdk::Migrations`).
    pub migrations: Option<syn::Expr>,
    pub krate: Option<Path>,
}

const PLUGIN_ARGS: &str =
    "name, version, description, notifications(..), roles(..), capabilities(..), manifest_base, migrations, crate";

fn lit_list(input: ParseStream) -> syn::Result<Vec<LitStr>> {
    let content;
    syn::parenthesized!(content in input);
    Ok(Punctuated::<LitStr, Token![,]>::parse_terminated(&content)?
        .into_iter()
        .collect())
}

impl PluginArgs {
    /// Parse the attribute's token stream.
    pub fn parse(attr: proc_macro2::TokenStream, span: Span) -> syn::Result<PluginArgs> {
        let mut args = PluginArgs::default();
        let parser = syn::meta::parser(|meta| {
            let key = meta
                .path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            match key.as_str() {
                "name" => args.name = Some(meta.value()?.parse()?),
                "version" => args.version = Some(meta.value()?.parse()?),
                "description" => args.description = Some(meta.value()?.parse()?),
                "manifest_base" => args.manifest_base = Some(meta.value()?.parse()?),
                "migrations" => args.migrations = Some(meta.value()?.parse()?),
                "notifications" => args.notifications.extend(lit_list(meta.input)?),
                "capabilities" => args.capabilities.extend(lit_list(meta.input)?),
                "roles" => {
                    let content;
                    syn::parenthesized!(content in meta.input);
                    let roles = Punctuated::<Ident, Token![,]>::parse_terminated(&content)?;
                    args.roles.extend(roles);
                }
                "crate" => {
                    let value = meta.value()?;
                    args.krate = Some(if value.peek(LitStr) {
                        value.parse::<LitStr>()?.parse()?
                    } else {
                        value.parse()?
                    });
                }
                _ => {
                    return Err(meta.error(format!(
                        "unknown #[kaged_plugin] argument; expected one of: {PLUGIN_ARGS}"
                    )))
                }
            }
            Ok(())
        });
        syn::parse::Parser::parse2(parser, attr)?;
        if args.name.is_none() {
            return Err(syn::Error::new(
                span,
                "missing the plugin name: #[kaged_plugin(name = \"my-plugin\")]",
            ));
        }
        Ok(args)
    }
}

/// What a handler attribute declares.
pub enum Kind {
    /// `#[method("a.b")]`.
    Method(LitStr),
    /// `#[tool]` or `#[tool(name = "x")]`: the name, where to point, the
    /// description (doc comment).
    Tool {
        name: String,
        span: Span,
        description: String,
    },
    /// `#[hook]` or `#[hook(pre_compact)]`: the hook name and where to point.
    Hook { name: String, span: Span },
    /// `#[config]`.
    Config,
    /// `#[shutdown]`.
    Shutdown,
}

/// Which handler attribute a function carries, if any (`None` for plain
/// helper functions). Errors when it carries two, or a malformed one.
pub fn handler_kind(f: &ImplItemFn) -> syn::Result<Option<(Kind, Span)>> {
    let mut found: Option<(Kind, Span)> = None;
    for attr in &f.attrs {
        let Some(kind) = kind_of(attr, f)? else {
            continue;
        };
        if found.is_some() {
            return Err(syn::Error::new(
                attr.span(),
                "a function can carry only one of #[method], #[tool], #[hook], #[config], #[shutdown]",
            ));
        }
        found = Some((kind, attr.span()));
    }
    Ok(found)
}

/// Whether `attr` is one of the handler attributes this macro consumes.
pub fn is_handler_attr(attr: &Attribute) -> bool {
    ["method", "tool", "hook", "config", "shutdown"]
        .iter()
        .any(|n| attr.path().is_ident(n))
}

fn kind_of(attr: &Attribute, f: &ImplItemFn) -> syn::Result<Option<Kind>> {
    let path = attr.path();
    let no_args = matches!(attr.meta, syn::Meta::Path(_));
    if path.is_ident("method") {
        if no_args {
            return Err(syn::Error::new(
                attr.span(),
                "#[method] needs the method name: #[method(\"presets.list\")]",
            ));
        }
        return Ok(Some(Kind::Method(attr.parse_args()?)));
    }
    if path.is_ident("tool") {
        let mut name: Option<LitStr> = None;
        if !no_args {
            attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("name") {
                    name = Some(meta.value()?.parse()?);
                    Ok(())
                } else {
                    Err(meta.error("unknown #[tool] argument; expected `name = \"...\"` (the description is the doc comment)"))
                }
            })?;
        }
        let (name, span) = match name {
            Some(l) => (l.value(), l.span()),
            None => (f.sig.ident.to_string(), f.sig.ident.span()),
        };
        let description = doc_text(&f.attrs).ok_or_else(|| {
            syn::Error::new(
                f.sig.ident.span(),
                "a #[tool] needs a doc comment: it is the tool's description",
            )
        })?;
        return Ok(Some(Kind::Tool {
            name,
            span,
            description,
        }));
    }
    if path.is_ident("hook") {
        let ident: Ident = if no_args {
            f.sig.ident.clone()
        } else {
            attr.parse_args()?
        };
        return Ok(Some(Kind::Hook {
            name: ident.to_string(),
            span: ident.span(),
        }));
    }
    for (n, kind) in [("config", Kind::Config), ("shutdown", Kind::Shutdown)] {
        if path.is_ident(n) {
            if !no_args {
                return Err(syn::Error::new(
                    attr.span(),
                    format!("#[{n}] takes no arguments"),
                ));
            }
            return Ok(Some(kind));
        }
    }
    Ok(None)
}

/// The doc comment as a description: lines trimmed, joined by spaces
/// within a paragraph, paragraphs separated by a blank line.
pub fn doc_text(attrs: &[Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        if let syn::Meta::NameValue(nv) = &attr.meta {
            if let Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
            {
                lines.push(s.value().trim().to_string());
            }
        }
    }
    let mut paragraphs: Vec<String> = Vec::new();
    let mut current = String::new();
    for line in lines {
        if line.is_empty() {
            if !current.is_empty() {
                paragraphs.push(std::mem::take(&mut current));
            }
        } else {
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(&line);
        }
    }
    if !current.is_empty() {
        paragraphs.push(current);
    }
    (!paragraphs.is_empty()).then(|| paragraphs.join("\n\n"))
}
