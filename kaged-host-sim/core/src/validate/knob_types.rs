//! The eight knob types and the names of their type-specific fields
//! (`plugin-host.md` § Plugin knob schema, "Knob types"); the fields are
//! checked in [`super::knob_fields`].

/// A knob type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KnobType {
    /// Slider over numbers.
    Range,
    /// Slider over integers.
    IntRange,
    /// One of a list of strings.
    Enum,
    /// Toggle.
    Boolean,
    /// Single-line text.
    Text,
    /// Multi-line text.
    Multiline,
    /// Model picker.
    ModelAlias,
    /// Path with a URI prefix.
    Path,
}

impl KnobType {
    /// Every knob type, in the spec's order.
    pub const ALL: [KnobType; 8] = [
        KnobType::Range,
        KnobType::IntRange,
        KnobType::Enum,
        KnobType::Boolean,
        KnobType::Text,
        KnobType::Multiline,
        KnobType::ModelAlias,
        KnobType::Path,
    ];

    /// The manifest spelling (`int_range`).
    pub const fn as_str(self) -> &'static str {
        match self {
            KnobType::Range => "range",
            KnobType::IntRange => "int_range",
            KnobType::Enum => "enum",
            KnobType::Boolean => "boolean",
            KnobType::Text => "text",
            KnobType::Multiline => "multiline",
            KnobType::ModelAlias => "model_alias",
            KnobType::Path => "path",
        }
    }

    /// What the settings page shows for it (the generated reference's
    /// "Knob types" table).
    pub const fn description(self) -> &'static str {
        match self {
            KnobType::Range => "a slider over numbers",
            KnobType::IntRange => "a slider over integers",
            KnobType::Enum => "one of a list of strings (`labels`: what the page shows for each)",
            KnobType::Boolean => "a toggle",
            KnobType::Text => "single-line text",
            KnobType::Multiline => "multi-line text",
            KnobType::ModelAlias => "a model picker (`filter`: which models it offers)",
            KnobType::Path => "a path under one of `prefixes` (`must_exist`: checked on write, under the config and project roots)",
        }
    }

    /// The type with this spelling.
    pub fn parse(s: &str) -> Option<KnobType> {
        KnobType::ALL.into_iter().find(|t| t.as_str() == s)
    }

    /// The type-specific fields: (name, required).
    pub const fn fields(self) -> &'static [(&'static str, bool)] {
        match self {
            KnobType::Range | KnobType::IntRange => &[
                ("min", true),
                ("max", true),
                ("step", true),
                ("default", true),
            ],
            KnobType::Enum => &[("values", true), ("default", true), ("labels", false)],
            KnobType::Boolean => &[("default", true)],
            KnobType::Text => &[("default", true), ("max_length", false), ("pattern", false)],
            KnobType::Multiline => &[("default", true), ("max_length", false)],
            KnobType::ModelAlias => &[("default", true), ("filter", false)],
            KnobType::Path => &[("default", true), ("prefixes", true), ("must_exist", false)],
        }
    }
}
