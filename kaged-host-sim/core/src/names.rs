//! Names as data: [`name_table!`] declares an enum whose variants each
//! have a name string, a description (their doc comment) and optional
//! per-variant columns, with the lookups every such table has. The audit
//! events, the protocol violations and the validation rules are declared
//! with it.

/// Declare a name table: an enum, `ALL` (every variant in table order),
/// `as_str` (the name), `description` (the doc comment, `trim`med or
/// `raw`), a lookup by name and, optionally, `Display` (the name) and
/// columns (one `const fn` per column, read from a private struct built
/// per variant).
///
/// ```text
/// name_table! {
///     /// The enum's doc.
///     #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
///     pub enum Kind {
///         /// doc of ALL
///         const ALL;
///         /// doc of as_str
///         fn as_str;
///         /// doc of description
///         fn description = trim;
///         /// doc of the lookup
///         fn parse;
///         impl Display;
///         columns KindColumns {
///             /// doc of the column's accessor
///             fatal: bool,
///         }
///     }
///     /// A variant's doc: its description.
///     First => "first" { fatal: true },
/// }
/// ```
macro_rules! name_table {
    // With columns.
    (
        $(#[$attr:meta])*
        $vis:vis enum $Enum:ident {
            $(#[doc = $all_doc:literal])* const ALL;
            $(#[doc = $str_doc:literal])* fn as_str;
            $(#[doc = $desc_doc:literal])* fn description = $trim:ident;
            $(#[doc = $find_doc:literal])* fn $find:ident;
            $(impl $Display:ident;)?
            columns $Columns:ident {
                $($(#[doc = $col_doc:literal])* $col:ident: $col_ty:ty,)+
            }
        }
        $($(#[doc = $doc:literal])* $variant:ident => $name:literal
            { $($field:ident: $value:expr),+ $(,)? },)*
    ) => {
        $crate::names::name_table! {
            $(#[$attr])*
            $vis enum $Enum {
                $(#[doc = $all_doc])* const ALL;
                $(#[doc = $str_doc])* fn as_str;
                $(#[doc = $desc_doc])* fn description = $trim;
                $(#[doc = $find_doc])* fn $find;
                $(impl $Display;)?
            }
            $($(#[doc = $doc])* $variant => $name,)*
        }

        /// One row's columns.
        #[derive(Clone, Copy)]
        struct $Columns {
            $($col: $col_ty,)+
        }

        impl $Enum {
            const fn columns(self) -> $Columns {
                match self {
                    $($Enum::$variant => $Columns { $($field: $value),+ },)*
                }
            }

            $(
                $(#[doc = $col_doc])*
                pub const fn $col(self) -> $col_ty {
                    self.columns().$col
                }
            )+
        }
    };
    // Without columns.
    (
        $(#[$attr:meta])*
        $vis:vis enum $Enum:ident {
            $(#[doc = $all_doc:literal])* const ALL;
            $(#[doc = $str_doc:literal])* fn as_str;
            $(#[doc = $desc_doc:literal])* fn description = $trim:ident;
            $(#[doc = $find_doc:literal])* fn $find:ident;
            $(impl $Display:ident;)?
        }
        $($(#[doc = $doc:literal])* $variant:ident => $name:literal,)*
    ) => {
        $(#[$attr])*
        $vis enum $Enum {
            $($(#[doc = $doc])* $variant,)*
        }

        impl $Enum {
            $(#[doc = $all_doc])*
            pub const ALL: &'static [$Enum] = &[$($Enum::$variant,)*];

            $(#[doc = $str_doc])*
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($Enum::$variant => $name,)*
                }
            }

            $(#[doc = $desc_doc])*
            pub fn description(self) -> &'static str {
                let doc = match self {
                    $($Enum::$variant => concat!($($doc),*),)*
                };
                $crate::names::name_table!(@$trim doc)
            }

            $(#[doc = $find_doc])*
            pub fn $find(name: &str) -> Option<$Enum> {
                $Enum::ALL.iter().copied().find(|v| v.as_str() == name)
            }
        }

        $(
            impl std::fmt::$Display for $Enum {
                fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str(self.as_str())
                }
            }
        )?
    };
    // A description as the doc comment gives it (each line keeps the
    // space after `///`).
    (@raw $doc:ident) => {
        $doc
    };
    // A description without its leading and trailing space.
    (@trim $doc:ident) => {
        $doc.trim()
    };
}

pub(crate) use name_table;
