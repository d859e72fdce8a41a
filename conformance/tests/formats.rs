//! The report formats against a real run: JUnit is well-formed XML with one
//! test case per conformance case, TAP is well-formed TAP 14.

mod support;

use kaged_test_support::command::run_ok;
use serde_json::Value;
use support::{cmd, own_fixture};

/// `hook-errors` with one of its two failures baselined: a report with
/// passing, failing, warning and skipped cases, details full of quotes.
/// At the spec's budgets (`--time-scale 1`): its failures are answers, so
/// nothing is waited out, and no verdict hangs on how fast the machine is.
fn mixed_run(format: &str, tmp: &std::path::Path) -> (Option<i32>, String, Value) {
    let baseline = tmp.join("known.txt");
    std::fs::write(&baseline, "hooks.answers[post_compact]\n").expect("write");
    let json_out = tmp.join(format!("{format}.json"));
    let run = |fmt: &str, out: &std::path::Path| {
        cmd()
            .args([
                "run",
                "--time-scale",
                "1",
                "--format",
                fmt,
                "--known-failing",
            ])
            .arg(&baseline)
            .arg("--output")
            .arg(out)
            .arg(own_fixture("hook-errors"))
            .output()
            .expect("runs")
    };
    let out_file = tmp.join(format!("report.{format}"));
    let out = run(format, &out_file);
    run("json", &json_out);
    let json: Value = serde_json::from_str(&std::fs::read_to_string(json_out).expect("json"))
        .expect("json report");
    (
        out.status.code(),
        std::fs::read_to_string(out_file).expect("report"),
        json,
    )
}

#[test]
fn junit_is_well_formed_xml_with_one_testcase_per_case() {
    use quick_xml::events::{BytesStart, Event};
    let tmp = tempfile::tempdir().expect("tempdir");
    let (code, xml, json) = mixed_run("junit", tmp.path());
    assert_eq!(code, Some(1));
    let mut reader = quick_xml::Reader::from_str(&xml);
    reader.config_mut().check_end_names = true;
    let (mut depth, mut cases, mut failures, mut skipped, mut props) = (0i32, 0, 0, 0, Vec::new());
    let mut messages: Vec<String> = Vec::new();
    let mut seen = |e: &BytesStart<'_>| match e.name().as_ref() {
        b"testcase" => cases += 1,
        b"failure" => {
            failures += 1;
            let message = e.try_get_attribute("message").ok().flatten();
            // The five predefined entities (what the writer escapes).
            let text = message
                .map(|a| String::from_utf8_lossy(&a.value).into_owned())
                .unwrap_or_default()
                .replace("&quot;", "\"")
                .replace("&apos;", "'")
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&amp;", "&");
            messages.push(text);
        }
        b"skipped" => skipped += 1,
        b"property" => {
            let name = e.try_get_attribute("name").ok().flatten();
            props.push(
                name.map(|a| String::from_utf8_lossy(&a.value).into_owned())
                    .unwrap_or_default(),
            );
        }
        _ => {}
    };
    loop {
        match reader.read_event() {
            Ok(Event::Eof) => break,
            Ok(Event::Start(e)) => {
                seen(&e);
                depth += 1;
            }
            Ok(Event::Empty(e)) => seen(&e),
            Ok(Event::End(_)) => depth -= 1,
            Ok(_) => {}
            Err(e) => panic!(
                "JUnit is not well-formed XML at {}: {e}\n{xml}",
                reader.buffer_position()
            ),
        }
    }
    assert_eq!(depth, 0, "every element is closed");
    let count = |s: &str| {
        json["cases"]
            .as_array()
            .map_or(0, |a| a.iter().filter(|c| c["status"] == s).count())
    };
    assert_eq!(cases, json["cases"].as_array().map_or(0, Vec::len));
    assert_eq!((failures, skipped), (count("fail"), count("skip")));
    assert!(
        failures >= 1 && count("warn") >= 1 && skipped >= 1,
        "a mixed report"
    );
    assert!(props.iter().any(|p| p == "effective_timeouts"), "{props:?}");
    // A failure's message says what broke: its detail's first line (CI
    // summaries show the message only), not the rule.
    for c in json["cases"].as_array().into_iter().flatten() {
        if c["status"] == "fail" {
            let first = c["detail"]
                .as_str()
                .and_then(|d| d.lines().next())
                .unwrap_or("");
            assert!(
                messages.iter().any(|m| m.starts_with(first)),
                "no failure message starts with {first:?}: {messages:?}"
            );
        }
    }
    assert!(
        messages.iter().all(|m| !m.contains("rule broken")),
        "{messages:?}"
    );
}

/// TAP 13 (what `prove` reads, and TAP 14 consumers accept): the version
/// line, a plan that matches, test points numbered in order, `not ok`
/// points followed by an indented YAML block, `# SKIP` directives for
/// skips, comments otherwise.
#[test]
fn tap_is_well_formed_tap_13() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (code, tap, json) = mixed_run("tap", tmp.path());
    assert_eq!(code, Some(1));
    let cases = json["cases"].as_array().cloned().unwrap_or_default();
    let mut lines = tap.lines().peekable();
    assert_eq!(lines.next(), Some("TAP version 13"));
    assert_eq!(lines.next(), Some(format!("1..{}", cases.len()).as_str()));
    let point = regex::Regex::new(r"^(ok|not ok) (\d+) - (\S+) ").expect("regex");
    let mut n = 0;
    while let Some(line) = lines.next() {
        if line.starts_with('#') {
            continue;
        }
        let c = point
            .captures(line)
            .unwrap_or_else(|| panic!("not a test point: {line:?}\n{tap}"));
        n += 1;
        let case = &cases[n - 1];
        assert_eq!(c[2].parse::<usize>().ok(), Some(n), "{line}");
        assert_eq!(&c[3], case["id"].as_str().unwrap_or_default(), "{line}");
        let status = case["status"].as_str().unwrap_or_default();
        assert_eq!(&c[1] == "not ok", status == "fail", "{line}");
        assert_eq!(line.contains(" # SKIP "), status == "skip", "{line}");
        if status == "fail" {
            assert_eq!(lines.next(), Some("  ---"), "{line}");
            let mut block = 0;
            for l in lines.by_ref() {
                if l == "  ..." {
                    break;
                }
                assert!(
                    l.starts_with("  ") && l.contains(": "),
                    "YAML block line {l:?}"
                );
                block += 1;
            }
            assert!(block >= 3, "level, spec and detail for {line}");
        }
    }
    assert_eq!(n, cases.len());
}

/// Run a TAP consumer found on this machine; under `CI=true` a missing one
/// is a failure (`.ci/run` installs both), elsewhere `None` after saying
/// the check is skipped.
fn consumer(
    what: &str,
    found: Result<std::process::Command, String>,
) -> Option<std::process::Command> {
    kaged_test_support::ci::required_in_ci(what, found)
}

/// Perl's TAP::Parser (what `prove` runs): version, counts, parse errors.
fn perl_tap_parser(file: &std::path::Path) -> Result<std::process::Command, String> {
    let ok = std::process::Command::new("perl")
        .args(["-MTAP::Parser", "-MJSON::PP", "-e", "1"])
        .status()
        .map_err(|e| format!("cannot run perl: {e}"))?;
    if !ok.success() {
        return Err("perl has no TAP::Parser or JSON::PP (Debian: perl)".into());
    }
    let mut c = std::process::Command::new("perl");
    c.args([
        "-MTAP::Parser",
        "-MJSON::PP",
        "-e",
        r#"my $p = TAP::Parser->new({source => $ARGV[0]});
           while (my $r = $p->next) {}
           print JSON::PP->new->canonical->encode({
               version => $p->version, tests_run => $p->tests_run + 0,
               passed => scalar($p->passed), failed => scalar($p->failed),
               skipped => scalar($p->skipped), parse_errors => [$p->parse_errors],
               plan => $p->plan });"#,
    ])
    .arg(file);
    Ok(c)
}

/// node's tap-parser (TAP 14), from `$KAGED_TAP_PARSER_DIR` or
/// `target/npm/node_modules` (where `.ci/run` installs it).
fn node_tap_parser(file: &std::path::Path) -> Result<std::process::Command, String> {
    let dir = std::env::var_os("KAGED_TAP_PARSER_DIR").map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/npm/node_modules"),
        std::path::PathBuf::from,
    );
    if !dir.join("tap-parser").is_dir() {
        return Err(format!(
            "no tap-parser under {} (npm install --prefix target/npm tap-parser)",
            dir.display()
        ));
    }
    let mut c = std::process::Command::new("node");
    c.env("NODE_PATH", &dir)
        .args([
            "-e",
            r#"const { Parser } = require("tap-parser");
           const p = new Parser((r) => console.log(JSON.stringify({
               ok: r.ok, count: r.count, pass: r.pass, fail: r.fail, skip: r.skip,
               errors: r.failures.filter((f) => f.tapError).map((f) => f.tapError) })));
           p.end(require("fs").readFileSync(process.argv[1], "utf8"));"#,
        ])
        .arg(file);
    Ok(c)
}

fn run_json(mut c: std::process::Command) -> Value {
    let out = run_ok(&mut c);
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// The TAP of a failing run, read by the consumers CI images ship: Perl's
/// TAP::Parser (`prove`, which refuses any version above 13) and node's
/// tap-parser (TAP 14), both with the counts of the JSON report.
#[test]
fn prove_and_a_tap_14_parser_both_read_the_tap_with_the_right_counts() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (code, tap, json) = mixed_run("tap", tmp.path());
    assert_eq!(code, Some(1));
    let file = tmp.path().join("report.tap");
    std::fs::write(&file, &tap).expect("write");
    let count = |s: &str| {
        json["cases"]
            .as_array()
            .map_or(0, |a| a.iter().filter(|c| c["status"] == s).count())
    };
    let total = json["cases"].as_array().map_or(0, Vec::len);
    let (fail, skip) = (count("fail"), count("skip"));
    assert!(fail >= 1 && skip >= 1, "a mixed run");
    if let Some(c) = consumer("Perl's TAP::Parser", perl_tap_parser(&file)) {
        let v = run_json(c);
        assert_eq!(v["parse_errors"], serde_json::json!([]), "{v}");
        assert_eq!(v["version"], 13, "{v}");
        assert_eq!(v["tests_run"], total, "{v}");
        assert_eq!(v["failed"], fail, "{v}");
        assert_eq!(v["passed"], total - fail, "{v}");
        assert_eq!(v["skipped"], skip, "{v}");
        // And `prove` itself says the run failed.
        let out = std::process::Command::new("prove")
            .args(["--exec", "cat"])
            .arg(&file)
            .output()
            .expect("run prove");
        assert!(!out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains(&format!("Failed {fail}/{total} subtests")),
            "{text}"
        );
    }
    if let Some(c) = consumer("node's tap-parser", node_tap_parser(&file)) {
        let v = run_json(c);
        assert_eq!(v["errors"], serde_json::json!([]), "{v}");
        assert_eq!(v["ok"], false, "{v}");
        assert_eq!(v["count"], total, "{v}");
        assert_eq!(v["fail"], fail, "{v}");
        assert_eq!(v["skip"], skip, "{v}");
        assert_eq!(v["pass"], total - fail, "{v}");
    }
}

/// One run writes JUnit, Markdown and HTML (`--report FORMAT=FILE`,
/// repeatable) beside its `--format` output.
#[test]
fn one_run_writes_three_report_files() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = |name: &str| tmp.path().join(name);
    let out = cmd()
        .args(["run", "--time-scale", "1", "--format", "json", "--report"])
        .arg(format!("junit={}", file("report.xml").display()))
        .arg("--report")
        .arg(format!("markdown={}", file("summary.md").display()))
        .arg("--report")
        .arg(format!("html={}", file("report.html").display()))
        .arg(own_fixture("hook-errors"))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let json: Value = serde_json::from_slice(&out.stdout).expect("the JSON report on stdout");
    let total = json["cases"].as_array().map_or(0, Vec::len);
    let failed = json["summary"]["failed"].as_u64().unwrap_or_default() as usize;
    let read = |name: &str| std::fs::read_to_string(file(name)).expect(name);
    let xml = read("report.xml");
    assert_eq!(xml.matches("<testcase ").count(), total, "{xml}");
    let md = read("summary.md");
    assert!(md.starts_with("## kaged-conformance: hook-errors "), "{md}");
    assert!(md.contains(&format!("❌ {failed} failed")), "{md}");
    assert_eq!(
        md.matches("<details>").count(),
        failed + json["summary"]["warned"].as_u64().unwrap_or_default() as usize
    );
    let html = read("report.html");
    assert_eq!(html.matches("<tr class=\"case\"").count(), total);
    assert_eq!(html.matches("data-status=\"fail\"").count(), failed);
    // Self-contained: no external asset.
    for attr in ["src=\"", "href=\"", "@import", "url("] {
        assert!(!html.contains(attr), "{attr} in the HTML report");
    }

    // A bad --report is named.
    let out = cmd()
        .args(["run", "--report", "pdf=x.pdf"])
        .arg(own_fixture("hook-errors"))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("\"pdf\": not a format"), "{err}");
}
