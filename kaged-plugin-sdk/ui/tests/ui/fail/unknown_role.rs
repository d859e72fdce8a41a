use kaged_plugin_sdk::kaged_plugin;

struct P;

#[kaged_plugin(name = "p", roles(observer, janitor))]
impl P {}

fn main() {}
