//! `docs/conformance.md` carries the case catalogue generated from
//! `catalogue/` and the failure kinds generated from `catalogue::KINDS`; these
//! tests fail when either is out of date. Regenerate with
//! `KAGED_UPDATE_DOCS=1 cargo test -p kaged-conformance --test docs_current`.

use kaged_conformance::list::{
    render_kinds_markdown, render_markdown, BEGIN_MARKER, END_MARKER, KINDS_BEGIN_MARKER,
    KINDS_END_MARKER,
};

const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/conformance.md");

/// The section of `docs/conformance.md` from `begin` through the line of
/// `end` is `fresh` (rewritten so under `KAGED_UPDATE_DOCS`).
fn section_is_current(what: &str, begin: &str, end: &str, fresh: &str) {
    let text = std::fs::read_to_string(DOC).expect("docs/conformance.md exists");
    let start = text
        .find(begin)
        .unwrap_or_else(|| panic!("docs/conformance.md has the {what} markers"));
    let stop = text[start..]
        .find(end)
        .map(|e| (start + e + end.len() + 1).min(text.len()))
        .unwrap_or_else(|| panic!("docs/conformance.md has the {what} end marker"));
    if text[start..stop] == *fresh {
        return;
    }
    if std::env::var_os("KAGED_UPDATE_DOCS").is_some() {
        let updated = format!("{}{fresh}{}", &text[..start], &text[stop..]);
        std::fs::write(DOC, updated).expect("write docs/conformance.md");
    } else {
        panic!("docs/conformance.md's {what} is out of date: run KAGED_UPDATE_DOCS=1 cargo test -p kaged-conformance --test docs_current");
    }
}

#[test]
fn the_catalogue_in_docs_is_current() {
    section_is_current("catalogue", BEGIN_MARKER, END_MARKER, &render_markdown());
}

#[test]
fn the_failure_kinds_in_docs_are_current() {
    section_is_current(
        "failure kinds",
        KINDS_BEGIN_MARKER,
        KINDS_END_MARKER,
        &render_kinds_markdown(),
    );
}
