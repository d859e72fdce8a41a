//! Where the kit lives: the workspace's one `repository` setting
//! (`[workspace.package]` in the root `Cargo.toml`, which every crate
//! inherits). The GitHub Action's `uses:` reference, the `cargo install
//! --git` lines of the docs and cargo-binstall's release URLs all derive
//! from it; `conformance/tests/release.rs` checks that every doc, workflow
//! and manifest says the same, so moving the kit is one line.
//!
//! ```
//! use kaged_conformance::home;
//! assert!(home::REPOSITORY.starts_with("https://github.com/"));
//! assert!(home::action_ref().ends_with("/conformance/action@v1"));
//! ```

/// The kit's repository (the workspace's `repository`).
pub const REPOSITORY: &str = env!("CARGO_PKG_REPOSITORY");

/// The action's folder in the repository.
pub const ACTION_DIR: &str = "conformance/action";

/// The action's major-version tag (moved to each release of the kit).
pub const ACTION_TAG: &str = "v1";

/// The GitHub Action as a workflow's `uses:` names it:
/// `OWNER/REPO/conformance/action@v1`, from [`REPOSITORY`].
pub fn action_ref() -> String {
    let repo = REPOSITORY.trim_end_matches('/').trim_end_matches(".git");
    let repo = repo.strip_prefix("https://github.com/").unwrap_or(repo);
    format!("{repo}/{ACTION_DIR}@{ACTION_TAG}")
}

/// Whether [`REPOSITORY`] names a real repository rather than the
/// unpublished kit's placeholder (`OWNER`): CI that `init` writes names
/// the action only when it does.
pub fn is_real() -> bool {
    !REPOSITORY.contains("/OWNER/")
}

/// The line a CI job installs the kit's `crates` from source with.
pub fn cargo_install_git(crates: &str) -> String {
    format!("cargo install --locked --git {REPOSITORY} {crates}")
}
