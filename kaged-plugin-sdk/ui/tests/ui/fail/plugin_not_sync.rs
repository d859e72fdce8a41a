use kaged_plugin_sdk::kaged_plugin;

struct P;

#[kaged_plugin(name = "p")]
impl P {}

struct Q(std::cell::Cell<u32>);

#[kaged_plugin(name = "q")]
impl Q {}

fn main() {}
