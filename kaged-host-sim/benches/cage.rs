//! The cage's start-up cost: the time from spawn to a completed handshake
//! of the echo example, caged (`--cage require`) and uncaged (`--cage
//! off`), median of 20 each. Measured and printed, not asserted.
//!
//! ```sh
//! cargo build --release -p kaged-example-echo
//! cargo bench -p kaged-host-sim --bench cage
//! # or, without a release build of everything:
//! cargo build -p kaged-example-echo && cargo bench -p kaged-host-sim --profile dev --bench cage
//! ```
//!
//! Environment: `KAGED_BENCH_SPAWNS` (spawns per mode, default 20). The two
//! modes alternate, so that a slow phase of the machine hits both. Without
//! a working bwrap only the uncaged time is printed, with the reason.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kaged_host_core::testing::StagedPlugin;
use kaged_host_core::{CageMode, HostConfig, HostSim};

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The echo binary of this bench's profile, else the release one, else
/// the debug one.
fn echo_bin() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    // target/<profile>/deps/cage-HASH -> target/<profile>
    let profile = exe.parent().and_then(Path::parent).ok_or("no target dir")?;
    let target = profile.parent().ok_or("no target dir")?;
    [
        profile.join("echo"),
        target.join("release/echo"),
        target.join("debug/echo"),
    ]
    .into_iter()
    .find(|p| p.is_file())
    .ok_or_else(|| {
        "the echo example is not built: run `cargo build --release -p kaged-example-echo` first"
            .to_string()
    })
}

/// Spawn and handshake once under `mode`; the time it took.
async fn handshake(mode: CageMode, dir: &Path) -> Result<Duration, String> {
    let host = HostSim::new(HostConfig::default().with_cage(mode));
    let start = Instant::now();
    let session = host
        .launch(dir)
        .await
        .map_err(|e| kaged_host_core::one_line(&format!("launch ({mode})"), &e))?;
    let took = start.elapsed();
    if (mode == CageMode::Require) != session.caged() {
        return Err(format!("--cage {mode}: caged = {}", session.caged()));
    }
    session.shutdown().await;
    Ok(took)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

async fn run() -> Result<(), String> {
    let spawns: usize = std::env::var("KAGED_BENCH_SPAWNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let bin = echo_bin()?;
    let staged =
        StagedPlugin::new(&workspace().join("examples/echo"), &bin).map_err(|e| e.to_string())?;
    let caged = kaged_host_core::cage::availability().await;
    let mut modes = vec![CageMode::Off];
    match &caged {
        Ok(bwrap) => {
            modes.push(CageMode::Require);
            println!("bwrap: {}", bwrap.display());
        }
        Err(why) => println!("caged: not measured, plugins cannot be caged here: {why}"),
    }
    println!(
        "echo: {} — spawn + handshake, {spawns} spawns per mode",
        bin.display()
    );
    // One of each first, unmeasured: page cache, the bwrap probe.
    for m in &modes {
        handshake(*m, staged.dir()).await?;
    }
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); modes.len()];
    for i in 0..spawns {
        for k in 0..modes.len() {
            let k = if i % 2 == 0 { k } else { modes.len() - 1 - k };
            times[k].push(handshake(modes[k], staged.dir()).await?);
        }
    }
    let medians: Vec<Duration> = times.into_iter().map(median).collect();
    println!("uncaged (--cage off):     median {}", ms(medians[0]));
    if let Some(caged) = medians.get(1) {
        println!("caged (--cage require):   median {}", ms(*caged));
        println!(
            "the cage's start-up cost: {} ({:.1}x)",
            ms(caged.saturating_sub(medians[0])),
            caged.as_secs_f64() / medians[0].as_secs_f64().max(1e-9)
        );
    }
    Ok(())
}

fn main() {
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot start the runtime: {e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = rt.block_on(run()) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
