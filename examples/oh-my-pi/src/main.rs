//! The `oh-my-pi` kaged plugin binary: serves on stdio (or prints its
//! manifest with `--print-manifest`).

use kaged_plugin_sdk::KagedPlugin;

fn main() {
    kaged_example_oh_my_pi::OhMyPi::default().run()
}
