//! `kaged-conformance`: see [`kaged_conformance::cli`].

fn main() {
    std::process::exit(kaged_conformance::cli::main_with_args(std::env::args_os()));
}
