//! The report formats against a real run: JUnit is well-formed XML with one
//! test case per conformance case, TAP is well-formed TAP 14.

mod support;

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
    let mut seen = |e: &BytesStart<'_>| match e.name().as_ref() {
        b"testcase" => cases += 1,
        b"failure" => failures += 1,
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
}

/// TAP 14: the version line, a plan that matches, test points numbered in
/// order, `not ok` points followed by an indented YAML block, `# SKIP`
/// directives for skips, comments otherwise.
#[test]
fn tap_is_well_formed_tap_14() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (code, tap, json) = mixed_run("tap", tmp.path());
    assert_eq!(code, Some(1));
    let cases = json["cases"].as_array().cloned().unwrap_or_default();
    let mut lines = tap.lines().peekable();
    assert_eq!(lines.next(), Some("TAP version 14"));
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
