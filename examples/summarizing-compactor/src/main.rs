//! The `summarizing-compactor` kaged plugin binary: serves on stdio (or
//! prints its manifest with `--print-manifest`).

use kaged_plugin_sdk::KagedPlugin;

fn main() {
    kaged_example_summarizing_compactor::SummarizingCompactor::default().run()
}
