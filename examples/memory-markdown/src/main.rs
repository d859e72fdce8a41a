//! The `memory-markdown` kaged plugin binary: serves on stdio (or prints its
//! manifest with `--print-manifest`).

fn main() {
    let plugin = kaged_example_memory_markdown::MemoryMarkdown::from_env();
    kaged_example_memory_markdown::builder(plugin).run()
}
