//! A stored run: what `run --transcript-dir DIR` leaves besides one wire
//! transcript per case, enough to judge the run again offline
//! ([`crate::runner::judge_dir`]):
//!
//! | file | holds |
//! |---|---|
//! | `run.json` | the report's header (plugin, time scale, timeouts, cage) and the manifest the run used, as YAML |
//! | `audit.jsonl` | every audit record of the run (ADDENDUM §9 lines) |
//! | `wire.jsonl` | every wire record of every spawn, spawn after spawn (ADDENDUM §9 transcript lines) |

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use kaged_host_core::audit::{AuditRecord, RecordError};
use kaged_host_core::cage::CageSummary;
use kaged_host_core::transcript::TranscriptRecord;
use kaged_host_core::CageKind;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::report::{EffectiveTimeouts, PluginInfo};

/// The header file of a stored run.
pub const RUN_FILE: &str = "run.json";
/// The stored audit log.
pub const AUDIT_FILE: &str = "audit.jsonl";
/// The stored wire records of every spawn.
pub const WIRE_FILE: &str = "wire.jsonl";
/// The `format` this version writes and reads.
pub const FORMAT: u32 = 1;

/// `run.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredRun {
    /// Always [`FORMAT`].
    pub format: u32,
    /// The tool and version that wrote it.
    pub tool: String,
    /// The plugin under test.
    pub plugin: PluginInfo,
    /// The time scale of the run.
    pub time_scale: f64,
    /// The run's effective timeouts.
    pub timeouts: EffectiveTimeouts,
    /// How the plugin ran.
    pub cage: CageKind,
    /// Why it ran uncaged, if it did.
    pub cage_reason: Option<String>,
    /// The cage's policy in brief.
    pub cage_policy: Option<CageSummary>,
    /// The manifest the run used, as YAML; `None` when it did not validate.
    pub manifest: Option<String>,
}

/// Why a stored run cannot be written or read.
#[derive(Debug, thiserror::Error)]
pub enum StoredError {
    /// A file cannot be written.
    #[error("cannot write {}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A file cannot be read.
    #[error("cannot read {}{}", path.display(), if source.kind() == std::io::ErrorKind::NotFound { " (write a stored run with `kaged-conformance run PLUGIN_DIR --transcript-dir DIR`)" } else { "" })]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A line (or `run.json`) is not what this version writes.
    #[error("{}:{line}: {message}", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// The line, from 1 (1 for `run.json`).
        line: usize,
        /// What is wrong.
        message: String,
    },
}

fn write_err(path: &Path) -> impl FnOnce(std::io::Error) -> StoredError + '_ {
    move |source| StoredError::Write {
        path: path.to_path_buf(),
        source,
    }
}

/// Write `run`, `audit` and `wire` into `dir` (which exists).
pub fn write(
    dir: &Path,
    run: &StoredRun,
    audit: &[AuditRecord],
    wire: &[TranscriptRecord],
) -> Result<(), StoredError> {
    let path = dir.join(RUN_FILE);
    let text = serde_json::to_string_pretty(run).map_err(|e| StoredError::Malformed {
        path: path.clone(),
        line: 1,
        message: e.to_string(),
    })?;
    std::fs::write(&path, text + "\n").map_err(write_err(&path))?;
    write_lines(
        &dir.join(AUDIT_FILE),
        audit.iter().map(AuditRecord::to_json),
    )?;
    write_lines(
        &dir.join(WIRE_FILE),
        wire.iter().map(TranscriptRecord::to_json),
    )
}

fn write_lines(path: &Path, lines: impl Iterator<Item = Value>) -> Result<(), StoredError> {
    let file = File::create(path).map_err(write_err(path))?;
    let mut out = BufWriter::new(file);
    for v in lines {
        writeln!(out, "{v}").map_err(write_err(path))?;
    }
    out.flush().map_err(write_err(path))
}

/// A stored run read back.
#[derive(Debug)]
pub struct Loaded {
    /// `run.json`.
    pub run: StoredRun,
    /// `audit.jsonl`.
    pub audit: Vec<AuditRecord>,
    /// `wire.jsonl`.
    pub wire: Vec<TranscriptRecord>,
}

/// Read the stored run in `dir`.
pub fn read(dir: &Path) -> Result<Loaded, StoredError> {
    let path = dir.join(RUN_FILE);
    let text = std::fs::read_to_string(&path).map_err(|source| StoredError::Read {
        path: path.clone(),
        source,
    })?;
    let malformed = |message: String| StoredError::Malformed {
        path: path.clone(),
        line: 1,
        message,
    };
    let format = serde_json::from_str::<Value>(&text)
        .map_err(|e| malformed(e.to_string()))?
        .get("format")
        .and_then(Value::as_u64);
    if format != Some(u64::from(FORMAT)) {
        return Err(malformed(format!(
            "format {} is not {FORMAT}, the format of this kaged-conformance",
            format.map_or_else(|| "(missing)".to_string(), |f| f.to_string())
        )));
    }
    let run: StoredRun = serde_json::from_str(&text).map_err(|e| malformed(e.to_string()))?;
    let audit = read_lines(&dir.join(AUDIT_FILE), AuditRecord::from_json)?;
    let wire = read_lines(&dir.join(WIRE_FILE), TranscriptRecord::from_json)?;
    Ok(Loaded { run, audit, wire })
}

fn read_lines<T>(
    path: &Path,
    parse: fn(&Value) -> Result<T, RecordError>,
) -> Result<Vec<T>, StoredError> {
    let read_err = |source| StoredError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(read_err)?;
    let mut out = Vec::new();
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(read_err)?;
        if line.trim().is_empty() {
            continue;
        }
        let malformed = |message: String| StoredError::Malformed {
            path: path.to_path_buf(),
            line: i + 1,
            message,
        };
        let v: Value = serde_json::from_str(&line).map_err(|e| malformed(e.to_string()))?;
        out.push(parse(&v).map_err(|e| malformed(e.to_string()))?);
    }
    Ok(out)
}
