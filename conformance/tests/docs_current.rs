//! `docs/conformance.md` carries the case catalogue generated from
//! `catalogue/`; this test fails when it is out of date. Regenerate with
//! `KAGED_UPDATE_DOCS=1 cargo test -p kaged-conformance --test docs_current`.

use kaged_conformance::list::{
    render_kinds_markdown, render_markdown, BEGIN_MARKER, END_MARKER, KINDS_BEGIN_MARKER,
    KINDS_END_MARKER,
};

#[test]
fn the_catalogue_in_docs_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/conformance.md");
    let text = std::fs::read_to_string(path).expect("docs/conformance.md exists");
    let start = text
        .find(BEGIN_MARKER)
        .or_else(|| text.find("@@CATALOGUE@@"));
    let start = start.expect("docs/conformance.md has the catalogue markers");
    let end = text[start..]
        .find(END_MARKER)
        .map(|e| start + e + END_MARKER.len() + 1)
        .unwrap_or_else(|| start + "@@CATALOGUE@@\n".len());
    let current = &text[start..end.min(text.len())];
    let fresh = render_markdown();
    if current != fresh {
        if std::env::var_os("KAGED_UPDATE_DOCS").is_some() {
            let updated = format!(
                "{}{}{}",
                &text[..start],
                fresh,
                &text[end.min(text.len())..]
            );
            std::fs::write(path, updated).expect("write docs/conformance.md");
        } else {
            panic!("docs/conformance.md's catalogue is out of date: run KAGED_UPDATE_DOCS=1 cargo test -p kaged-conformance --test docs_current");
        }
    }
}

/// The failure kinds' table, between its markers, is [`render_kinds_markdown`].
#[test]
fn the_failure_kinds_in_docs_are_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/conformance.md");
    let text = std::fs::read_to_string(path).expect("docs/conformance.md exists");
    let start = text
        .find(KINDS_BEGIN_MARKER)
        .expect("docs/conformance.md has the kinds markers");
    let end = text[start..]
        .find(KINDS_END_MARKER)
        .map(|e| start + e + KINDS_END_MARKER.len() + 1)
        .expect("the kinds end marker");
    let fresh = render_kinds_markdown();
    if text[start..end.min(text.len())] != fresh {
        if std::env::var_os("KAGED_UPDATE_DOCS").is_some() {
            let updated = format!(
                "{}{}{}",
                &text[..start],
                fresh,
                &text[end.min(text.len())..]
            );
            std::fs::write(path, updated).expect("write docs/conformance.md");
        } else {
            panic!("docs/conformance.md's failure kinds are out of date: run KAGED_UPDATE_DOCS=1 cargo test -p kaged-conformance --test docs_current");
        }
    }
}
