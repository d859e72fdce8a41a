//! The echo plugin: one custom method, one tool and one notification, on
//! the SDK's builder API (no macros), to show the smallest complete plugin.
//!
//! The manifest metadata the code cannot know (description, command,
//! capabilities...) is given to the builder too, so that
//! `echo --print-manifest` prints the whole `kaged-plugin.yaml`;
//! `tests/manifest_drift.rs` checks the checked-in one is current. The
//! types of `echo.say` give its conformance profile (`echo --print-profile`,
//! checked in as `kaged-conformance.yaml`): the suite calls it with the
//! examples on `Say` and checks the answer against `Said`'s schema.

use kaged_plugin_sdk::describe::MethodSchemas;
use kaged_plugin_sdk::{plugin, Call, PluginError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `echo.say` params.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    example = serde_json::json!({"text": "hello"}),
    example = serde_json::json!({"text": "grüß dich, 世界"})
)]
struct Say {
    /// The text to echo.
    text: String,
}

/// `echo.say` result.
#[derive(Debug, Serialize, JsonSchema)]
struct Said {
    /// The text, as sent.
    said: String,
    /// The agent that asked, when the call came from an agent run.
    agent_path: Option<String>,
}

/// Arguments of the `shout` tool.
#[derive(Debug, Deserialize, JsonSchema)]
struct ShoutArgs {
    /// The text to shout.
    text: String,
    /// How many exclamation marks to add (default 1).
    #[serde(default = "one", deserialize_with = "at_most_ten")]
    #[schemars(range(min = 0, max = 10))]
    bangs: u8,
}

fn one() -> u8 {
    1
}

/// The schema's `maximum: 10`, checked as the arguments deserialize: the
/// SDK validates tool arguments with serde (a plugin links no JSON Schema
/// validator unless it enables the SDK's `schema-validation` feature), so
/// a constraint serde cannot see is checked here, and a bad value answers
/// `-32602` naming `/bangs`.
fn at_most_ten<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u8, D::Error> {
    let n = u8::deserialize(d)?;
    if n > 10 {
        return Err(serde::de::Error::custom(format_args!(
            "{n} is greater than the maximum of 10"
        )));
    }
    Ok(n)
}

async fn say(p: Say, call: Call) -> Result<Said, PluginError> {
    call.host
        .notify("echo.said", serde_json::json!({ "text": p.text }))?;
    Ok(Said {
        said: p.text,
        agent_path: call.context.and_then(|c| c.agent_path),
    })
}

async fn shout(a: ShoutArgs, _call: Call) -> Result<String, PluginError> {
    Ok(format!(
        "{}{}",
        a.text.to_uppercase(),
        "!".repeat(a.bangs.into())
    ))
}

fn main() {
    plugin!("echo")
        .description("Echoes text back; the smallest complete plugin on the SDK's builder API.")
        .author("kaged plugin kit")
        .license("MIT OR Apache-2.0")
        .command(["../../target/debug/echo"])
        .capability("net:[]")
        .shutdown_timeout_sec(5)
        .method("echo.say", say)
        .method_schemas("echo.say", MethodSchemas::of::<Say, Said>())
        .tool(
            "shout",
            "Upper-case the text and add exclamation marks.",
            shout,
        )
        .notification("echo.said")
        .run()
}
