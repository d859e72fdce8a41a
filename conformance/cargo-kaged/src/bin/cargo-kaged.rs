//! `cargo-kaged`: `cargo kaged new | pack | test` (see the library docs).

fn main() {
    std::process::exit(cargo_kaged::cli::main_with_args(std::env::args_os()));
}
