//! Asking a type for its JSON Schema without requiring one: what
//! `#[kaged_plugin]` uses to put a `#[method]`'s params and result types in
//! the conformance profile when they derive `schemars::JsonSchema`, and to
//! leave them out (with no error) when they do not.
//!
//! The macro knows the handler's types by name only, so it asks by method
//! resolution ("autoref specialization"): `(&&SchemaProbe::<T>::new()).schema()`
//! finds [`HasSchema`] (implemented for `&SchemaProbe<T>` when `T:
//! JsonSchema`) before it derefs to [`NoSchema`] (implemented for every
//! `SchemaProbe<T>`). The same goes for [`ResultProbe`] and a handler's
//! `Result<T, E>` return type. Both traits must be in scope at the call.
//!
//! ```
//! use kaged_plugin_sdk::__private::{HasSchema as _, NoSchema as _, SchemaProbe};
//! struct Opaque;
//! assert!((&&SchemaProbe::<u8>::new()).schema().is_some());
//! assert!((&&SchemaProbe::<Opaque>::new()).schema().is_none());
//! ```

use std::marker::PhantomData;

use schemars::JsonSchema;
use serde_json::Value;

use crate::tool::schema_for;

/// Stands for the type `T` (see the module docs).
pub struct SchemaProbe<T>(PhantomData<fn() -> T>);

impl<T> SchemaProbe<T> {
    /// The probe of `T`.
    pub const fn new() -> Self {
        SchemaProbe(PhantomData)
    }
}

impl<T> Default for SchemaProbe<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// The schema of a type that has one.
pub trait HasSchema {
    /// `T`'s JSON Schema.
    fn schema(&self) -> Option<Value>;
}

impl<T: JsonSchema> HasSchema for &SchemaProbe<T> {
    fn schema(&self) -> Option<Value> {
        Some(schema_for::<T>())
    }
}

/// No schema, for a type without one.
pub trait NoSchema {
    /// `None`.
    fn schema(&self) -> Option<Value>;
}

impl<T> NoSchema for SchemaProbe<T> {
    fn schema(&self) -> Option<Value> {
        None
    }
}

/// Stands for a handler's return type `R` (see the module docs): the
/// schema is that of `T` when `R` is `Result<T, E>` and `T: JsonSchema`.
pub struct ResultProbe<R>(PhantomData<fn() -> R>);

impl<R> ResultProbe<R> {
    /// The probe of `R`.
    pub const fn new() -> Self {
        ResultProbe(PhantomData)
    }
}

impl<R> Default for ResultProbe<R> {
    fn default() -> Self {
        Self::new()
    }
}

/// The schema of a `Result`'s success type that has one.
pub trait HasResultSchema {
    /// `T`'s JSON Schema.
    fn result_schema(&self) -> Option<Value>;
}

impl<T: JsonSchema, E> HasResultSchema for &ResultProbe<Result<T, E>> {
    fn result_schema(&self) -> Option<Value> {
        Some(schema_for::<T>())
    }
}

/// No schema, for any other return type.
pub trait NoResultSchema {
    /// `None`.
    fn result_schema(&self) -> Option<Value>;
}

impl<R> NoResultSchema for ResultProbe<R> {
    fn result_schema(&self) -> Option<Value> {
        None
    }
}

/// The params of a `#[method]` whose params type probed `schema`.
pub fn params_schema(schema: Option<Value>) -> crate::describe::ParamsSchema {
    match schema {
        Some(s) => crate::describe::ParamsSchema::Schema(s),
        None => crate::describe::ParamsSchema::Unknown,
    }
}
