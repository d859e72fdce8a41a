//! The chaos suite on a fixed seed set (issue 19): a hostile plugin mixing
//! misbehaviours by seed, and after each seed the host's invariants
//! (`kaged_test_support::chaos`). Caged where bwrap cages (always
//! under `CI=true`); uncaged elsewhere, with only the misbehaviours process
//! groups contain. `KAGED_CHAOS_SEEDS=3,17` runs those seeds;
//! `KAGED_CHAOS_CAGE=off|require` forces the mode. Many seeds:
//! `cargo bench -p kaged-host-sim --bench chaos -- --seeds 500`.

use kaged_host_core::CageMode;
use kaged_test_support::chaos::{replay_command, run_seed, ChaosOptions};

/// The fixed set CI runs.
const SEEDS: std::ops::RangeInclusive<u64> = 1..=16;

fn seeds() -> Vec<u64> {
    match std::env::var("KAGED_CHAOS_SEEDS") {
        Ok(list) => list
            .split(',')
            .map(|s| {
                s.trim()
                    .parse()
                    .unwrap_or_else(|_| panic!("KAGED_CHAOS_SEEDS: {s:?} is not a seed"))
            })
            .collect(),
        Err(_) => SEEDS.collect(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_survives_every_seed_of_the_chaos_plugin() {
    let cage = match std::env::var("KAGED_CHAOS_CAGE").as_deref() {
        Ok("off") => CageMode::Off,
        Ok("require") => CageMode::Require,
        _ => match kaged_host_core::testing::cage_available_for("the chaos suite, caged").await {
            true => CageMode::Require,
            false => CageMode::Off,
        },
    };
    let opts = ChaosOptions::suite(cage);
    let mut failed = Vec::new();
    for seed in seeds() {
        let out = run_seed(&opts, seed).await;
        eprintln!("{}", out.line());
        if !out.failures.is_empty() {
            failed.push(format!(
                "seed {seed} ({}): {}\n  replay: {}",
                out.plan.describe(),
                out.failures.join("; "),
                replay_command(seed, cage != CageMode::Off)
            ));
        }
    }
    assert!(
        failed.is_empty(),
        "chaos seeds failed:\n{}",
        failed.join("\n")
    );
}
