//! `kaged-host-sim cage DIR [--json]`: the cage the plugin in DIR would run
//! in (ADDENDUM §13): the compiled policy and the bwrap command line, so
//! that an author sees exactly what the daemon will allow.
//!
//! ```text
//! $ kaged-host-sim cage examples/echo
//! filesystem (in order; a later mount covers an earlier one):
//!   proc     /proc  (the cage's own)
//!   ...
//! network: none (a new namespace, loopback only)
//! seccomp: default profile, EPERM for mount umount2 ...
//! cgroup: unavailable, no limit applied (...)
//!
//! bwrap argv:
//!   bwrap --unshare-all --unshare-pid \
//!     ...
//! ```
//!
//! Exit 1 when the manifest is invalid or the cage cannot be compiled (a
//! grant whose symlinks leave it...), with one line naming the capability.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use kaged_host_core::cage::{self, BWRAP};

use super::error::CliError;

/// The options of `cage`.
#[derive(Debug, Args)]
pub struct CageArgs {
    /// The plugin directory.
    pub dir: PathBuf,
    /// Print `{"policy": ..., "command": [...], "bwrap": [...]}` instead.
    #[arg(long)]
    pub json: bool,
    /// The project root for `project:/` paths (default: none, and such a
    /// grant is an error).
    #[arg(long, value_name = "DIR")]
    pub project_root: Option<PathBuf>,
}

/// Run `cage`, `config:/` paths resolving under `config_root` (the global
/// `--config-root`, or its default).
pub async fn run(args: &CageArgs, config_root: Option<PathBuf>) -> Result<ExitCode, CliError> {
    let report = kaged_host_core::validate_dir(&args.dir);
    let manifest = match (&report.manifest, report.has_errors()) {
        (Some(m), false) => m,
        _ => {
            let text = report.render_human();
            if !text.is_empty() {
                kaged_host_core::outln!("{text}");
            }
            return Err(CliError::Failed(format!(
                "{}: the manifest is invalid; no cage compiled",
                args.dir.display()
            )));
        }
    };
    let (mut inputs, command) = kaged_host_core::cage_inputs_for_dir(manifest, &args.dir, "info")
        .map_err(|e| CliError::Failed(e.to_string()))?;
    inputs.config_root = config_root.or_else(super::caging::default_config_root);
    inputs.project_root = args.project_root.clone();
    let policy = cage::compile(manifest, &inputs).map_err(|e| CliError::Failed(e.to_string()))?;
    let mut argv = vec![OsString::from(BWRAP)];
    argv.extend(policy.bwrap_argv_template(&command));
    let here = match cage::availability().await {
        Ok(bwrap) => format!("bwrap works here ({})", bwrap.display()),
        Err(why) => format!("this machine cannot cage: {why}"),
    };
    if args.json {
        let lossy = |v: &[OsString]| -> Vec<String> {
            v.iter().map(|a| a.to_string_lossy().into_owned()).collect()
        };
        let out = serde_json::json!({
            "policy": policy,
            "command": lossy(&command),
            "bwrap": lossy(&argv),
            "here": here,
        });
        kaged_host_core::outln!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
    } else {
        kaged_host_core::out!("{}", policy.render());
        kaged_host_core::outln!();
        kaged_host_core::outln!("bwrap argv:");
        kaged_host_core::outln!("{}", shell_lines(&argv));
        kaged_host_core::outln!();
        kaged_host_core::outln!("{here}");
    }
    Ok(ExitCode::SUCCESS)
}

/// Quote an argument for a POSIX shell when it needs it (the `<info-fd>`
/// and `<seccomp-fd>` slots are shown as they are).
fn quote(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%<>".contains(&b));
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

/// The argv, one option and its values per line, as a shell command.
fn shell_lines(argv: &[OsString]) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut after_dashdash = false;
    for a in argv {
        let a = quote(&a.to_string_lossy());
        match lines.last_mut() {
            Some(last) if after_dashdash || !a.starts_with("--") => {
                last.push(' ');
                last.push_str(&a);
            }
            _ => {
                after_dashdash = a == "--";
                lines.push(a);
            }
        }
    }
    let mut out = String::new();
    for (i, l) in lines.iter().enumerate() {
        let indent = if i == 0 { "  " } else { "    " };
        out.push_str(indent);
        out.push_str(l);
        if i + 1 < lines.len() {
            out.push_str(" \\\n");
        }
    }
    out
}
