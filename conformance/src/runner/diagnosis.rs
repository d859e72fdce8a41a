//! Cage failures, named: when a caged plugin fails a case and its stderr
//! shows an error the cage explains — `EROFS` or `EACCES` writing a path
//! the cage keeps read-only, `ENOENT` (or `EACCES`) on a path that exists
//! on this machine but not in the cage, `ENETUNREACH` or a failed name
//! lookup without a network — the case's detail says so and names the
//! capability that would allow it ([`CagePolicy::access`] decides what a
//! path is in the cage).
//!
//! The error is recognised in the forms libc, Rust's `std::io::Error` and
//! Python's `OSError` print it (`Read-only file system (os error 30)`,
//! `[Errno 30] Read-only file system: '/x'`, `EROFS`); the path is the
//! first absolute path on the same line.

use std::path::{Path, PathBuf};

use kaged_host_sim::cage::{normalize, Access, CagePolicy, NetMode};

/// An error the cage can cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Errno {
    ReadOnly,
    Denied,
    Missing,
    NoNetwork,
}

impl Errno {
    fn name(self) -> &'static str {
        match self {
            Errno::ReadOnly => "EROFS",
            Errno::Denied => "EACCES",
            Errno::Missing => "ENOENT",
            Errno::NoNetwork => "ENETUNREACH",
        }
    }
}

const FORMS: &[(Errno, &[&str])] = &[
    (
        Errno::ReadOnly,
        &[
            "Read-only file system",
            "EROFS",
            "os error 30)",
            "[Errno 30]",
        ],
    ),
    (
        Errno::Denied,
        &["Permission denied", "EACCES", "os error 13)", "[Errno 13]"],
    ),
    (
        Errno::Missing,
        &[
            "No such file or directory",
            "ENOENT",
            "os error 2)",
            "[Errno 2]",
        ],
    ),
    (
        Errno::NoNetwork,
        &[
            "Network is unreachable",
            "ENETUNREACH",
            "os error 101)",
            "[Errno 101]",
            "Temporary failure in name resolution",
            "Name or service not known",
        ],
    ),
];

fn errno(line: &str) -> Option<Errno> {
    FORMS
        .iter()
        .find(|(_, forms)| forms.iter().any(|f| line.contains(f)))
        .map(|(e, _)| *e)
}

/// The first absolute path of `line` (after a space, quote, `(`, `=`, `:`
/// or at the start), without trailing punctuation.
fn path_in(line: &str) -> Option<PathBuf> {
    let bytes = line.as_bytes();
    let start = (0..bytes.len()).find(|&i| {
        bytes[i] == b'/'
            && bytes
                .get(i + 1)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'.' || *c == b'_')
            && (i == 0 || b" '\"(=:`".contains(&bytes[i - 1]))
    })?;
    let rest = &line[start..];
    let end = rest
        .find(|c: char| c.is_whitespace() || "'\"`)".contains(c))
        .unwrap_or(rest.len());
    let p = rest[..end].trim_end_matches([':', ';', ',', '.']);
    Some(PathBuf::from(p))
}

/// Why the cage, and not the plugin's logic, explains `errno` on `path`.
fn explain(errno: Errno, path: &Path, policy: &CagePolicy) -> Option<String> {
    let path = normalize(path);
    let home = &policy.chdir;
    let exists = path.exists();
    let parent = path.parent().map(Path::to_path_buf).unwrap_or_default();
    match (errno, policy.access(&path)) {
        (Errno::ReadOnly | Errno::Denied, Access::ReadOnly) if path.starts_with(home) => {
            Some(format!(
                "the plugin directory {} is its HOME and read-only in the cage: write under a \
                 declared `write:fs:` path instead (e.g. `write:fs:config:/<dir>`, then \
                 $KAGED_CONFIG_ROOT/<dir>)",
                home.display()
            ))
        }
        (Errno::ReadOnly | Errno::Denied, Access::ReadOnly) => Some(format!(
            "{} is read-only in the cage: declare `write:fs:{}`",
            path.display(),
            path.display()
        )),
        (Errno::Missing | Errno::Denied, Access::Hidden) if exists => Some(format!(
            "{} exists on this machine but not in the cage: declare `read:fs:{}` (or \
             `write:fs:` to write it)",
            path.display(),
            path.display()
        )),
        (Errno::Missing | Errno::Denied | Errno::ReadOnly, Access::Hidden)
            if parent.is_dir() && policy.access(&parent) == Access::Hidden =>
        {
            Some(format!(
                "{} is not in the cage: declare `write:fs:{}` to create files there",
                parent.display(),
                parent.display()
            ))
        }
        _ => None,
    }
}

/// The cage's likely part in a failure whose plugin stderr is `stderr`:
/// `caged, this looks like the cage: ENOENT on /x: /x exists on this
/// machine but not in the cage: declare `read:fs:/x``; `None` when no
/// line points at the cage.
pub(crate) fn diagnose<'a>(
    stderr: impl IntoIterator<Item = &'a str>,
    policy: &CagePolicy,
) -> Option<String> {
    for line in stderr {
        let Some(e) = errno(line) else { continue };
        let why = if e == Errno::NoNetwork {
            (policy.net.mode == NetMode::None).then(|| {
                "the cage has no network (`net:[]`, or no `net:` capability): declare what \
                 it connects to, `net:<host>:<port>`"
                    .to_string()
            })
        } else {
            path_in(line)
                .and_then(|p| explain(e, &p, policy).map(|w| (p, w)))
                .map(|(p, w)| format!("{} on {}: {w}", e.name(), p.display()))
        };
        if let Some(why) = why {
            let why = match e {
                Errno::NoNetwork => format!("{}: {why}", e.name()),
                _ => why,
            };
            return Some(format!(
                "caged, this failure looks caused by the cage: {why} (stderr: {})",
                kaged_host_sim::transcript::cut(line.trim(), 200)
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_found_in_the_usual_forms() {
        let p = |l: &str| path_in(l).map(|p| p.display().to_string());
        assert_eq!(
            p("OSError: [Errno 30] Read-only file system: '/opt/x/state.json'").as_deref(),
            Some("/opt/x/state.json")
        );
        assert_eq!(
            p("error: cannot write /var/lib/x: Read-only file system (os error 30)").as_deref(),
            Some("/var/lib/x")
        );
        assert_eq!(p("no path here (os error 2)"), None);
        assert_eq!(
            errno("Read-only file system (os error 30)"),
            Some(Errno::ReadOnly)
        );
        assert_eq!(
            errno("[Errno 101] Network is unreachable"),
            Some(Errno::NoNetwork)
        );
        assert_eq!(errno("all fine"), None);
    }
}
