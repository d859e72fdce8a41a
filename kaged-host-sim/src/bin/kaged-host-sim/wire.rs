//! The wire transcript of a command: `--transcript FILE` in the raw form
//! (records streamed as they happen) or `--transcript-form normal` (the
//! normal form, [`kaged_host_core::normal`], written when the command
//! ends), and `session --golden FILE` (compare the normal form with a
//! golden file; `--update` or `KAGED_UPDATE_GOLDEN=1` rewrites it).

use std::path::{Path, PathBuf};

use kaged_host_core::golden::{self, Golden};
use kaged_host_core::normal::{self, NormalOptions, TranscriptForm};
use kaged_host_core::{one_line, Transcript};

use super::CliError;

/// The transcript a command's host writes to; `memory` also keeps it
/// (for `--golden`).
pub fn open(
    file: Option<&Path>,
    form: TranscriptForm,
    memory: bool,
) -> Result<Transcript, CliError> {
    let t = match (file, form) {
        (Some(p), TranscriptForm::Raw) => Transcript::to_file(p).map_err(|e| {
            CliError::Usage(one_line(
                &format!("cannot open transcript file {}", p.display()),
                &e,
            ))
        })?,
        (Some(_), TranscriptForm::Normal) => Transcript::memory(),
        (None, _) => Transcript::discard(),
    };
    Ok(if memory { t.with_memory() } else { t })
}

/// The placeholders of a run of the plugins in `dirs`.
pub fn options(dirs: &[&Path]) -> NormalOptions {
    let mut opts = NormalOptions::default();
    for d in dirs {
        for p in NormalOptions::for_plugin(d).paths {
            if !opts.paths.contains(&p) {
                opts.paths.push(p);
            }
        }
    }
    opts
}

/// Write the normal form to `--transcript FILE` when that is its form.
pub fn finish(
    file: Option<&Path>,
    form: TranscriptForm,
    t: &Transcript,
    dirs: &[&Path],
) -> Result<(), CliError> {
    let (Some(path), TranscriptForm::Normal) = (file, form) else {
        return Ok(());
    };
    let text = normal::of(t, &options(dirs)).to_jsonl();
    std::fs::write(path, text).map_err(|e| {
        CliError::Failed(one_line(
            &format!("cannot write transcript file {}", path.display()),
            &e,
        ))
    })
}

/// `--golden FILE [--update]`: `true` when the transcript matches (or the
/// file was written). A run in which a step `failed` is never written: a
/// golden file pins a run that passed.
pub fn check_golden(
    path: &PathBuf,
    update: bool,
    failed: bool,
    t: &Transcript,
    dirs: &[&Path],
) -> Result<bool, CliError> {
    let update = update || std::env::var_os("KAGED_UPDATE_GOLDEN").is_some_and(|v| v == "1");
    let actual = normal::of(t, &options(dirs));
    let old = match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(CliError::Usage(one_line(
                &format!("cannot read golden file {}", path.display()),
                &e,
            )))
        }
    };
    let bad = |e: golden::GoldenError| {
        CliError::Usage(one_line(
            &format!("invalid golden file {}", path.display()),
            &e,
        ))
    };
    if update && failed {
        kaged_host_core::outln!(
            "golden {}: not written: a step failed (a golden file pins a run that passed; fix the step, then --update)",
            path.display()
        );
        return Ok(false);
    }
    if update {
        let text = golden::update(old.as_deref(), &actual).map_err(bad)?;
        std::fs::write(path, text).map_err(|e| {
            CliError::Failed(one_line(
                &format!("cannot write golden file {}", path.display()),
                &e,
            ))
        })?;
        kaged_host_core::outln!("golden {}: written", path.display());
        return Ok(true);
    }
    let Some(old) = old else {
        kaged_host_core::outln!(
            "golden {}: missing (run with --update or KAGED_UPDATE_GOLDEN=1 to write it)",
            path.display()
        );
        return Ok(false);
    };
    match golden::compare(&old, &actual).map_err(bad)? {
        Golden::Same => {
            kaged_host_core::outln!("golden {}: same", path.display());
            Ok(true)
        }
        Golden::Differs { diff } => {
            kaged_host_core::outln!(
                "golden {}: differs (run with --update or KAGED_UPDATE_GOLDEN=1 to accept)",
                path.display()
            );
            kaged_host_core::out!("{diff}");
            Ok(false)
        }
    }
}
