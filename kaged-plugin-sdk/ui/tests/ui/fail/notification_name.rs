use kaged_plugin_sdk::kaged_plugin;

struct P;

#[kaged_plugin(name = "p", notifications("changed", "p.changed", "p.changed"))]
impl P {}

fn main() {}
