use kaged_plugin_sdk::kaged_plugin;

struct P;

#[kaged_plugin(nmae = "p")]
impl P {}

struct Q;

#[kaged_plugin(notifications("q.changed"))]
impl Q {}

fn main() {}
