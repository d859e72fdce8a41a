use kaged_plugin_sdk::{kaged_plugin, PluginError};

struct P;

struct Report {
    lines: Vec<String>,
}

#[kaged_plugin(name = "p")]
impl P {
    #[method("p.report")]
    async fn report(&self) -> Result<Report, PluginError> {
        Ok(Report { lines: Vec::new() })
    }
}

fn main() {}
