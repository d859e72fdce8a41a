//! Code generation: the impl block, then `plugin_builder()` as calls on the
//! SDK's builder API, and the `KagedPlugin` impl.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, ItemImpl, Path, Type};

use crate::handler::Handler;
use crate::parse::{Kind, PluginArgs};

/// The path of the SDK: the `crate = ..` override, else the dependency as
/// named in the user's Cargo.toml (renames included).
pub fn sdk_path(args: &PluginArgs, span: Span) -> syn::Result<Path> {
    if let Some(p) = &args.krate {
        return Ok(p.clone());
    }
    use proc_macro_crate::{crate_name, FoundCrate};
    match crate_name("kaged-plugin-sdk") {
        // Inside the SDK (its doctests), `extern crate self as kaged_plugin_sdk` resolves this.
        Ok(FoundCrate::Itself) => Ok(syn::parse_quote!(::kaged_plugin_sdk)),
        Ok(FoundCrate::Name(name)) => {
            let ident = format_ident!("{}", name);
            Ok(syn::parse_quote!(::#ident))
        }
        Err(e) => Err(syn::Error::new(
            span,
            format!(
                "cannot find the `kaged-plugin-sdk` dependency ({e}); add it to Cargo.toml, or name the SDK's path with #[kaged_plugin(crate = path::to::sdk, ..)]"
            ),
        )),
    }
}

/// The whole expansion.
pub fn expand(
    item: &ItemImpl,
    args: &PluginArgs,
    handlers: &[Handler],
    krate: &Path,
) -> TokenStream {
    let self_ty = &item.self_ty;
    let name = args.name.as_ref().map(|n| quote!(#n)).unwrap_or_default();
    let version = match &args.version {
        Some(v) => quote!(#v),
        None => quote!(::core::env!("CARGO_PKG_VERSION")),
    };
    let mut steps: Vec<TokenStream> = Vec::new();
    if let Some(base) = &args.manifest_base {
        steps.push(quote_spanned! {base.span()=>
            .manifest_base(::core::include_str!(::core::concat!(::core::env!("CARGO_MANIFEST_DIR"), "/", #base)))
        });
    }
    if let Some(d) = &args.description {
        steps.push(quote!(.description(#d)));
    }
    for n in &args.notifications {
        steps.push(quote!(.notification(#n)));
    }
    for c in &args.capabilities {
        steps.push(quote!(.capability_used(#c)));
    }
    for r in &args.roles {
        let variant = if r == "compactor" {
            quote!(Compactor)
        } else {
            quote!(Observer)
        };
        steps.push(quote!(.role(#krate::protocol::PluginRole::#variant)));
    }
    if let Some(m) = &args.migrations {
        steps.push(quote_spanned! {m.span()=> .migrations(#krate::Migrations::new(#m)) });
    }
    for h in handlers {
        steps.push(handler_step(h, krate));
    }
    let hook_checks: Vec<TokenStream> = handlers.iter().map(|h| hook_check(h, krate)).collect();
    let ty_check = quote_spanned! {self_ty.span()=> #krate::__private::plugin_type::<#self_ty>(); };
    quote! {
        #item

        impl #self_ty {
            /// The SDK builder with every declaration of this plugin (its
            /// methods, tools, hooks...), to extend or run.
            pub fn plugin_builder(self) -> #krate::PluginBuilder {
                <Self as #krate::KagedPlugin>::plugin_builder(self)
            }
        }

        impl #krate::KagedPlugin for #self_ty {
            fn plugin_builder(self) -> #krate::PluginBuilder {
                #ty_check
                #(#hook_checks)*
                let __kaged_this = #krate::__private::Arc::new(self);
                #krate::Plugin::builder(#name)
                    .version(#version)
                    #(#steps)*
            }
        }
    }
}

/// For a `#[hook]`, assertions that its params and answer are that hook's
/// (`kaged_plugin_sdk::__hook_types`), spanned at the author's
/// types so the error names the hook's types there; nothing for the rest.
fn hook_check(h: &Handler, krate: &Path) -> TokenStream {
    let Kind::Hook { name, .. } = &h.kind else {
        return TokenStream::new();
    };
    let mut out = TokenStream::new();
    if let Some(p) = &h.sig.params {
        let f = format_ident!("{}_params", name, span = p.span());
        out.extend(quote_spanned! {p.span()=> #krate::__hook_types::#f::<#p>(); });
    }
    if let Some(ret) = &h.sig.output {
        let f = format_ident!("{}_answer", name, span = ret.span());
        out.extend(quote_spanned! {ret.span()=> #krate::__hook_types::#f::<#ret>(); });
    }
    out
}

/// `.method(..)`, `.tool(..)`, `.hook(..)`, `.on_config(..)` or
/// `.on_shutdown(..)` for one handler.
fn handler_step(h: &Handler, krate: &Path) -> TokenStream {
    let f = &h.ident;
    let value_ty: Type = syn::parse_quote!(#krate::__private::Value);
    let params_ty = h.sig.params.clone().unwrap_or(value_ty);
    // The builder's bounds carry the readable messages; point them at the
    // author's params type by spanning the builder method's name there.
    let span = h.sig.params.as_ref().map_or(h.ident.span(), Spanned::span);
    let p = quote!(__kaged_params);
    let c = quote!(__kaged_ctx);
    let call_args = match (h.sig.params.is_some(), h.sig.ctx) {
        (true, true) => quote!(#p, #c),
        (true, false) => quote!(#p),
        (false, true) => quote!(#c),
        (false, false) => quote!(),
    };
    // The return type as a turbofish argument, so that a wrong one is
    // reported at the author's return type.
    let into_result = match &h.sig.output {
        Some(ret) => quote!(#krate::__private::into_result::<#ret>),
        None => quote!(#krate::__private::into_result),
    };
    // The call's tokens all carry the return type's span: a wrong return
    // type (or a future that is not `Send`) is reported once, there.
    let ret_span = h.sig.output.as_ref().map_or(h.ident.span(), Spanned::span);
    let closure = |ctx_ty: TokenStream, map: TokenStream| {
        let body = respan(
            quote!(#into_result(__kaged_this.#f(#call_args).await)#map),
            ret_span,
        );
        quote! {{
            let __kaged_this = #krate::__private::Arc::clone(&__kaged_this);
            move |#p: #params_ty, #c: #ctx_ty| {
                let __kaged_this = #krate::__private::Arc::clone(&__kaged_this);
                async move { #body }
            }
        }}
    };
    let call = quote!(#krate::Call);
    match &h.kind {
        Kind::Method(lit) => {
            let cl = closure(call, quote!());
            let m = Ident::new("method", span);
            let schemas = method_schemas(h, krate);
            quote!(.#m(#lit, #cl).method_schemas(#lit, #schemas))
        }
        Kind::Tool {
            name, description, ..
        } => {
            let cl = closure(call, quote!());
            let m = Ident::new("tool", span);
            quote!(.#m(#name, #description, #cl))
        }
        Kind::Hook { name, .. } => {
            let variant = match name.as_str() {
                "on_session_start" => quote!(OnSessionStart),
                "on_session_idle" => quote!(OnSessionIdle),
                "pre_compact" => quote!(PreCompact),
                _ => quote!(PostCompact),
            };
            let cl = closure(call, quote!());
            let m = Ident::new("hook", span);
            quote!(.#m(#krate::protocol::HookName::#variant, #cl))
        }
        Kind::Config => {
            let cl = closure(quote!(#krate::Host), quote!(.map(|_| ())));
            let m = Ident::new("on_config", span);
            quote!(.#m(#cl))
        }
        Kind::Shutdown => quote! {
            .on_shutdown({
                let __kaged_this = #krate::__private::Arc::clone(&__kaged_this);
                move || {
                    let __kaged_this = #krate::__private::Arc::clone(&__kaged_this);
                    async move {
                        let _ = __kaged_this.#f().await;
                    }
                }
            })
        },
    }
}

/// For a `#[method]`, what its types say in the conformance profile
/// (`describe::MethodSchemas`): the schemas of its params and result types,
/// asked without requiring them (`__private::SchemaProbe`), so that a type
/// without `JsonSchema` is left out rather than an error.
fn method_schemas(h: &Handler, krate: &Path) -> TokenStream {
    let p = quote!(#krate::__private);
    let params = match &h.sig.params {
        Some(ty) => quote! {
            #p::params_schema({
                use #p::{HasSchema as _, NoSchema as _};
                (&&#p::SchemaProbe::<#ty>::new()).schema()
            })
        },
        None => quote!(#krate::describe::ParamsSchema::None),
    };
    let result = match &h.sig.output {
        Some(ret) => quote! {{
            use #p::{HasResultSchema as _, NoResultSchema as _};
            (&&#p::ResultProbe::<#ret>::new()).result_schema()
        }},
        None => quote!(::core::option::Option::None),
    };
    quote!(#krate::describe::MethodSchemas::new(#params, #result))
}

/// `tokens` with every span set to `span` (hygiene is unchanged: both are
/// call-site spans).
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    use proc_macro2::{Group, TokenTree};
    tokens
        .into_iter()
        .map(|mut t| {
            if let TokenTree::Group(g) = &t {
                let mut ng = Group::new(g.delimiter(), respan(g.stream(), span));
                ng.set_span(span);
                return TokenTree::Group(ng);
            }
            t.set_span(span);
            t
        })
        .collect()
}
