//! One path capability → one bind (ADDENDUM §13): `read:fs:P` read-only,
//! `write:fs:P` read-write, `exec:BIN:P` the working directory P
//! read-write. The path is taken from its URI root (`config:/`,
//! `project:/`), normalised, refused when it is `/`, `/etc`, or under
//! `/proc`, `/dev` or `/sys`, and refused when its symlinks lead outside it.
//!
//! `exec:BIN:P`'s binary is looked up on [`SPAWN_PATH`], never the
//! manifest's `env`, and must be one executable file ([`find_binary`]).
//!
//! A path that does not exist is not an error: it is bound with the `-try`
//! form (bwrap skips a missing source; bwrap fails on a missing source of a
//! plain bind) and the policy notes it, so that the plugin sees `ENOENT`
//! there as it would without a cage, and a path created before the spawn
//! still appears.

use std::path::{Component, Path, PathBuf};

use super::error::CageError;
use super::fs_view::FsView;
use super::grant_path::grant_path;
use super::inputs::CageInputs;
use super::policy::{Mode, Mount};
use super::resolve::{normalize, resolve, within, ResolveFailure, Resolved};

/// Resolve `path` for `what` (a capability or base entry), mapping failures.
pub fn resolve_for(fs: &dyn FsView, what: &str, path: &Path) -> Result<Resolved, CageError> {
    resolve(fs, path).map_err(|f| match f {
        ResolveFailure::Loop => CageError::SymlinkLoop {
            capability: what.to_string(),
            path: path.to_path_buf(),
        },
        ResolveFailure::Io(at, source) => CageError::Inspect {
            what: what.to_string(),
            path: at,
            source,
        },
    })
}

/// The host path a capability path names: absolute as written, or under
/// the config or project root (resolved, trusted: the host's own).
pub fn host_path(
    fs: &dyn FsView,
    capability: &str,
    raw: &str,
    inputs: &CageInputs,
) -> Result<PathBuf, CageError> {
    let uri = [
        ("config:/", &inputs.config_root, "operator's config"),
        ("project:/", &inputs.project_root, "project"),
    ];
    for (prefix, root, name) in uri {
        let Some(rel) = raw.strip_prefix(prefix) else {
            continue;
        };
        let Some(root) = root else {
            return Err(CageError::NoRoot {
                capability: capability.to_string(),
                prefix,
                root: name,
            });
        };
        if Path::new(rel)
            .components()
            .any(|c| c == Component::ParentDir)
        {
            return Err(CageError::Forbidden {
                capability: capability.to_string(),
                path: PathBuf::from(raw),
                why: "`..` would leave the root it is relative to",
            });
        }
        let root = resolve_for(fs, capability, root)?.path;
        return Ok(normalize(&root.join(rel.trim_start_matches('/'))));
    }
    Ok(normalize(Path::new(raw)))
}

/// Why `path` can never be granted, if so.
pub fn forbidden(path: &Path) -> Option<&'static str> {
    if path == Path::new("/") {
        Some("it is the whole host filesystem")
    } else if path == Path::new("/etc") {
        Some("never all of /etc (ADDENDUM §13); grant the files the plugin needs")
    } else if path.starts_with("/proc") || path.starts_with("/dev") {
        Some("/proc and /dev are the cage's own")
    } else if path.starts_with("/sys") {
        Some("/sys holds the host's kernel interfaces (cgroups, uevent_helper...)")
    } else {
        None
    }
}

/// The bind of a granted path `declared` (a host path, normalised).
pub fn grant_bind(
    fs: &dyn FsView,
    capability: &str,
    declared: PathBuf,
    mode: Mode,
) -> Result<Mount, CageError> {
    if let Some(why) = forbidden(&declared) {
        return Err(CageError::Forbidden {
            capability: capability.to_string(),
            path: declared,
            why,
        });
    }
    let r = resolve_for(fs, capability, &declared)?;
    if !within(&r.path, &declared) {
        return Err(CageError::Escapes {
            capability: capability.to_string(),
            declared,
            resolved: r.path,
        });
    }
    Ok(Mount::Bind {
        source: r.path,
        dest: declared,
        mode,
        missing: !r.exists,
        because: vec![capability.to_string()],
    })
}

/// The `PATH` of the Spawn environment (plugin-host.md § Spawn
/// environment) before the manifest's `env` is merged: where a relative
/// `command[0]` and an `exec:` binary are looked up. The manifest's own
/// `PATH` never is (ADDENDUM §16: it could name a directory of the
/// operator's, `/root`, and bind a file of it).
pub const SPAWN_PATH: &str = "/usr/bin:/usr/local/bin";

/// Where `binary` of an `exec:` grant is: itself when absolute, else the
/// first directory of [`SPAWN_PATH`] that has it (never the manifest's
/// `env`); `None` when it is nowhere. What is found must be one executable
/// file (ADDENDUM §16): a directory, or a file with no execute bit, is
/// refused ([`CageError::ExecNotExecutable`]).
pub fn find_binary(
    fs: &dyn FsView,
    capability: &str,
    binary: &str,
) -> Result<Option<PathBuf>, CageError> {
    let candidates: Vec<PathBuf> = if binary.starts_with('/') {
        vec![normalize(Path::new(binary))]
    } else {
        SPAWN_PATH
            .split(':')
            .map(|d| normalize(&Path::new(d).join(binary)))
            .collect()
    };
    for c in candidates {
        let r = resolve_for(fs, capability, &c)?;
        if !r.exists {
            continue;
        }
        let why = if r.is_dir {
            Some("is a directory")
        } else if !fs
            .executable(&r.path)
            .map_err(|e| CageError::inspect(capability, &r.path, e))?
        {
            Some("is not executable")
        } else {
            None
        };
        if let Some(why) = why {
            return Err(CageError::ExecNotExecutable {
                capability: capability.to_string(),
                path: c,
                why,
            });
        }
        return Ok(Some(c));
    }
    Ok(None)
}

/// Create every `write:fs:config:/…` directory under the host's config
/// root (the host's own territory) before a spawn, and before compiling a
/// policy that must bind them: a grant of a missing path would be absent
/// from the cage, and the plugin's writes would fail. Only from the path
/// the cage compiler resolves ([`config_grant_dirs`]: no `..`, symlinks
/// resolved and kept inside the grant), so nothing is ever created outside
/// the config root; a grant it refuses is created nowhere and fails the
/// compile that follows with the same error. One that cannot be created
/// is warned about (the cage then lacks it).
pub fn create_config_grants(
    manifest: &kaged_plugin_protocol::manifest::Manifest,
    inputs: &CageInputs,
) {
    for dir in config_grant_dirs(manifest, inputs) {
        if let Err(e) = std::fs::create_dir_all(&dir) {
            tracing::warn!(dir = %dir.display(), error = %e, "cannot create a config:/ grant");
        }
    }
}

/// The directories the host creates before a spawn for the plugin's
/// `write:fs:config:/…` grants: each grant's path as the compiler resolves
/// it (no `..`, symlinks followed and required to stay inside the declared
/// path), and only when it lies inside the resolved config root. A grant
/// the compiler would refuse yields nothing here (the compile then fails
/// with its error); nothing outside the config root is ever named.
pub fn config_grant_dirs(
    manifest: &kaged_plugin_protocol::manifest::Manifest,
    inputs: &CageInputs,
) -> Vec<PathBuf> {
    use kaged_plugin_protocol::capability::Capability;
    let fs = super::fs_view::HostFs;
    let Some(root) = inputs.config_root.as_deref() else {
        return Vec::new();
    };
    let Ok(root) = resolve(&fs, root).map(|r| r.path) else {
        return Vec::new();
    };
    let mut dirs = Vec::new();
    for entry in &manifest.capabilities {
        let Ok(Capability::WriteFs(raw)) = entry.capability() else {
            continue;
        };
        if !raw.starts_with("config:/") {
            continue;
        }
        let text = entry.canonical();
        // The bind the compiler makes of it: forbidden paths and symlinks
        // that leave the declared path are refused there, as here.
        let bind = host_path(&fs, &text, &raw, inputs)
            .and_then(|declared| grant_bind(&fs, &text, declared, Mode::Rw));
        if let Ok(Mount::Bind { source, .. }) = bind {
            if within(&source, &root) && source != root {
                dirs.push(source);
            }
        }
    }
    dirs
}

/// Where a path capability lands on this host, for the install consent
/// prompt: a `config:/` path under the resolved config root, an absolute
/// path with its symlinks resolved (shown only when that differs from what
/// is written), a `project:/` path as "under the project root" (known only
/// when a project loads). `None` for other capabilities, or when nothing
/// differs from what the capability says.
pub fn consent_target(capability: &str, config_root: Option<&Path>) -> Option<String> {
    use kaged_plugin_protocol::capability::Capability;
    let cap = Capability::parse(capability).ok()?;
    let raw = match &cap {
        Capability::ReadFs(p) | Capability::WriteFs(p) | Capability::Exec { path: p, .. } => p,
        _ => return None,
    };
    let project = raw.starts_with("project:/");
    // Where the path lands, resolved (`None`: a root not known here).
    let landed = grant_path(capability, config_root, None);
    if let Capability::Exec { binary, .. } = &cap {
        let fs = super::fs_view::HostFs;
        let place = match &landed {
            Some(g) => g.resolved.display().to_string(),
            None if project => format!("{raw} (under the project root)"),
            None => raw.clone(),
        };
        let bin = match find_binary(&fs, capability, binary) {
            Ok(Some(bin)) => {
                let bin = resolve(&fs, &bin).map_or(bin, |r| r.path);
                format!("runs {}", bin.display())
            }
            Ok(None) => format!("runs `{binary}`, which is not on {SPAWN_PATH} (nothing bound)"),
            Err(e) => format!("refused: {e}"),
        };
        return Some(format!("{bin} in {place}"));
    }
    if project {
        return Some("under the project root".to_string());
    }
    let g = landed?;
    (raw.starts_with("config:/") || g.resolved != g.declared)
        .then(|| g.resolved.display().to_string())
}
