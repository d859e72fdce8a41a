//! The spec's shell plugin pattern (bash + jq, verbatim from
//! plugin-host.md) through the suite. Its verdicts are recorded in
//! `docs/conformance.md`; this test fails when the recorded verdicts differ
//! from what the suite finds (regenerate with `KAGED_UPDATE_DOCS=1`).

mod support;

use std::time::Duration;

use kaged_conformance::report::Report;
use kaged_conformance::{run_suite, Options};
use kaged_host_core::time::Timeouts;
use support::{host_fixture, options};

const BEGIN: &str = "<!-- BEGIN SHELL ADAPTER VERDICTS -->";
const END: &str = "<!-- END SHELL ADAPTER VERDICTS -->";

fn table(r: &Report) -> String {
    let dir = std::fs::canonicalize(host_fixture("shell-adapter")).expect("fixture dir");
    let mut out = format!("{BEGIN}\n\n| case | verdict | why |\n|---|---|---|\n");
    for c in &r.cases {
        let why = c
            .detail
            .lines()
            .next()
            .unwrap_or_default()
            .replace(&dir.display().to_string(), "<dir>");
        let why = kaged_plugin_protocol::text::cut(&why, 220).replace('|', "\\|");
        out.push_str(&format!(
            "| `{}` | {} | {} |\n",
            c.id,
            c.status.as_str(),
            why
        ));
    }
    out.push_str(&format!("\n{END}\n"));
    out
}

/// The adapter forks `jq` for every message it reads, so each answer costs
/// process starts, which a busy machine makes slow: its waits for answers
/// get 5 s instead of the scaled 250 ms (ping) and 1.5 s (request); three
/// of its gaps wait one out. Start and exit keep their spec budgets.
fn budgets(t: Timeouts) -> Timeouts {
    Timeouts {
        ping: Duration::from_secs(5),
        request: Duration::from_secs(5),
        ..t.with_spec_startup_and_exit()
    }
}

/// `(case id, verdict)` rows of a verdict table.
fn rows(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split(" | ").collect();
            let id = cells.first()?.strip_prefix("| `")?.strip_suffix('`')?;
            Some((id.to_string(), cells.get(1)?.trim().to_string()))
        })
        .collect()
}

#[test]
fn the_recorded_shell_adapter_verdicts_are_true() {
    let options = Options {
        adjust_timeouts: Some(budgets),
        ..options()
    };
    let r = run_suite(&host_fixture("shell-adapter"), &options).expect("the suite runs");
    let fresh = table(&r);
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/conformance.md");
    let doc = std::fs::read_to_string(path).expect("docs/conformance.md");
    let (start, end) = match (doc.find(BEGIN), doc.find(END)) {
        (Some(s), Some(e)) => (s, e + END.len() + 1),
        _ => panic!("docs/conformance.md lacks the shell adapter verdict markers"),
    };
    let recorded = &doc[start..end.min(doc.len())];
    if std::env::var_os("KAGED_UPDATE_DOCS").is_some() && recorded != fresh {
        let updated = format!("{}{}{}", &doc[..start], fresh, &doc[end.min(doc.len())..]);
        std::fs::write(path, updated).expect("write docs/conformance.md");
    } else if rows(recorded) != rows(&fresh) {
        {
            panic!(
                "docs/conformance.md records shell-adapter verdicts the suite no longer finds; run KAGED_UPDATE_DOCS=1 cargo test -p kaged-conformance --test shell_adapter\nfound:\n{fresh}"
            );
        }
    }
    // What the pattern gets wrong, independently of the doc.
    let status = |id: &str| r.case(id).status.as_str();
    assert_eq!(status("handshake.name_matches"), "pass");
    assert_eq!(
        status("protocol.ids_echoed"),
        "fail",
        "string ids are echoed unquoted"
    );
    assert_eq!(status("handshake.no_stdout_noise"), "fail");
    assert_eq!(status("lifecycle.stdin_eof_exits"), "pass");
}
