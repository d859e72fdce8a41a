//! The command line: `cargo kaged new | pack | test` (also accepted as
//! `cargo-kaged new | pack | test`). [`main_with_args`] returns the exit
//! status: 0 on success, 1 when `test` finds a failing MUST case, 2 when a
//! command could not do its job (one line on stderr, with its causes).

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Parser, Subcommand};
use kaged_conformance::SuiteArgs;
use kaged_plugin_protocol::error_chain::chain;

use crate::certify::certify;
use crate::error::KagedError;
use crate::packing::{build_and_pack, PackOptions};
use crate::scaffold::{scaffold, NewOptions};

/// cargo runs `cargo-kaged kaged ARGS` for `cargo kaged ARGS`.
#[derive(Debug, Parser)]
#[command(name = "cargo", bin_name = "cargo")]
enum CargoCli {
    /// kaged plugin author tools.
    #[command(name = "kaged", version, about)]
    Kaged(KagedCli),
}

/// `cargo kaged`: write, pack and certify kaged plugins in Rust.
#[derive(Debug, clap::Args)]
struct KagedCli {
    #[command(subcommand)]
    command: KagedCommand,
}

#[derive(Debug, Subcommand)]
enum KagedCommand {
    /// Create a new plugin package that builds, passes its tests and the
    /// conformance suite as it is.
    New(NewArgs),
    /// Build (release) and write a self-contained plugin directory.
    Pack(PackArgs),
    /// Pack into a temporary directory, install it as the daemon would,
    /// and run the conformance suite on the installed copy.
    Test(Box<TestArgs>),
}

#[derive(Debug, clap::Args)]
struct NewArgs {
    /// The plugin's name (`^[a-z][a-z0-9-]*$`): the package, the binary and
    /// the manifest's `name`.
    name: String,
    /// Subscribe to the session hooks (an observer).
    #[arg(long)]
    hooks: bool,
    /// Add a tool, with its schema generated from the argument type.
    #[arg(long)]
    tool: bool,
    /// Use brokered storage (`kaged:storage:read`/`write`).
    #[arg(long)]
    storage: bool,
    /// Depend on the kit in this checkout (path dependencies) instead of
    /// crates.io, to try the kit before it is published.
    #[arg(long, value_name = "DIR")]
    kit_path: Option<PathBuf>,
    /// Create the package in DIR (default: ./NAME).
    #[arg(long, value_name = "DIR")]
    path: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
struct PackArgs {
    /// The package (default: the one around the current directory).
    #[arg(short = 'p', long, value_name = "PACKAGE")]
    package: Option<String>,
    /// Write the plugin directory to DIR/<plugin name> (default:
    /// <target dir>/kaged).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// The cargo profile to build with.
    #[arg(long, value_name = "PROFILE", default_value = "release")]
    profile: String,
}

#[derive(Debug, clap::Args)]
struct TestArgs {
    /// The package (default: the one around the current directory).
    #[arg(short = 'p', long, value_name = "PACKAGE")]
    package: Option<String>,
    /// The cargo profile to build with.
    #[arg(long, value_name = "PROFILE", default_value = "release")]
    profile: String,
    /// How the suite runs and reports (as `kaged-conformance run`).
    #[command(flatten)]
    suite: SuiteArgs,
}

/// Parse `args` (program name first; `kaged` next when cargo runs us) and
/// run; the exit status.
pub fn main_with_args<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let mut args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    if args.get(1).is_none_or(|a| a != "kaged") {
        args.insert(1.min(args.len()), "kaged".into());
    }
    let CargoCli::Kaged(cli) = match CargoCli::try_parse_from(&args) {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            let code = match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => 0,
                _ => 2,
            };
            let _ = e.print();
            return code;
        }
    };
    let cwd = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("cargo-kaged: error: no current directory: {e}");
            return 2;
        }
    };
    let result = match cli.command {
        KagedCommand::New(a) => scaffold(
            &NewOptions {
                name: a.name.clone(),
                hooks: a.hooks,
                tool: a.tool,
                storage: a.storage,
                kit_path: a.kit_path,
            },
            &a.path.unwrap_or_else(|| cwd.join(&a.name)),
        )
        .map(|created| {
            kaged_host_core::outln!("{}", created.next_steps());
            0
        }),
        KagedCommand::Pack(a) => build_and_pack(
            &PackOptions {
                package: a.package,
                profile: a.profile,
                out: a.out,
            },
            &cwd,
        )
        .map(|packed| {
            let dir = packed.dir.strip_prefix(&cwd).unwrap_or(&packed.dir);
            kaged_host_core::outln!(
                "Packed {} {} into {}",
                packed.name,
                packed.version,
                dir.display()
            );
            kaged_host_core::outln!("  command: {}", packed.command);
            for f in &packed.files {
                kaged_host_core::outln!("  with {}", f.display());
            }
            kaged_host_core::outln!(
                "Install it with: kaged-host-sim plugin install {}",
                dir.display()
            );
            0
        }),
        KagedCommand::Test(a) => certify(
            &PackOptions {
                package: a.package,
                profile: a.profile,
                out: None,
            },
            &a.suite,
            &cwd,
        ),
    };
    result.unwrap_or_else(|e: KagedError| {
        eprintln!("cargo-kaged: error: {}", chain(&e));
        2
    })
}
