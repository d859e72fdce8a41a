//! Attestations: `run --attest FILE` writes an [in-toto Statement
//! v1](https://github.com/in-toto/attestation/blob/main/spec/v1/statement.md)
//! saying what this run certified, and `verify STATEMENT DIR` checks that
//! a plugin directory is the one certified and that the outcome was
//! "certified" (under a given policy).
//!
//! - The subject is the plugin's installed copy, as `plugin install` makes
//!   it, by its tree digest ([`tree::installed_digest`], algorithm
//!   [`TREE_ALGORITHM`]): the same directory gives the same digest on any
//!   machine, and one changed byte another.
//! - The predicate ([`PREDICATE_TYPE`], JSON Schema [`PREDICATE_SCHEMA`])
//!   holds the kit's version, the policy and its digest, the cage as
//!   applied, the host facts that matter (bwrap, kernel, Landlock,
//!   cgroup), every case's verdict and the outcome.
//!
//! Signing is left to the infrastructure that signs build provenance:
//! `actions/attest` (Sigstore, keyless) on GitHub, `cosign attest-blob` on
//! GitLab (docs/conformance.md § Attestations).

mod statement;
pub mod tree;
mod verify;

pub use statement::statement;
pub use tree::AttestError;
pub use verify::{verify, Verified, VerifyError};

/// The in-toto Statement type.
pub const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";

/// The predicate type of a kaged-conformance attestation.
pub const PREDICATE_TYPE: &str = "https://kaged.dev/attestation/conformance/v1";

/// The JSON Schema of the predicate (draft 2020-12).
pub const PREDICATE_SCHEMA: &str = include_str!("predicate.schema.json");

/// The tree digest's algorithm, named in the predicate.
pub const TREE_ALGORITHM: &str = "kaged-tree-v1";
