//! `kaged-host-sim`: validate, call and script kaged plugins against a
//! simulated daemon. See `kaged-host-sim --help`.

fn main() -> std::process::ExitCode {
    kaged_host_sim::cli::main()
}
