//! Cases of the conformance profile (`kaged-conformance.yaml`, see
//! `crate::profile`): the profile checks, matches what an SDK plugin's
//! code generates, and the custom methods answer its examples and refuse
//! its invalid params. Without a profile they skip, naming the methods
//! called with `{}` only. The plugin's own golden transcripts
//! (`golden.transcripts`) are the other file of its own the suite checks.

use super::case::Level::{Must, Should};
use super::case::{CaseDef, Lane, Per};
use super::kind::Kind;

cases! {
    /// `profile.valid` (MUST): the conformance profile, when there is one, is
    /// valid for the manifest.
    PROFILE_VALID = CaseDef {
        id: "profile.valid",
        title: "The conformance profile, if any, is valid for the manifest",
        level: Must,
        spec: "docs/conformance.md § Conformance profiles",
        sentence: "A profile (profile: 1) names custom methods of the manifest; its schemas are JSON Schemas; every example's params satisfy params_schema and every invalid call's params break it.",
        per: Per::Plugin,
        kind: Kind::ManifestInvalid,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `profile.current` (SHOULD): an SDK plugin's profile on disk holds what
    /// its binary generates (`--print-profile`).
    PROFILE_CURRENT = CaseDef {
        id: "profile.current",
        title: "The profile on disk holds what the plugin binary generates (--print-profile)",
        level: Should,
        spec: "docs/authoring.md § The manifest follows from the code; docs/conformance.md § Conformance profiles",
        sentence: "An SDK plugin's profile follows from its Rust types: a profile whose schemas or examples drifted from the code calls its methods with params the code no longer takes.",
        per: Per::Plugin,
        kind: Kind::ManifestDrift,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };

    /// `methods.examples[<method>]` (MUST): the method answers its profile's
    /// examples with results as declared.
    METHODS_EXAMPLES = CaseDef {
        id: "methods.examples",
        title: "The method answers its profile's examples with the results declared",
        level: Must,
        spec: "plugin-host.md § Plugin-declared methods; docs/conformance.md § Conformance profiles",
        sentence: "These are the plugin's business logic. The method names are declared in the manifest's methods field and confirmed in the initialize response.",
        per: Per::Method,
        kind: Kind::WrongAnswer,
        lane: Lane::Shared("profile"),
        start_gate: false,
        rules: &[],
    };

    /// `methods.invalid_params[<method>]` (MUST): the method refuses its
    /// profile's invalid params with the declared error code.
    METHODS_INVALID_PARAMS = CaseDef {
        id: "methods.invalid_params",
        title: "The method refuses its profile's invalid params with the declared code",
        level: Must,
        spec: "plugin-host.md § Error codes; docs/conformance.md § Conformance profiles",
        sentence: "-32602 Invalid params: Method exists but params are wrong.",
        per: Per::Method,
        kind: Kind::WrongAnswer,
        lane: Lane::Shared("profile"),
        start_gate: false,
        rules: &[],
    };

    /// `golden.transcripts` (MUST): the plugin's own golden transcripts
    /// (`tests/*.golden.jsonl`, each with its session script beside it)
    /// match what it does now.
    GOLDEN_TRANSCRIPTS = CaseDef {
        id: "golden.transcripts",
        title: "The plugin's own golden transcripts (tests/*.golden.jsonl) match what it does now",
        level: Must,
        spec: "docs/any-language.md § 6; docs/conformance.md § Certifying under a policy (golden)",
        sentence: "A golden transcript is what the plugin's author pinned: each tests/NAME.golden.jsonl is the normal-form transcript of the session script tests/NAME.yaml; a difference, or a step that fails, is a change the author did not accept.",
        per: Per::Plugin,
        kind: Kind::WrongAnswer,
        lane: Lane::Own,
        start_gate: false,
        rules: &[],
    };
}
