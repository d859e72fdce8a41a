//! The preset directory: one file per preset, `<name>.yaml`, `<name>.yml`
//! or `<name>.json` (YAML is a superset of JSON; both parse the same). A
//! file that does not parse is reported as a [`Problem`], never fatal to
//! a scan. The directory is only read, never written.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::preset::{valid_name, PresetError, PresetSpec, MAX_PRESET_BYTES};

/// Preset file extensions, in the order a name is looked up.
pub const EXTENSIONS: [&str; 3] = ["yaml", "yml", "json"];
/// The most preset files a scan reads.
pub const MAX_FILES: usize = 1000;

/// A preset found in the directory.
#[derive(Debug, Clone, PartialEq)]
pub struct FilePreset {
    /// The file.
    pub path: PathBuf,
    /// Its checked definition (name filled in from the file name).
    pub spec: PresetSpec,
}

/// A file a scan skipped, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    /// The file (or the directory).
    pub path: String,
    /// What is wrong.
    pub error: String,
}

/// The presets of a directory, by name, and the files skipped.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scan {
    /// Valid presets, sorted by name.
    pub presets: Vec<FilePreset>,
    /// Files (or the directory) that could not be used.
    pub problems: Vec<Problem>,
}

/// Why a preset could not be read from the directory.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// No file for that name.
    #[error("preset_not_found: no preset named {name:?} in {dir}{}", if *.dir_missing { " (the directory does not exist)" } else { "" })]
    NotFound {
        /// The name asked for.
        name: String,
        /// The directory searched.
        dir: String,
        /// Whether the directory itself is missing.
        dir_missing: bool,
    },
    /// The file exists but is not a valid preset.
    #[error("preset_invalid: {path}: {reason}")]
    Invalid {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
}

fn parse(path: &Path, name: &str) -> Result<PresetSpec, String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if meta.len() > MAX_PRESET_BYTES as u64 {
        return Err(format!(
            "{} bytes is over the {MAX_PRESET_BYTES}-byte limit",
            meta.len()
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let spec: PresetSpec = serde_saphyr::from_str(&text).map_err(|e| {
        // serde-saphyr's messages span lines; keep answers on one line.
        e.to_string()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    })?;
    spec.checked(name).map_err(|e: PresetError| e.to_string())
}

/// The preset stem of a file name, if it has a preset extension.
fn stem_of(path: &Path) -> Option<String> {
    let ext = path.extension()?.to_str()?;
    if !EXTENSIONS.contains(&ext) {
        return None;
    }
    Some(path.file_stem()?.to_str()?.to_owned())
}

/// Read every preset file of `dir`. A missing directory is one problem,
/// not an error: the catalogue still works with inline presets.
pub fn scan(dir: &Path) -> Scan {
    let mut scan = Scan::default();
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            scan.problems.push(Problem {
                path: dir.display().to_string(),
                error: format!("cannot read the preset directory: {e}"),
            });
            return scan;
        }
    };
    let mut files: Vec<(String, PathBuf)> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .filter_map(|p| stem_of(&p).map(|s| (s, p)))
        .collect();
    // By name, then by extension preference.
    let rank = |p: &Path| {
        let ext = p.extension().and_then(|e| e.to_str()).unwrap_or_default();
        EXTENSIONS
            .iter()
            .position(|x| *x == ext)
            .unwrap_or(EXTENSIONS.len())
    };
    files.sort_by(|a, b| a.0.cmp(&b.0).then(rank(&a.1).cmp(&rank(&b.1))));
    if files.len() > MAX_FILES {
        scan.problems.push(Problem {
            path: dir.display().to_string(),
            error: format!("more than {MAX_FILES} preset files; the rest were not read"),
        });
        files.truncate(MAX_FILES);
    }
    for (stem, path) in files {
        let shown = path.display().to_string();
        if !valid_name(&stem) {
            scan.problems.push(Problem {
                path: shown,
                error: format!(
                    "{stem:?} is not a preset name (lowercase letters, digits and inner hyphens)"
                ),
            });
            continue;
        }
        if scan
            .presets
            .last()
            .is_some_and(|p| p.spec.name.as_deref() == Some(&stem))
        {
            scan.problems.push(Problem {
                path: shown,
                error: format!("another file already defines {stem:?}; this one is ignored"),
            });
            continue;
        }
        match parse(&path, &stem) {
            Ok(spec) => scan.presets.push(FilePreset { path, spec }),
            Err(error) => scan.problems.push(Problem { path: shown, error }),
        }
    }
    scan
}

/// Read the preset `name` (a valid name) from `dir`.
pub fn read(dir: &Path, name: &str) -> Result<FilePreset, SourceError> {
    for ext in EXTENSIONS {
        let path = dir.join(format!("{name}.{ext}"));
        if path.is_file() {
            return match parse(&path, name) {
                Ok(spec) => Ok(FilePreset { path, spec }),
                Err(reason) => Err(SourceError::Invalid {
                    path: path.display().to_string(),
                    reason,
                }),
            };
        }
    }
    Err(SourceError::NotFound {
        name: name.to_owned(),
        dir: dir.display().to_string(),
        dir_missing: !dir.is_dir(),
    })
}
