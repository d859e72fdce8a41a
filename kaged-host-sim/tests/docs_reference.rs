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

/// The test names `docs/spec-coverage.md` cites (`file.rs::name`, and the
/// `::name` that follow one): the identifier after each `::`.
fn cited_tests(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for snippet in text.split('`').skip(1).step_by(2) {
        if !(snippet.contains(".rs::") || snippet.starts_with("::")) || snippet.contains("FILE") {
            continue;
        }
        for part in snippet.split("::").skip(1) {
            let name: String = part
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            if name.contains('_') {
                out.push(name);
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Every `.rs` file under `dir`, `target/` and hidden directories left out.
fn rust_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read_dir").flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let skipped = name == "target" || name == "node_modules" || name.starts_with('.');
        if path.is_dir() && !skipped {
            rust_files(&path, out);
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

/// The test names `source` declares: functions, and the cases of table
/// macros (`case!(name: ...)`, `name: own(..) => [..]`, a name listed in a
/// macro that makes one test per name).
fn declared(source: &str, out: &mut std::collections::HashSet<String>) {
    for line in source.lines() {
        let t = line.trim_start();
        // `fn`, `async fn`, `pub(crate) fn`: only qualifiers before it.
        let function = t.find("fn ").filter(|&i| {
            t[..i]
                .split_whitespace()
                .all(|w| w == "async" || w.starts_with("pub"))
        });
        let rest = match function {
            Some(i) => &t[i + 3..],
            None => t.split_once("!(").map_or(t, |(_, r)| r),
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let after = &rest[name.len()..];
        if !name.is_empty() && (after.is_empty() || after.starts_with(['(', ':', ',', '<'])) {
            out.insert(name);
        }
    }
}

#[test]
fn every_test_spec_coverage_names_exists() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let text = std::fs::read_to_string(root.join("docs/spec-coverage.md")).expect("spec-coverage");
    let mut files = Vec::new();
    for dir in [
        "kaged-host-sim",
        "kaged-plugin-sdk",
        "kaged-plugin-macros",
        "conformance",
        "examples",
    ] {
        rust_files(&root.join(dir), &mut files);
    }
    let mut names = std::collections::HashSet::new();
    for f in &files {
        declared(&std::fs::read_to_string(f).unwrap_or_default(), &mut names);
    }
    let cited = cited_tests(&text);
    assert!(
        cited.len() > 300,
        "the citations were read: {}",
        cited.len()
    );
    let missing: Vec<&String> = cited.iter().filter(|n| !names.contains(*n)).collect();
    assert!(
        missing.is_empty(),
        "docs/spec-coverage.md cites tests that do not exist: {missing:?}"
    );
}
