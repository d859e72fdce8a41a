//! Cases of the conformance profile (`kaged-conformance.yaml`, see
//! `crate::profile`): the profile checks, matches what an SDK plugin's
//! code generates, and the custom methods answer its examples and refuse
//! its invalid params. Without a profile they skip, naming the methods
//! called with `{}` only.

use super::case::CaseDef;
use super::case::Level::{Must, Should};

/// `profile.valid` (MUST): the conformance profile, when there is one, is
/// valid for the manifest.
pub const PROFILE_VALID: CaseDef = CaseDef {
    id: "profile.valid",
    title: "The conformance profile, if any, is valid for the manifest",
    level: Must,
    spec: "docs/conformance.md § Conformance profiles",
    sentence: "A profile (profile: 1) names custom methods of the manifest; its schemas are JSON Schemas; every example's params satisfy params_schema and every invalid call's params break it.",
    per: None,
};

/// `profile.current` (SHOULD): an SDK plugin's profile on disk holds what
/// its binary generates (`--print-profile`).
pub const PROFILE_CURRENT: CaseDef = CaseDef {
    id: "profile.current",
    title: "The profile on disk holds what the plugin binary generates (--print-profile)",
    level: Should,
    spec: "docs/authoring.md § The manifest follows from the code; docs/conformance.md § Conformance profiles",
    sentence: "An SDK plugin's profile follows from its Rust types: a profile whose schemas or examples drifted from the code calls its methods with params the code no longer takes.",
    per: None,
};

/// `methods.examples[<method>]` (MUST): the method answers its profile's
/// examples with results as declared.
pub const METHODS_EXAMPLES: CaseDef = CaseDef {
    id: "methods.examples",
    title: "The method answers its profile's examples with the results declared",
    level: Must,
    spec: "plugin-host.md § Plugin-declared methods; docs/conformance.md § Conformance profiles",
    sentence: "These are the plugin's business logic. The method names are declared in the manifest's methods field and confirmed in the initialize response.",
    per: Some("method"),
};

/// `methods.invalid_params[<method>]` (MUST): the method refuses its
/// profile's invalid params with the declared error code.
pub const METHODS_INVALID_PARAMS: CaseDef = CaseDef {
    id: "methods.invalid_params",
    title: "The method refuses its profile's invalid params with the declared code",
    level: Must,
    spec: "plugin-host.md § Error codes; docs/conformance.md § Conformance profiles",
    sentence: "-32602 Invalid params: Method exists but params are wrong.",
    per: Some("method"),
};
