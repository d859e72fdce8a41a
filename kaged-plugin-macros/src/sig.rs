//! Handler signatures: what the SDK can call, with an error naming the
//! offending part when it cannot.

use syn::spanned::Spanned;
use syn::{FnArg, ImplItemFn, ReturnType, Type};

use crate::parse::Kind;

/// A callable handler signature.
pub struct Sig {
    /// The params (or tool arguments, or config) type, if taken.
    pub params: Option<Type>,
    /// Whether the handler takes the context (`Call`, or `Host` for config).
    pub ctx: bool,
    /// The declared return type (`None` for `()`).
    pub output: Option<Type>,
}

fn attr_name(kind: &Kind) -> &'static str {
    match kind {
        Kind::Method(_) => "#[method]",
        Kind::Tool { .. } => "#[tool]",
        Kind::Hook { .. } => "#[hook]",
        Kind::Config => "#[config]",
        Kind::Shutdown => "#[shutdown]",
    }
}

/// Whether `ty` is spelled `Call`/`Host` (the context types), by its last
/// path segment.
fn is_ctx_type(ty: &Type, ctx: &str) -> bool {
    match ty {
        Type::Path(p) if p.qself.is_none() => {
            p.path.segments.last().is_some_and(|s| s.ident == ctx)
        }
        _ => false,
    }
}

fn check_owned(ty: &Type) -> syn::Result<()> {
    match ty {
        Type::Reference(r) => Err(syn::Error::new_spanned(
            r,
            "handler arguments must be owned types (e.g. `String`, not `&str`): they are deserialized from the params",
        )),
        Type::ImplTrait(t) => Err(syn::Error::new_spanned(
            t,
            "`impl Trait` arguments are not supported: name a concrete type",
        )),
        _ => Ok(()),
    }
}

/// Check `f`'s signature for a handler of `kind`.
pub fn analyse(f: &ImplItemFn, kind: &Kind) -> syn::Result<Sig> {
    let sig = &f.sig;
    let what = attr_name(kind);
    if sig.asyncness.is_none() {
        return Err(syn::Error::new(
            sig.fn_token.span(),
            format!(
                "a {what} handler must be an `async fn`: write `async fn {}`",
                sig.ident
            ),
        ));
    }
    if !sig.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &sig.generics,
            "a handler cannot have generic parameters",
        ));
    }
    if let Some(w) = &sig.generics.where_clause {
        return Err(syn::Error::new_spanned(
            w,
            "a handler cannot have a where clause",
        ));
    }
    let mut inputs = sig.inputs.iter();
    match inputs.next() {
        Some(FnArg::Receiver(r)) if r.reference.is_some() && r.mutability.is_none() => {}
        Some(FnArg::Receiver(r)) => {
            return Err(syn::Error::new_spanned(
                r,
                "a handler takes `&self`: the plugin is shared between concurrent calls (use a Mutex for mutable state)",
            ))
        }
        Some(other) => {
            return Err(syn::Error::new_spanned(
                other,
                format!("a {what} handler must take `&self` first; found this argument instead"),
            ))
        }
        None => {
            return Err(syn::Error::new(
                sig.paren_token.span.join(),
                format!("a {what} handler must take `&self` as its first argument"),
            ))
        }
    }
    let rest: Vec<&syn::PatType> = inputs
        .map(|a| match a {
            FnArg::Typed(t) => Ok(t),
            FnArg::Receiver(r) => Err(syn::Error::new(r.span(), "unexpected receiver")),
        })
        .collect::<syn::Result<_>>()?;
    for a in &rest {
        check_owned(&a.ty)?;
    }
    let (ctx_name, max, usage) = match kind {
        Kind::Config => ("Host", 2, "the config and optionally the `Host`"),
        Kind::Shutdown => ("", 0, "nothing besides `&self`"),
        _ => (
            "Call",
            2,
            "its params and optionally the call context (`Call`)",
        ),
    };
    if let Some(extra) = rest.get(max) {
        return Err(syn::Error::new_spanned(
            extra,
            format!(
                "too many arguments: a {what} handler takes `&self`, {usage}; remove this argument"
            ),
        ));
    }
    let other_ctx = if ctx_name == "Host" { "Call" } else { "Host" };
    if let Some(wrong) = rest.iter().find(|a| is_ctx_type(&a.ty, other_ctx)) {
        let hint = if ctx_name == "Host" {
            "a #[config] handler gets the `Host`, not a `Call`"
        } else {
            "handlers get the call context as `Call` (its `host` field is the `Host`)"
        };
        return Err(syn::Error::new_spanned(&wrong.ty, hint));
    }
    let (params, ctx) = match rest.as_slice() {
        [] => (None, false),
        [one] if is_ctx_type(&one.ty, ctx_name) && !matches!(kind, Kind::Config) => (None, true),
        [one] => (Some((*one.ty).clone()), false),
        [p, _] => (Some((*p.ty).clone()), true),
        _ => (None, false),
    };
    match kind {
        Kind::Tool { .. } if params.is_none() => {
            return Err(syn::Error::new(
                sig.paren_token.span.join(),
                "a #[tool] handler needs an arguments parameter: a `Deserialize + JsonSchema` struct whose schema is the tool's `parameters_schema`",
            ))
        }
        Kind::Config if params.is_none() => {
            return Err(syn::Error::new(
                sig.paren_token.span.join(),
                "a #[config] handler takes the config type (`Deserialize + JsonSchema`): `async fn configure(&self, config: MyConfig)`",
            ))
        }
        _ => {}
    }
    let output = match &sig.output {
        ReturnType::Type(_, ty) => Some((**ty).clone()),
        ReturnType::Default if matches!(kind, Kind::Shutdown) => None,
        ReturnType::Default => {
            return Err(syn::Error::new(
                sig.ident.span(),
                format!("a {what} handler must return `Result<T, PluginError>` (T: serde::Serialize); add `-> Result<(), PluginError>`"),
            ))
        }
    };
    Ok(Sig {
        params,
        ctx,
        output,
    })
}
