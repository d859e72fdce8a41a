//! `docs/protocol.md` ends with tables generated from the code's enums
//! (error codes, methods, hooks, audit events, validation rules); this test
//! fails when they are out of date. Regenerate with
//! `KAGED_UPDATE_DOCS=1 cargo test -p kaged-host-sim --test docs_reference`.

use kaged_host_core::reference::{render, BEGIN_MARKER, END_MARKER};

#[test]
fn the_generated_reference_in_docs_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/protocol.md");
    let text = std::fs::read_to_string(path).expect("docs/protocol.md exists");
    let fresh = render();
    let (head, current) = match (text.find(BEGIN_MARKER), text.find(END_MARKER)) {
        (Some(b), Some(e)) => (&text[..b], &text[b..e + END_MARKER.len() + 1]),
        _ => (text.as_str(), ""),
    };
    if current != fresh {
        assert!(
            std::env::var_os("KAGED_UPDATE_DOCS").is_some(),
            "docs/protocol.md's generated tables are out of date: run KAGED_UPDATE_DOCS=1 cargo test -p kaged-host-sim --test docs_reference"
        );
        std::fs::write(path, format!("{head}{fresh}")).expect("write docs/protocol.md");
    }
}

/// The markers around the seccomp table in `docs/authoring.md` § 14.
const SECCOMP_BEGIN: &str =
    "<!-- BEGIN GENERATED: seccomp refusals (kaged_host_core::cage::seccomp::REFUSALS) -->\n";
const SECCOMP_END: &str = "<!-- END GENERATED: seccomp refusals -->";

#[test]
fn the_refused_calls_table_in_the_authoring_guide_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/authoring.md");
    let text = std::fs::read_to_string(path).expect("docs/authoring.md exists");
    let (Some(b), Some(e)) = (text.find(SECCOMP_BEGIN), text.find(SECCOMP_END)) else {
        panic!(
            "docs/authoring.md has no `{}` … `{SECCOMP_END}` block",
            SECCOMP_BEGIN.trim()
        );
    };
    let start = b + SECCOMP_BEGIN.len();
    let fresh = kaged_host_core::cage::seccomp::refusals_markdown();
    if text[start..e] != fresh {
        assert!(
            std::env::var_os("KAGED_UPDATE_DOCS").is_some(),
            "docs/authoring.md's table of refused calls is out of date: run KAGED_UPDATE_DOCS=1 cargo test -p kaged-host-sim --test docs_reference"
        );
        std::fs::write(path, format!("{}{fresh}{}", &text[..start], &text[e..]))
            .expect("write docs/authoring.md");
    }
}
