//! The runtime a plugin's command needs on a CI machine, read from
//! `command[0]` (or, for a script in the plugin directory, its `#!` line),
//! and how the written CI installs it where the cage sees it: under `/usr`
//! or `/usr/local`, which the cage binds read-only; never a tool cache or
//! `$HOME`, which it does not.
//!
//! ```
//! use kaged_conformance::init::Runtime;
//! assert_eq!(Runtime::from_program("/usr/bin/node"), Runtime::Node);
//! assert_eq!(Runtime::from_program("python3.12"), Runtime::Python);
//! assert_eq!(Runtime::from_program("./bin/notes"), Runtime::Binary);
//! ```

use std::path::Path;

/// A plugin's runtime, as far as its CI must install one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runtime {
    /// Node.js (`node`, `nodejs`).
    Node,
    /// Bun (`bun`).
    Bun,
    /// Deno (`deno`).
    Deno,
    /// Python 3 (`python3`, `python`).
    Python,
    /// A shell (`bash`, `sh`), with `jq` (the spec's shell plugin pattern).
    Shell,
    /// A binary or anything else: nothing to install (build it first).
    Binary,
}

impl Runtime {
    /// The runtime of a program name or path (its file name decides).
    pub fn from_program(program: &str) -> Runtime {
        let name = Path::new(program)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
        match base {
            "node" | "nodejs" => Runtime::Node,
            "bun" => Runtime::Bun,
            "deno" => Runtime::Deno,
            "python" => Runtime::Python,
            "bash" | "sh" | "dash" => Runtime::Shell,
            _ if name.starts_with("python") => Runtime::Python,
            _ => Runtime::Binary,
        }
    }

    /// The runtime of the plugin in `dir` started with `command`:
    /// `command[0]`, or when it is a file in the plugin directory, the
    /// interpreter of its `#!` line (`#!/usr/bin/env node` → Node); a
    /// command that starts with `env` is read from the program `env` runs.
    pub fn detect(dir: &Path, command: &[String]) -> Runtime {
        let Some(program) = program_of(command) else {
            return Runtime::Binary;
        };
        let from_name = Runtime::from_program(program);
        if from_name != Runtime::Binary || Path::new(program).is_absolute() {
            return from_name;
        }
        let Ok(text) = std::fs::read(dir.join(program)) else {
            return Runtime::Binary;
        };
        let first = text.split(|b| *b == b'\n').next().unwrap_or_default();
        let Some(shebang) = std::str::from_utf8(first)
            .ok()
            .and_then(|l| l.strip_prefix("#!"))
        else {
            return Runtime::Binary;
        };
        let mut words = shebang.split_whitespace();
        match words.next() {
            Some(env) if env.ends_with("/env") => words
                .find(|w| !w.starts_with('-'))
                .map_or(Runtime::Binary, Runtime::from_program),
            Some(interpreter) => Runtime::from_program(interpreter),
            None => Runtime::Binary,
        }
    }

    /// Its name, as the written CI's comments say it.
    pub fn as_str(self) -> &'static str {
        match self {
            Runtime::Node => "node",
            Runtime::Bun => "bun",
            Runtime::Deno => "deno",
            Runtime::Python => "python3",
            Runtime::Shell => "bash + jq",
            Runtime::Binary => "a binary",
        }
    }

    /// The Debian/Ubuntu packages to install besides bubblewrap.
    pub fn packages(self) -> &'static [&'static str] {
        match self {
            Runtime::Node => &["nodejs"],
            Runtime::Python => &["python3"],
            Runtime::Shell => &["bash", "jq"],
            Runtime::Bun | Runtime::Deno => &["curl", "unzip", "ca-certificates"],
            Runtime::Binary => &[],
        }
    }

    /// Shell lines (run as root) that install it under `/usr/local` when
    /// no Debian package does: bun's and deno's own installers; bun at
    /// `version` when one is given (the one `init` found), deno at its
    /// latest.
    ///
    /// ```
    /// use kaged_conformance::init::Runtime;
    /// assert_eq!(Runtime::Bun.install_lines(Some("1.4.5")),
    ///            ["curl -fsSL https://bun.sh/install | BUN_INSTALL=/usr/local bash -s bun-v1.4.5"]);
    /// assert!(Runtime::Node.install_lines(None).is_empty());
    /// ```
    pub fn install_lines(self, version: Option<&str>) -> Vec<String> {
        match (self, version) {
            (Runtime::Bun, Some(v)) => vec![format!(
                "curl -fsSL https://bun.sh/install | BUN_INSTALL=/usr/local bash -s bun-v{v}"
            )],
            (Runtime::Bun, None) => {
                vec!["curl -fsSL https://bun.sh/install | BUN_INSTALL=/usr/local bash".into()]
            }
            (Runtime::Deno, _) => vec![
                "curl -fsSL https://deno.land/install.sh | DENO_INSTALL=/usr/local sh -s -- -y"
                    .into(),
            ],
            _ => Vec::new(),
        }
    }

    /// The version of this runtime the plugin in `dir` starts with here
    /// (`bun --version` of the program `command` resolves to, as the
    /// plugin's `PATH` finds it), for the CI to install the same: bun's
    /// only (the Debian packages are the distribution's).
    pub fn local_version(self, dir: &Path, command: &[String]) -> Option<String> {
        if self != Runtime::Bun {
            return None;
        }
        let bin = kaged_host_core::resolve_command(program_of(command)?, dir).ok()?;
        let out = std::process::Command::new(bin)
            .arg("--version")
            .stdin(std::process::Stdio::null())
            .output()
            .ok()?;
        let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
        // A release's plain `X.Y.Z`, what bun's installer takes.
        let release =
            semver::Version::parse(&v).is_ok_and(|s| s.pre.is_empty() && s.build.is_empty());
        (out.status.success() && release).then_some(v)
    }
}

/// The program `command` runs: `command[0]`, or for `env [-flags]
/// [VAR=value...] PROGRAM ...`, PROGRAM.
fn program_of(command: &[String]) -> Option<&String> {
    let mut words = command.iter();
    let first = words.next()?;
    if Path::new(first).file_name().is_some_and(|n| n == "env") {
        return words.find(|w| !w.starts_with('-') && !w.contains('='));
    }
    Some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_is_read_by_its_shebang() {
        let dir = tempfile::tempdir().expect("tempdir");
        for (file, line, want) in [
            ("a.js", "#!/usr/bin/env node", Runtime::Node),
            ("b.ts", "#!/usr/bin/env -S bun run", Runtime::Bun),
            ("c.py", "#!/usr/bin/python3", Runtime::Python),
            ("d.sh", "#!/bin/bash", Runtime::Shell),
            ("e", "\u{7f}ELF", Runtime::Binary),
        ] {
            std::fs::write(dir.path().join(file), format!("{line}\n")).expect("write");
            let command = vec![format!("./{file}")];
            assert_eq!(Runtime::detect(dir.path(), &command), want, "{file}");
        }
        let node = vec!["/usr/local/bin/node".to_string(), "main.js".to_string()];
        assert_eq!(Runtime::detect(dir.path(), &node), Runtime::Node);
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        for (command, want) in [
            (
                words(&["/usr/bin/env", "bun", "run", "src/index.ts"]),
                Runtime::Bun,
            ),
            (
                words(&["env", "-S", "PYTHONPATH=src", "python3", "-m", "tally"]),
                Runtime::Python,
            ),
            (words(&["/usr/bin/env"]), Runtime::Binary),
            (words(&["/usr/bin/env", "./d.sh"]), Runtime::Shell),
        ] {
            assert_eq!(Runtime::detect(dir.path(), &command), want, "{command:?}");
        }
        assert_eq!(
            Runtime::detect(dir.path(), &["./missing".to_string()]),
            Runtime::Binary
        );
    }
}
