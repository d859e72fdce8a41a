//! Attribute macros for kaged plugins, re-exported by `kaged-plugin-sdk`.
//!
//! Layers, top first (`scripts/module-layers.py` checks that every import
//! runs down): <!-- layers: check expand > handler > sig > parse -->
//!
//! `#[kaged_plugin(..)]` on an `impl` block turns its annotated `async fn`s
//! into a plugin: `#[method("a.b")]`, `#[tool]`, `#[hook]`, `#[config]` and
//! `#[shutdown]`. It expands to calls on the SDK's builder API
//! (`kaged_plugin_sdk::Plugin::builder`), which stays a first-class way to
//! write a plugin by hand. Names are checked at compile time with the
//! protocol's own rules (`kaged_plugin_protocol::names`, the code the SDK and
//! the host run), so a bad name is an error at the offending token rather
//! than at run time.
//!
//! See the SDK's documentation of `kaged_plugin` for the full syntax.

mod check;
mod expand;
mod handler;
mod parse;
mod sig;

use proc_macro::TokenStream;
use syn::spanned::Spanned;
use syn::{ImplItem, ItemImpl};

use handler::Handler;

/// The protocol's name rules: one source of rules for the macros, the SDK
/// and the host.
use kaged_plugin_protocol::names as rules;

/// Declare a kaged plugin from an `impl` block (runnable examples: the
/// SDK's `KagedPlugin` trait and `docs/authoring.md`).
///
/// ```text
/// #[kaged_plugin(name = "memory-markdown", notifications("memory.saved"), roles(observer))]
/// impl Memory {
///     /// Store information in long-term memory.
///     #[tool]
///     async fn retain(&self, args: Retain, call: Call) -> Result<Retained, PluginError> { .. }
///
///     #[method("presets.list")]
///     async fn presets(&self) -> Result<Vec<String>, PluginError> { .. }
///
///     #[hook]
///     async fn on_session_idle(&self, p: SessionIdleParams) -> Result<(), PluginError> { .. }
/// }
/// ```
///
/// A `#[method]`'s params and result types that derive
/// `schemars::JsonSchema` also give the plugin's conformance profile
/// (`--print-profile`: `params_schema`, `result_schema`, and the params
/// type's `#[schemars(example = ..)]`s as examples); types without it are
/// left out, without an error.
///
/// Arguments: `name = ".."` (required), `version = ".."` (default: the
/// crate's), `description = ".."`, `notifications(".."..)`, `roles(observer,
/// compactor)`, `capabilities(".."..)` (reported in `capabilities_used` and
/// the manifest), `manifest_base = "kaged-plugin.base.yaml"` (relative to
/// the crate's Cargo.toml), `crate = path` (where the SDK is, when
/// re-exported).
#[proc_macro_attribute]
pub fn kaged_plugin(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut item = match syn::parse::<ItemImpl>(item) {
        Ok(i) => i,
        Err(e) => {
            let msg = format!("#[kaged_plugin] goes on an `impl` block: {e}");
            return syn::Error::new(e.span(), msg).to_compile_error().into();
        }
    };
    let mut errors = check::Errors::default();
    let args = match parse::PluginArgs::parse(attr.into(), item.impl_token.span()) {
        Ok(a) => Some(a),
        Err(e) => {
            errors.push(e);
            None
        }
    };
    if let Some(t) = &item.trait_ {
        errors.at(
            t.1.span(),
            "#[kaged_plugin] goes on an inherent `impl MyPlugin { .. }` block, not a trait impl",
        );
    }
    if !item.generics.params.is_empty() {
        errors.at(
            item.generics.span(),
            "a plugin type cannot be generic: declare the plugin on a concrete type",
        );
    }
    let handlers = collect_handlers(&mut item, &mut errors);
    let krate = args
        .as_ref()
        .and_then(|a| match expand::sdk_path(a, item.impl_token.span()) {
            Ok(k) => Some(k),
            Err(e) => {
                errors.push(e);
                None
            }
        });
    if let Some(args) = &args {
        check::check(args, &handlers, &mut errors);
    }
    match (errors.finish(), args, krate) {
        (Ok(()), Some(args), Some(krate)) => expand::expand(&item, &args, &handlers, &krate).into(),
        // Emit the impl block too (handler attributes stripped) so that
        // its own code is still checked and no error cascades.
        (Err(e), _, _) => {
            let err = e.to_compile_error();
            quote::quote!(#item #err).into()
        }
        (Ok(()), _, _) => quote::quote!(#item).into(),
    }
}

/// Strip the handler attributes from the impl's functions, recording each
/// handler (or the problem with it).
fn collect_handlers(item: &mut ItemImpl, errors: &mut check::Errors) -> Vec<Handler> {
    let mut handlers = Vec::new();
    for impl_item in &mut item.items {
        let ImplItem::Fn(f) = impl_item else { continue };
        match parse::handler_kind(f) {
            Ok(Some((kind, attr_span))) => match sig::analyse(f, &kind) {
                Ok(sig) => handlers.push(Handler {
                    kind,
                    attr_span,
                    ident: f.sig.ident.clone(),
                    sig,
                }),
                Err(e) => errors.push(e),
            },
            Ok(None) => {}
            Err(e) => errors.push(e),
        }
        f.attrs.retain(|a| !parse::is_handler_attr(a));
    }
    handlers
}
