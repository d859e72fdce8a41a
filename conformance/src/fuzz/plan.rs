//! The operations a fuzz sequence is made of, generated from the manifest:
//! tool calls with arguments from `parameters_schema` (valid and broken),
//! custom methods (with params from the conformance profile's
//! `params_schema`, valid and broken, else `{}`), `config.update` with
//! configs from `config_schema` (the system side merged in, valid),
//! pings, and several of these at once. Each is also a step of a
//! `kaged-host-sim session` script ([`super::replay`]), so a failing
//! sequence replays without the fuzzer.

use std::collections::BTreeMap;

use kaged_plugin_protocol::manifest::{apply_defaults, Manifest};
use kaged_plugin_protocol::{HookName, Message, MessageRole, PluginCallContext, PluginRole};
use proptest::prelude::*;
use serde_json::{json, Value};

use super::judge::Judge;
use super::knobs::knob_writes;
use super::schema_gen::{mutated, valid};

/// One operation.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// A tool call as an agent runs it.
    Tool {
        /// `<plugin>.<tool>`.
        method: String,
        /// The arguments.
        args: Value,
        /// Whether they satisfy `parameters_schema` (the validator's say).
        valid: bool,
        /// The agent context it runs in.
        ctx: PluginCallContext,
    },
    /// A custom method, called with `{}`, or with params generated from
    /// the profile's `params_schema`.
    Method {
        /// The method.
        method: String,
        /// The params.
        params: Value,
        /// With a `params_schema`: whether they satisfy it (the
        /// validator's say); `None` for `{}` without one.
        valid: Option<bool>,
    },
    /// `config.update`.
    Config {
        /// The config sent.
        config: Value,
        /// Whether it satisfies `config_schema`.
        valid: bool,
    },
    /// A hook the plugin subscribes to, as an observer, with generated
    /// transcripts and message lists (ADDENDUM §4, §5).
    Hook {
        /// The hook.
        hook: HookName,
        /// Its params (`_context` is added by the host).
        params: Value,
        /// The agent context it fires in.
        ctx: PluginCallContext,
    },
    /// `ping`.
    Ping,
    /// Several at once.
    Together(Vec<Op>),
}

/// Agent contexts: two projects, a primary and a subagent, three
/// sessions, interleaved from call to call.
fn contexts() -> BoxedStrategy<PluginCallContext> {
    (
        proptest::sample::select(vec!["fuzz-project", "fuzz-other-project"]),
        proptest::sample::select(vec!["primary", "primary.subagents.researcher"]),
        proptest::sample::select(vec!["ses_fuzz_1", "ses_fuzz_2", "ses_fuzz_3"]),
        0u32..1_000_000,
    )
        .prop_map(|(project, agent, session, n)| {
            PluginCallContext::agent(project, agent, session, format!("req_fuzz_{n}"))
        })
        .boxed()
}

/// One operation of `manifest`'s plugin (no `Together`); `params`: the
/// profile's `params_schema` of custom methods, by method.
fn single(manifest: &Manifest, params: &BTreeMap<String, Value>) -> BoxedStrategy<Op> {
    let mut arms: Vec<BoxedStrategy<Op>> = vec![Just(Op::Ping).boxed()];
    for tool in &manifest.tools {
        let method = format!("{}.{}", manifest.name, tool.name);
        let schema = &tool.parameters_schema;
        let judge = Judge::of(schema);
        for broken in [false, true] {
            let (judge, method) = (judge.clone(), method.clone());
            let values = if broken {
                mutated(schema)
            } else {
                valid(schema, 0)
            };
            arms.push(
                (values, contexts())
                    .prop_map(move |(args, ctx)| Op::Tool {
                        valid: judge.valid(&args),
                        method: method.clone(),
                        args,
                        ctx,
                    })
                    .boxed(),
            );
        }
    }
    let tools: Vec<String> = manifest
        .tools
        .iter()
        .map(|t| format!("{}.{}", manifest.name, t.name))
        .collect();
    let methods: Vec<String> = manifest
        .methods
        .iter()
        .filter(|m| !tools.contains(m))
        .cloned()
        .collect();
    let (profiled, plain): (Vec<String>, Vec<String>) =
        methods.into_iter().partition(|m| params.contains_key(m));
    if !plain.is_empty() {
        arms.push(
            proptest::sample::select(plain)
                .prop_map(|method| Op::Method {
                    method,
                    params: json!({}),
                    valid: None,
                })
                .boxed(),
        );
    }
    for (method, schema) in profiled.iter().filter_map(|m| Some((m, params.get(m)?))) {
        let judge = Judge::of(schema);
        for broken in [false, true] {
            let (judge, method) = (judge.clone(), method.clone());
            let values = if broken {
                mutated(schema)
            } else {
                valid(schema, 0)
            };
            arms.push(
                values
                    .prop_map(move |params| Op::Method {
                        valid: Some(judge.valid(&params)),
                        method: method.clone(),
                        params,
                    })
                    .boxed(),
            );
        }
    }
    if let Some(schema) = &manifest.config_schema {
        let judge = Judge::of(schema);
        // The system side as the operator set it, valid, merged into each
        // project-side config (judged alone against `config_schema`): the
        // object the daemon sends (plugin-host.md § Merging).
        let system = manifest
            .system_config_schema
            .as_ref()
            .and_then(|s| crate::args_from_schema(s).ok())
            .and_then(|v| v.as_object().cloned())
            .unwrap_or_default();
        // The daemon fills a field left out with its schema default before
        // it validates and sends (plugin-host.md § Merging; ADDENDUM §15):
        // a generated config gets the project side's defaults first.
        let project_schema = schema.clone();
        let project = move |generated: Value| match generated {
            Value::Object(mut o) => {
                apply_defaults(Some(&project_schema), &mut o);
                Value::Object(o)
            }
            other => other,
        };
        let merged = move |project: Value| match project {
            Value::Object(mut o) => {
                for (k, v) in &system {
                    o.entry(k.clone()).or_insert_with(|| v.clone());
                }
                Value::Object(o)
            }
            other => other,
        };
        if let Some(writes) = knob_writes(manifest) {
            let (judge, merged, project) = (judge.clone(), merged.clone(), project.clone());
            arms.push(
                writes
                    .prop_map(move |(config, _knob)| {
                        let config = project(config);
                        Op::Config {
                            valid: judge.valid(&config),
                            config: merged(config),
                        }
                    })
                    .boxed(),
            );
        }
        for broken in [false, true] {
            let (judge, merged, project) = (judge.clone(), merged.clone(), project.clone());
            let values = if broken {
                mutated(schema)
            } else {
                valid(schema, 0)
            };
            arms.push(
                values
                    .prop_map(move |config| {
                        let config = project(config);
                        Op::Config {
                            valid: judge.valid(&config),
                            config: merged(config),
                        }
                    })
                    .boxed(),
            );
        }
    }
    let compactor = manifest.effective_roles().contains(&PluginRole::Compactor);
    for hook in manifest.hooks.iter().filter_map(|h| HookName::parse(h)) {
        arms.push(
            (hook_params(hook, PluginRole::Observer), contexts())
                .prop_map(|((hook, params), ctx)| Op::Hook { hook, params, ctx })
                .boxed(),
        );
        if compactor && hook == HookName::PreCompact {
            // As the designated compactor: the contract is checked.
            arms.push(
                (hook_params(hook, PluginRole::Compactor), contexts())
                    .prop_map(|((hook, params), ctx)| Op::Hook { hook, params, ctx })
                    .boxed(),
            );
        }
    }
    proptest::strategy::Union::new(arms).boxed()
}

/// Messages of a transcript: up to 30, any role, some always-keep.
fn messages(prefix: &'static str) -> impl Strategy<Value = Vec<Message>> {
    let role = proptest::sample::select(vec![
        MessageRole::User,
        MessageRole::Assistant,
        MessageRole::Tool,
        MessageRole::System,
    ]);
    proptest::collection::vec((role, "[a-zA-Z .]{0,80}", any::<u8>()), 0..=30).prop_map(move |ms| {
        ms.into_iter()
            .enumerate()
            .map(|(i, (role, content, k))| {
                let m = Message::new(format!("{prefix}_{i:03}"), role, content);
                if k % 4 == 0 {
                    m.keep()
                } else {
                    m
                }
            })
            .collect()
    })
}

/// Generated params for `hook`, fired on a plugin in `role`.
fn hook_params(hook: HookName, role: PluginRole) -> BoxedStrategy<(HookName, Value)> {
    match hook {
        HookName::OnSessionStart => Just((hook, json!({}))).boxed(),
        HookName::OnSessionIdle => messages("msg")
            .prop_map(move |t| (hook, json!({ "transcript": t })))
            .boxed(),
        HookName::PreCompact | HookName::PostCompact => {
            (messages("old"), messages("new"), any::<bool>())
                .prop_map(move |(being, remaining, summarize)| {
                    let summarize = summarize || role == PluginRole::Compactor;
                    let params = json!({
                        "role": role,
                        "messages_being_compacted": being,
                        "messages_remaining": remaining,
                        "strategy": if summarize { "summarize" } else { "drop" },
                        "trigger": "threshold_crossed",
                    });
                    (hook, params)
                })
                .boxed()
        }
    }
}

/// Sequences of 1 to `max_len` operations, some of them several at once;
/// `params`: the profile's `params_schema` of custom methods, by method.
pub fn sequences(
    manifest: &Manifest,
    params: &BTreeMap<String, Value>,
    max_len: usize,
) -> BoxedStrategy<Vec<Op>> {
    let one = single(manifest, params);
    let op = prop_oneof![
        4 => one.clone(),
        1 => proptest::collection::vec(one, 2..=4).prop_map(Op::Together),
    ];
    proptest::collection::vec(op, 1..=max_len).boxed()
}

impl Op {
    /// One line for a report.
    pub fn describe(&self) -> String {
        match self {
            Op::Tool {
                method,
                args,
                valid,
                ctx,
            } => {
                format!(
                    "{method} {} ({}, as {} in {}/{})",
                    cut(&args.to_string()),
                    if *valid { "valid" } else { "invalid" },
                    ctx.agent_path.as_deref().unwrap_or_default(),
                    ctx.project_id.as_deref().unwrap_or_default(),
                    ctx.session_id.as_deref().unwrap_or_default()
                )
            }
            Op::Method {
                method,
                params,
                valid,
            } => match valid {
                None => format!("{method} {params}"),
                Some(v) => format!(
                    "{method} {} ({}, by params_schema)",
                    cut(&params.to_string()),
                    if *v { "valid" } else { "invalid" }
                ),
            },
            Op::Config { config, valid } => {
                format!(
                    "config.update {config} ({})",
                    if *valid { "valid" } else { "invalid" }
                )
            }
            Op::Hook { hook, params, .. } => {
                let count = |k: &str| params[k].as_array().map_or(0, Vec::len);
                format!(
                    "{} ({} transcript, {} being compacted, {} remaining message(s))",
                    hook.method(),
                    count("transcript"),
                    count("messages_being_compacted"),
                    count("messages_remaining")
                )
            }
            Op::Ping => "ping".into(),
            Op::Together(ops) => format!(
                "at once: [{}]",
                ops.iter().map(Op::describe).collect::<Vec<_>>().join("; ")
            ),
        }
    }
}

/// `text` cut to 160 characters for a report line.
fn cut(text: &str) -> String {
    match text.char_indices().nth(160) {
        Some((at, _)) => format!("{}… ({} bytes)", &text[..at], text.len()),
        None => text.to_string(),
    }
}
