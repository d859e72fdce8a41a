//! `kaged-conformance`: see [`kaged_conformance::main_with_args`].

fn main() {
    std::process::exit(kaged_conformance::main_with_args(std::env::args_os()));
}
