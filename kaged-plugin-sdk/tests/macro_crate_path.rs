//! The SDK found through a re-export: `crate = path` and `crate = "path"`.

mod sdk {
    pub use kaged_plugin_sdk::*;
}

mod facade {
    pub mod plugins {
        pub use kaged_plugin_sdk::*;
    }
}

struct A;

#[sdk::kaged_plugin(name = "via-path", crate = crate::sdk)]
impl A {
    #[method("a.ping")]
    async fn ping(&self) -> Result<&'static str, sdk::PluginError> {
        Ok("pong")
    }
}

struct B;

#[sdk::kaged_plugin(name = "via-string", crate = "crate::facade::plugins")]
impl B {
    #[method("b.ping")]
    async fn ping(&self) -> Result<&'static str, sdk::PluginError> {
        Ok("pong")
    }
}

#[test]
fn both_crate_paths_find_the_sdk() {
    use sdk::KagedPlugin;
    assert_eq!(A.build().expect("valid").methods(), ["a.ping"]);
    assert_eq!(B.build().expect("valid").methods(), ["b.ping"]);
}
