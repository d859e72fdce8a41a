//! The cage's init, small: `kaged-cage-init --kaged-cage-init RULES --
//! COMMAND...` enters the Landlock file rules and executes the command
//! (`kaged_host_core::cage::init`, which answers that argument before
//! `main`). Run otherwise, it says what it is and exits 2.

fn main() {
    eprintln!("{}", kaged_host_core::cage::init::usage());
    std::process::exit(2);
}
