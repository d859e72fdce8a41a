use kaged_plugin_sdk::kaged_plugin;

struct P;

#[kaged_plugin(name = "p")]
struct R;

fn main() {}
