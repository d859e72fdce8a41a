//! The properties a fuzz run checks, one table (architecture rule 5): each
//! is one case of the fuzz report.

use crate::catalogue::Level;

macro_rules! properties {
    ($($(#[doc = $doc:literal])* $variant:ident => $id:literal, $level:ident, $spec:literal;)*) => {
        /// A property of every step; see each variant.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Property {
            $($(#[doc = $doc])* $variant,)*
        }

        impl Property {
            /// Every property, in report order.
            pub const ALL: &'static [Property] = &[$(Property::$variant,)*];

            /// The case id in the report.
            pub const fn id(self) -> &'static str {
                match self { $(Property::$variant => $id,)* }
            }

            /// MUST or SHOULD.
            pub const fn level(self) -> Level {
                match self { $(Property::$variant => Level::$level,)* }
            }

            /// The spec section it rests on.
            pub const fn spec(self) -> &'static str {
                match self { $(Property::$variant => $spec,)* }
            }

            /// The title (the doc comment).
            pub fn title(self) -> &'static str {
                match self { $(Property::$variant => concat!($($doc),*),)* }.trim()
            }
        }
    };
}

properties! {
    /// The plugin never crashes or stops answering
    NoCrash => "fuzz.no_crash", Must, "plugin-host.md § Failure modes";
    /// Every answer arrives within its budget
    AnswersInTime => "fuzz.answers_in_time", Must, "plugin-host.md § Failure modes (request timeout)";
    /// Tool arguments the schema refuses get -32602
    InvalidArgsRejected => "fuzz.invalid_args_rejected", Must, "ADDENDUM §1 (tool invocation); plugin-host.md § Error codes";
    /// Tool arguments the schema allows get a result or a domain error (never -32602 or -32603)
    ValidArgsAccepted => "fuzz.valid_args_accepted", Must, "ADDENDUM §1 (tool invocation); plugin-host.md § Error codes";
    /// A config the schema refuses gets -32004
    InvalidConfigRejected => "fuzz.invalid_config_rejected", Should, "plugin-host.md § Error codes (config_invalid)";
    /// A config the schema allows is never refused with -32004
    ValidConfigAccepted => "fuzz.valid_config_accepted", Should, "plugin-host.md § Merging";
    /// Every hook answers with a shape the spec allows, not an error
    HookAnswers => "fuzz.hook_answers", Must, "plugin-host.md § Lifecycle hooks; ADDENDUM §5-6";
    /// The designated compactor's answers keep the contract (always-keep messages kept)
    CompactorContract => "fuzz.compactor_contract", Must, "ADR-0024; ADDENDUM §5-6 (the compactor contract)";
    /// No protocol violation, storage denial, stdout noise, oversize line or flood is audited
    CleanWire => "fuzz.clean_wire", Must, "plugin-host.md § Wire protocol";
    /// Memory does not grow call after call
    MemoryBounded => "fuzz.memory_bounded", Should, "plugin-host.md § Resource limits";
}
