//! `.kagedignore`: what a plugin's author leaves out of the installed copy,
//! in gitignore syntax (the `ignore` crate's matcher, as ripgrep uses it).
//! Only the file at the top of the plugin directory is read; its patterns
//! are relative to that directory. A line that is not a valid pattern is
//! an error naming the file and the line, not a pattern silently dropped.

use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};

use super::error::InstallError;

/// The file's name, at the top of the plugin directory.
pub const KAGEDIGNORE_FILE: &str = ".kagedignore";

/// The largest `.kagedignore` read (a list of patterns, not data).
const MAX_BYTES: u64 = 1024 * 1024;

/// A plugin directory's `.kagedignore`, compiled (empty when there is none).
pub(crate) struct KagedIgnore {
    matcher: Gitignore,
}

impl KagedIgnore {
    /// Read `src/.kagedignore`, if there is one.
    pub fn load(src: &Path) -> Result<KagedIgnore, InstallError> {
        let path = src.join(KAGEDIGNORE_FILE);
        match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(KagedIgnore {
                    matcher: Gitignore::empty(),
                })
            }
            Err(e) => return Err(invalid(&path, 0, e.to_string())),
            Ok(m) if !m.is_file() => {
                let what = "not a regular file (a link is not followed: write the patterns in it)";
                return Err(invalid(&path, 0, what.into()));
            }
            Ok(m) if m.len() > MAX_BYTES => {
                let what = format!("{} bytes, more than the {MAX_BYTES} read", m.len());
                return Err(invalid(&path, 0, what));
            }
            Ok(_) => {}
        }
        let text = std::fs::read_to_string(&path).map_err(|e| invalid(&path, 0, e.to_string()))?;
        let mut builder = GitignoreBuilder::new(src);
        for (i, line) in text.lines().enumerate() {
            builder
                .add_line(Some(path.clone()), line)
                .map_err(|e| invalid(&path, i + 1, e.to_string()))?;
        }
        let matcher = builder
            .build()
            .map_err(|e| invalid(&path, 0, e.to_string()))?;
        Ok(KagedIgnore { matcher })
    }

    /// The pattern that leaves `rel` (relative to the plugin directory)
    /// out, if one does: the last matching line decides, and a `!`
    /// line brings a path back.
    pub fn matched(&self, rel: &Path, is_dir: bool) -> Option<String> {
        match self.matcher.matched(rel, is_dir) {
            ignore::Match::Ignore(glob) => Some(glob.original().to_string()),
            ignore::Match::Whitelist(_) | ignore::Match::None => None,
        }
    }
}

fn invalid(path: &Path, line: usize, message: String) -> InstallError {
    InstallError::KagedIgnore {
        path: PathBuf::from(path),
        line,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ignore(text: &str) -> (tempfile::TempDir, KagedIgnore) {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join(KAGEDIGNORE_FILE), text).expect("write");
        let k = KagedIgnore::load(dir.path()).expect("valid");
        (dir, k)
    }

    #[test]
    fn patterns_follow_gitignore_syntax() {
        let (_d, k) = ignore("# notes\n*.log\n/docs/\ntests/\n!keep.log\n");
        let m = |p: &str, dir| k.matched(Path::new(p), dir);
        assert_eq!(m("a.log", false).as_deref(), Some("*.log"));
        assert_eq!(m("lib/b.log", false).as_deref(), Some("*.log"));
        assert_eq!(m("keep.log", false), None, "a `!` line brings it back");
        assert_eq!(m("docs", true).as_deref(), Some("/docs/"));
        assert_eq!(m("lib/docs", true), None, "anchored at the top");
        assert_eq!(m("lib/tests", true).as_deref(), Some("tests/"));
        assert_eq!(m("tests", false), None, "a `/` pattern names directories");
        assert_eq!(m("plugin.py", false), None);
    }

    #[test]
    fn no_file_leaves_nothing_out_and_a_bad_line_is_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let none = KagedIgnore::load(dir.path()).expect("no file is fine");
        assert_eq!(none.matched(Path::new("x"), false), None);
        std::fs::write(dir.path().join(KAGEDIGNORE_FILE), "ok\n[z-a]\n").expect("write");
        let err = KagedIgnore::load(dir.path())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains(".kagedignore") && err.contains("line 2"),
            "{err}"
        );
    }

    #[test]
    fn a_linked_kagedignore_is_not_followed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("tempdir");
        std::fs::write(outside.path().join("patterns"), "*\n").expect("write");
        let link = dir.path().join(KAGEDIGNORE_FILE);
        std::os::unix::fs::symlink(outside.path().join("patterns"), link).expect("link");
        let err = KagedIgnore::load(dir.path())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("not a regular file"), "{err}");
    }
}
