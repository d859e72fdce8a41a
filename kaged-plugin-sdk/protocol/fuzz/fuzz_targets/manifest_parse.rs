//! The manifest parser on any text: it never panics, and a manifest it
//! accepts, written back as YAML, parses to the same manifest.
#![no_main]

use kaged_plugin_protocol::manifest::Manifest;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(m) = Manifest::from_yaml_str(text) {
        let yaml = m.to_yaml();
        let back = Manifest::from_yaml_str(&yaml)
            .unwrap_or_else(|e| panic!("the emitted manifest does not parse: {e}\n{yaml}"));
        assert_eq!(back, m, "round trip through\n{yaml}");
    }
});
