use kaged_plugin_sdk::kaged_plugin;

struct P;

#[kaged_plugin(name = "Memory_MD")]
impl P {}

fn main() {}
