//! The manifest validator on any text: it never panics, and a manifest it
//! finds free of errors, written back as YAML, is still free of errors.
#![no_main]

use kaged_host_core::validate::validate_str;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let report = validate_str(text);
    if report.has_errors() {
        return;
    }
    if let Some(m) = &report.manifest {
        let yaml = m.to_yaml();
        let again = validate_str(&yaml);
        let errors: Vec<_> = again.errors().map(|p| p.to_string()).collect();
        assert!(errors.is_empty(), "{errors:?} in the emitted\n{yaml}");
    }
});
