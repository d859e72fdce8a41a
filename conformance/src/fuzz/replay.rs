//! A shrunk sequence as a `kaged-host-sim session` script: readable YAML
//! (block style, a comment saying what it breaks), parsed back by
//! [`Script::from_yaml_str`] like any hand-written script, so a failure
//! replays with the host alone (`kaged-host-sim session DIR --script
//! replay.yaml`). A broken input carries the error it must get.

use kaged_host_core::FirstConfig;
use kaged_host_engine::scenario::{CallStep, CallsStep, Expect, Script, SessionStep};

use super::plan::Op;

/// The step doing `op` (`calls` for operations sent at once).
pub fn step(op: &Op) -> SessionStep {
    match op {
        Op::Together(_) => CallsStep { calls: calls(op) }.into(),
        op => SessionStep::Call(calls(op).remove(0)),
    }
}

/// The calls doing `op`: one, or a `Together`'s members (flattened).
fn calls(op: &Op) -> Vec<CallStep> {
    let expect = |valid: bool, code: i64| {
        (!valid).then_some(Expect {
            result: None,
            error: Some(code),
        })
    };
    let one = match op {
        Op::Tool {
            method,
            args,
            valid,
            ctx,
        } => CallStep {
            params: Some(args.clone()),
            context: Some(ctx.clone()),
            expect: expect(*valid, -32602),
            ..CallStep::new(method.as_str())
        },
        Op::Method { method, params, .. } => CallStep {
            params: Some(params.clone()),
            ..CallStep::new(method.as_str())
        },
        Op::Config { config, valid } => CallStep {
            params: Some(config.clone()),
            expect: expect(*valid, -32004),
            ..CallStep::new("config.update")
        },
        Op::Hook { hook, params, ctx } => CallStep {
            params: Some(params.clone()),
            context: Some(ctx.clone()),
            ..CallStep::new(hook.method())
        },
        Op::Ping => CallStep::new("ping"),
        Op::Together(ops) => return ops.iter().flat_map(calls).collect(),
    };
    vec![one]
}

/// The script doing `ops` in order.
pub fn script(ops: &[Op], config: &FirstConfig) -> Script {
    Script {
        config: config.clone(),
        steps: ops.iter().map(step).collect(),
    }
}

/// `ops` as a YAML script, each line of `comment` above it as a YAML
/// comment.
pub fn to_yaml(
    ops: &[Op],
    config: &FirstConfig,
    comment: &str,
) -> Result<String, serde_saphyr::SerializeError> {
    let body = serde_saphyr::to_string(&script(ops, config))?;
    let head: String = comment.lines().map(|l| format!("# {l}\n")).collect();
    Ok(format!("{head}{body}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kaged_plugin_protocol::PluginCallContext;
    use proptest::prelude::*;
    use serde_json::{json, Value};

    fn ctx() -> PluginCallContext {
        PluginCallContext::agent("fuzz-project", "primary", "ses_fuzz_1", "req_fuzz_7")
    }

    /// What the host-sim's script runner reads back, as JSON.
    fn read_back(ops: &[Op]) -> (String, Value, Value) {
        let config = FirstConfig::Given(json!({"greeting": "hi"}).as_object().cloned().unwrap());
        let text = to_yaml(ops, &config, "a comment\nof two lines").expect("serializes");
        let parsed = Script::from_yaml_str(&text).expect("the runner reads it");
        assert_eq!(parsed.config, config, "{text}");
        let json = |s: &Script| serde_json::to_value(s).expect("a script is JSON");
        (text, json(&parsed), json(&script(ops, &config)))
    }

    #[test]
    fn a_replay_is_block_yaml_the_script_runner_reads_back() {
        let ops = vec![
            Op::Together(vec![
                Op::Tool {
                    method: "p.tag".into(),
                    args: json!({"note": "", "tags": ["a", "b", "c"]}),
                    valid: true,
                    ctx: ctx(),
                },
                Op::Ping,
            ]),
            Op::Config {
                config: json!({"n": "wrong type"}),
                valid: false,
            },
        ];
        let (text, back, sent) = read_back(&ops);
        assert_eq!(back, sent, "{text}");
        assert!(text.starts_with("# a comment\n# of two lines\n"), "{text}");
        // Block style: one member a line, no JSON braces or quoted keys.
        assert!(
            text.contains("steps:\n- calls:\n  - call: p.tag\n")
                && text.contains("      - a\n      - b\n      - c\n"),
            "{text}"
        );
        assert!(!text.contains('{') && !text.contains("\"steps\""), "{text}");
        assert!(
            text.contains("expect:\n") && text.contains("error: -32004"),
            "{text}"
        );
    }

    proptest! {
        /// Strings a YAML writer must quote (`true`, `null`, numbers,
        /// `: `, `#`, leading spaces, newlines, long runs folded) come back
        /// as they went.
        #[test]
        fn any_string_and_number_survives_the_round_trip(
            s in prop_oneof![
                Just(String::new()),
                proptest::sample::select(vec!["true", "null", "~", "123", "0x1F", "1e3", "yes", "- a", "a: b", "#c", " x", "x ", "\"q'", "2024-01-01"]).prop_map(str::to_string),
                "[ -~\n\t]{0,200}",
                "[a-z ]{150,300}",
            ],
            n in any::<i64>(),
            f in -1.0e9f64..1.0e9,
        ) {
            let ops = vec![Op::Tool {
                method: "p.t".into(),
                args: json!({"s": s, "list": [s, n, f, null, true], "n": n}),
                valid: true,
                ctx: ctx(),
            }];
            let (text, back, sent) = read_back(&ops);
            prop_assert_eq!(back, sent, "{}", text);
        }
    }
}
