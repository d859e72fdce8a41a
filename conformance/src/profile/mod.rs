//! The conformance profile as the suite uses it: `kaged-conformance.yaml`
//! beside the manifest (or the file `--conformance-profile` names), whose
//! model is `kaged_plugin_protocol::profile`. [`load`] reads it, checks it against
//! the manifest and JSON Schema (`check.rs`) and compiles its schemas once;
//! the cases `profile.valid`, `methods.examples[..]` and
//! `methods.invalid_params[..]` and the fuzzer read the result.
//!
//! ```no_run
//! use kaged_conformance::profile::{load, Loaded};
//! use kaged_plugin_protocol::manifest::Manifest;
//! let dir = std::path::Path::new("plugins/notes");
//! let manifest = Manifest::load_dir(dir)?;
//! match load(&dir.join("kaged-conformance.yaml"), &manifest) {
//!     Loaded::Absent => println!("no profile: methods are called with {{}} only"),
//!     Loaded::Invalid(e) => println!("{e}"),
//!     Loaded::Valid(p) => println!("{} methods profiled", p.profile.methods.len()),
//! }
//! # Ok::<(), kaged_plugin_protocol::manifest::ManifestError>(())
//! ```

mod check;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use jsonschema::Validator;
use kaged_plugin_protocol::manifest::{parse_yaml, Manifest};
use kaged_plugin_protocol::profile::{MethodProfile, Profile, ProfileError};
use serde_json::Value;

pub use kaged_plugin_protocol::profile::PROFILE_FILE;

/// A profile that does not load or does not check: every problem, each
/// naming the field (`methods.notes.add.examples[0].params`) and where it
/// is.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}: {}", path.display(), problems.join("; "))]
pub struct InvalidProfile {
    /// The profile file.
    pub path: PathBuf,
    /// What is wrong, one problem each.
    pub problems: Vec<String>,
}

/// What [`load`] found.
#[derive(Debug, Clone)]
pub enum Loaded {
    /// There is no profile.
    Absent,
    /// There is one, and it is unusable.
    Invalid(InvalidProfile),
    /// There is one, and it checks.
    Valid(Arc<ValidProfile>),
}

/// A profile that checked, its schemas compiled.
#[derive(Debug)]
pub struct ValidProfile {
    /// The profile file.
    pub path: PathBuf,
    /// The profile.
    pub profile: Profile,
    results: BTreeMap<String, Arc<Validator>>,
}

impl ValidProfile {
    /// The entry of `method`, if the profile has one.
    pub fn method(&self, method: &str) -> Option<&MethodProfile> {
        self.profile.methods.get(method)
    }

    /// Why `result` of `method` breaks the method's `result_schema` (and
    /// `example_schema`, an example's own), if it does.
    pub fn result_problem(
        &self,
        method: &str,
        example_schema: Option<&Value>,
        result: &Value,
    ) -> Option<String> {
        if let Some(v) = self.results.get(method) {
            if let Err(e) = v.validate(result) {
                return Some(format!("breaks result_schema: {}", check::describe(&e)));
            }
        }
        let own = example_schema.and_then(|s| jsonschema::validator_for(s).ok())?;
        own.validate(result).err().map(|e| {
            format!(
                "breaks the example's result_schema: {}",
                check::describe(&e)
            )
        })
    }

    /// The `params_schema` of every method that has one, by method (what
    /// the fuzzer generates params from).
    pub fn params_schemas(&self) -> BTreeMap<String, Value> {
        self.profile
            .methods
            .iter()
            .filter_map(|(m, e)| Some((m.clone(), e.params_schema.clone()?)))
            .collect()
    }

    /// The file's name, for details.
    pub fn file_name(&self) -> String {
        file_name(&self.path)
    }
}

/// `path`'s last component, for details.
pub(crate) fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// Load the profile at `path` and check it against `manifest` (see the
/// module docs): absent when there is no such file.
pub fn load(path: &Path, manifest: &Manifest) -> Loaded {
    let invalid = |problems: Vec<String>| {
        Loaded::Invalid(InvalidProfile {
            path: path.to_path_buf(),
            problems,
        })
    };
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Loaded::Absent,
        Err(e) => return invalid(vec![ProfileError::Io(e).to_string()]),
    };
    let root = match parse_yaml(&text) {
        Ok(r) => r,
        Err(e) => {
            let at = e.pos.map(|p| format!("{p}: ")).unwrap_or_default();
            return invalid(vec![format!("{at}{}", e.message)]);
        }
    };
    let profile = match Profile::from_node(&root) {
        Ok(p) => p,
        Err(e) => return invalid(vec![e.to_string()]),
    };
    let problems = check::problems(&root, &profile, manifest);
    if !problems.is_empty() {
        return invalid(problems);
    }
    let results = profile
        .methods
        .iter()
        .filter_map(|(name, m)| {
            let schema = m.result_schema.as_ref()?;
            let v = jsonschema::validator_for(schema).ok()?;
            Some((name.clone(), Arc::new(v)))
        })
        .collect();
    Loaded::Valid(Arc::new(ValidProfile {
        path: path.to_path_buf(),
        profile,
        results,
    }))
}

/// The profile of a run: the file `explicit` names
/// (`--conformance-profile`; a missing one is invalid), else
/// [`PROFILE_FILE`] in `dir` if there is one.
pub fn load_for_run(explicit: Option<&Path>, dir: &Path, manifest: &Manifest) -> Loaded {
    match explicit {
        None => load(&dir.join(PROFILE_FILE), manifest),
        Some(path) => match load(path, manifest) {
            Loaded::Absent => Loaded::Invalid(InvalidProfile {
                path: path.to_path_buf(),
                problems: vec!["no such file (named by --conformance-profile)".to_string()],
            }),
            other => other,
        },
    }
}

/// The methods of `manifest` (custom, not tools) that `loaded` gives no
/// params for: those called with `{}` only.
pub fn unprofiled(manifest: &Manifest, loaded: &Loaded) -> Vec<String> {
    manifest
        .methods
        .iter()
        .filter(|m| !manifest.is_prefixed_tool(m))
        .filter(|m| match loaded {
            Loaded::Valid(p) => p
                .method(m)
                .is_none_or(|e| e.examples.is_empty() && e.params_schema.is_none()),
            _ => true,
        })
        .cloned()
        .collect()
}
