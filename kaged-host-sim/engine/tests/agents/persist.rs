//! Knob changes written back into the project file
//! (`agents::persist::set_config_field`): only the declaration's `config:`
//! changes, the rest of the file stays byte for byte.

use kaged_host_engine::agents::persist::set_config_field;
use kaged_host_engine::agents::Project;
use proptest::prelude::*;
use serde_json::{json, Value};

const FILE: &str = "\
# The team's project.
primary:
  model: big   # not ours: kept
  plugins:
    notes:
      package: \"@kaged/notes\"   # pinned
      config:
        max: 10
        # a comment inside the block goes with it
        tags: [a, b]
      hooks: [on_session_start]
    memory:
      package: \"@kaged/memory\"
  subagents:
    researcher:
      plugins:
        notes:
          hooks: [on_session_idle]

# trailing comment
";

fn config_of(text: &str, agent: &str, key: &str) -> Option<serde_json::Map<String, Value>> {
    let p = Project::from_yaml_str(text, "p.yaml").expect("loads");
    p.agent(agent)?.plugin(key)?.config.clone()
}

#[test]
fn a_block_config_is_rewritten_in_place_and_nothing_else_moves() {
    let out =
        set_config_field(FILE, "p.yaml", "primary", "notes", "max", &json!(25)).expect("writes");
    let want = FILE.replace(
        "      config:\n        max: 10\n        # a comment inside the block goes with it\n        tags: [a, b]\n",
        "      config: {\"max\":25,\"tags\":[\"a\",\"b\"]}\n",
    );
    assert_eq!(out, want);
}

#[test]
fn a_declaration_without_config_gets_one_after_its_last_line() {
    let out = set_config_field(FILE, "p.yaml", "primary", "memory", "budget", &json!("low"))
        .expect("writes");
    let want = FILE.replace(
        "      package: \"@kaged/memory\"\n",
        "      package: \"@kaged/memory\"\n      config: {\"budget\":\"low\"}\n",
    );
    assert_eq!(out, want);
    let sub = set_config_field(
        FILE,
        "p.yaml",
        "primary.subagents.researcher",
        "notes",
        "max",
        &json!(3),
    )
    .expect("writes");
    assert_eq!(
        config_of(&sub, "primary.subagents.researcher", "notes"),
        Some(json!({"max": 3}).as_object().cloned().unwrap_or_default())
    );
    assert!(
        sub.ends_with("          config: {\"max\":3}\n\n# trailing comment\n"),
        "{sub}"
    );
}

#[test]
fn what_cannot_be_written_back_is_an_error_naming_why() {
    let e =
        set_config_field(FILE, "p.yaml", "primary", "nope", "max", &json!(1)).expect_err("no such");
    assert!(e.to_string().contains("no such declaration"), "{e}");
    let flow = "primary:\n  plugins:\n    notes: { package: \"@kaged/notes\" }\n";
    let e =
        set_config_field(flow, "p.yaml", "primary", "notes", "max", &json!(1)).expect_err("flow");
    assert!(e.to_string().contains("not a block mapping"), "{e}");
    assert!(
        e.to_string()
            .starts_with("cannot write `max` of `notes` on agent `primary` into p.yaml"),
        "{e}"
    );
}

proptest! {
    /// Any JSON value of a field round-trips through the file, and every
    /// line outside the declaration's config stays as it was.
    #[test]
    fn any_value_round_trips_and_other_lines_stay(
        n in any::<i64>(),
        s in "\\PC{0,20}",
        b in any::<bool>(),
    ) {
        for value in [json!(n), json!(s), json!(b), json!([n, s]), json!({"k": s})] {
            let out = set_config_field(FILE, "p.yaml", "primary", "notes", "x", &value).expect("writes");
            let config = config_of(&out, "primary", "notes").expect("a config");
            prop_assert_eq!(&config["x"], &value);
            prop_assert_eq!(&config["max"], &json!(10));
            let kept = |t: &str| t.lines().filter(|l| !l.starts_with("      config") && !l.starts_with("        ")).map(str::to_string).collect::<Vec<_>>();
            prop_assert_eq!(kept(&out), kept(FILE));
        }
    }
}
