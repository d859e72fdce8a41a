//! One handler function of the `#[kaged_plugin]` impl block, as the checks
//! and the expansion see it.

use crate::parse::Kind;
use crate::sig::Sig;

/// One handler function of the impl block.
pub(crate) struct Handler {
    /// What its attribute declares (method, tool, hook...).
    pub kind: Kind,
    /// Where the attribute is, for errors about the declaration.
    pub attr_span: proc_macro2::Span,
    /// The function's name.
    pub ident: syn::Ident,
    /// Its analysed signature.
    pub sig: Sig,
}
