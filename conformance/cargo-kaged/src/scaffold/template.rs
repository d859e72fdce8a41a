//! The files of a new plugin package, as text: `Cargo.toml`, `src/main.rs`
//! (the `#[kaged_plugin]` macro API, with the optional tool, hooks and
//! storage), `kaged-plugin.base.yaml` (what the code cannot know), the two
//! tests (manifest drift, conformance), `.gitignore` and a README.

use super::options::NewOptions;

/// Where the kit's crates come from.
#[derive(Debug, Clone)]
pub enum KitSource {
    /// crates.io, at this version.
    CratesIo(String),
    /// Path dependencies on this checkout (absolute).
    Path(std::path::PathBuf),
}

impl KitSource {
    /// The dependency value for the kit crate in `folder` of a checkout.
    fn dep(&self, folder: &str) -> String {
        match self {
            KitSource::CratesIo(v) => format!("\"{v}\""),
            KitSource::Path(kit) => {
                let p = kit.join(folder).display().to_string();
                format!("{{ path = {} }}", serde_json::Value::from(p))
            }
        }
    }

    /// [`dep`](KitSource::dep) without the crate's default features.
    fn dep_lean(&self, folder: &str) -> String {
        match self {
            KitSource::CratesIo(v) => format!("{{ version = \"{v}\", default-features = false }}"),
            KitSource::Path(kit) => {
                let p = kit.join(folder).display().to_string();
                format!(
                    "{{ path = {}, default-features = false }}",
                    serde_json::Value::from(p)
                )
            }
        }
    }
}

/// `Cargo.toml`; `standalone` adds an empty `[workspace]` (the package is
/// inside another workspace that does not list it).
pub fn cargo_toml(o: &NewOptions, kit: &KitSource, standalone: bool) -> String {
    let mut s = format!(
        r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2021"
description = "The {name} kaged plugin."
license = "MIT OR Apache-2.0"
publish = false

[[bin]]
name = "{name}"
path = "src/main.rs"

[dependencies]
kaged-plugin-sdk = {sdk}
serde = {{ version = "1", features = ["derive"] }}
serde_json = "1"
"#,
        name = o.name,
        sdk = kit.dep("kaged-plugin-sdk"),
    );
    if o.tool {
        s.push_str("schemars = \"1\"\n");
    }
    s.push_str(&format!(
        "\n[dev-dependencies]\n# assert_conforms: the conformance suite, from the plugin's own tests\n# (no command line, fuzzer or JUnit writer: fewer crates to build).\nkaged-conformance = {}\n",
        kit.dep_lean("conformance")
    ));
    s.push_str(
        "\n# What `cargo kaged pack` ships: no symbols, so the installed copy stays small.\n[profile.release]\nstrip = true\n",
    );
    if standalone {
        s.push_str(
            "\n# Its own workspace (it was created inside another one that does not list\n# it); remove this table to make it a member of the enclosing workspace.\n[workspace]\n",
        );
    }
    s
}

/// `kaged-plugin.base.yaml`: the manifest fields the code cannot know.
pub fn base_yaml(o: &NewOptions) -> String {
    format!(
        r#"# What kaged-plugin.yaml needs beyond the code, merged by
# `{name} --print-manifest` (see src/main.rs). `cargo kaged pack` points
# `command` at the packed binary (./bin/{name}); this one is for running the
# package directory itself after `cargo build`.
description: The {name} kaged plugin.
license: MIT OR Apache-2.0
command:
  - ./target/debug/{name}
capabilities:
  - net: []
shutdown_timeout_sec: 5
"#,
        name = o.name
    )
}

/// `src/main.rs`.
pub fn main_rs(o: &NewOptions) -> String {
    let ns = o.name.replace('-', "_");
    let mut uses = String::new();
    if o.tool || o.storage {
        uses.push_str("use kaged_plugin_sdk::{kaged_plugin, Call, KagedPlugin, PluginError};\n");
    } else {
        uses.push_str("use kaged_plugin_sdk::{kaged_plugin, KagedPlugin, PluginError};\n");
    }
    if o.hooks {
        uses.push_str(
            "use kaged_plugin_sdk::protocol::{SessionIdleParams, SessionStartParams, SessionStartResult};\n",
        );
    }
    if o.storage {
        uses.push_str("use kaged_plugin_sdk::sql_params;\n");
    }
    if o.tool {
        uses.push_str("use schemars::JsonSchema;\n");
    }
    uses.push_str("use serde::Deserialize;\n");

    let mut types = format!(
        "/// `{ns}.hello` params.\n#[derive(Debug, Deserialize)]\nstruct Hello {{\n    /// Who to greet.\n    name: String,\n}}\n"
    );
    if o.tool {
        types.push_str(
            "\n/// Arguments of the `count_words` tool.\n#[derive(Debug, Deserialize, JsonSchema)]\nstruct CountWords {\n    /// The text whose words to count.\n    text: String,\n}\n",
        );
    }
    if o.storage {
        types.push_str(&format!(
            "\n/// `{ns}.remember` params.\n#[derive(Debug, Deserialize)]\nstruct Remember {{\n    /// The note to keep.\n    note: String,\n}}\n\n/// A row of the `notes` table.\n#[derive(Debug, Deserialize)]\nstruct Note {{\n    note: String,\n}}\n"
        ));
    }

    let mut attr = format!(
        "name = \"{}\", manifest_base = \"kaged-plugin.base.yaml\"",
        o.name
    );
    if o.storage {
        attr.push_str(
            ", capabilities(\"kaged:storage:read\", \"kaged:storage:write\"), migrations = SCHEMA",
        );
    }

    let mut handlers = format!(
        r#"    /// Greet someone.
    #[method("{ns}.hello")]
    async fn hello(&self, p: Hello) -> Result<String, PluginError> {{
        Ok(format!("Hello, {{}}!", p.name))
    }}
"#
    );
    if o.tool {
        handlers.push_str(
            r#"
    /// Count the words of a text.
    #[tool]
    async fn count_words(&self, args: CountWords, _call: Call) -> Result<usize, PluginError> {
        Ok(args.text.split_whitespace().count())
    }
"#,
        );
    }
    if o.hooks {
        handlers.push_str(&format!(
            r#"
    /// A session starts: add a line to the agent's context.
    #[hook]
    async fn on_session_start(
        &self,
        p: SessionStartParams,
    ) -> Result<Option<SessionStartResult>, PluginError> {{
        let agent = p.context.agent_path.unwrap_or_default();
        Ok(Some(SessionStartResult {{
            inject: Some(format!("{name} is here for {{agent}}.")),
        }}))
    }}

    /// A session went idle: a good time to save what it did.
    #[hook]
    async fn on_session_idle(&self, _p: SessionIdleParams) -> Result<(), PluginError> {{
        Ok(())
    }}
"#,
            name = o.name
        ));
    }
    if o.storage {
        handlers.push_str(&format!(
            r#"
    /// Keep a note (brokered storage: the daemon runs the SQL on this
    /// plugin's own tables).
    #[method("{ns}.remember")]
    async fn remember(&self, p: Remember, call: Call) -> Result<u64, PluginError> {{
        let done = call
            .host
            .storage()
            .exec("INSERT INTO notes (note) VALUES (?)", sql_params![p.note])
            .await?;
        Ok(done.rows_affected)
    }}

    /// Every note, oldest first.
    #[method("{ns}.notes")]
    async fn notes(&self, call: Call) -> Result<Vec<String>, PluginError> {{
        let rows = call
            .host
            .storage()
            .query_as::<Note>("SELECT note FROM notes ORDER BY id", sql_params![])
            .await?;
        Ok(rows.into_iter().map(|n| n.note).collect())
    }}
"#
        ));
    }
    let table = if o.storage {
        "\n/// The schema: the SDK runs these steps once each, in order, at\n/// `initialized` (add steps at the end; never edit a shipped one).\nconst SCHEMA: &[&str] =\n    &[\"CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, note TEXT NOT NULL)\"];\n"
    } else {
        ""
    };
    format!(
        r#"//! The `{name}` kaged plugin.
//!
//! Its `kaged-plugin.yaml` is generated from this code and
//! `kaged-plugin.base.yaml` (`{name} --print-manifest`);
//! `tests/manifest_drift.rs` keeps it current
//! (`KAGED_UPDATE_MANIFEST=1 cargo test` rewrites it).

{uses}
{types}{table}
/// The plugin; add its state as fields.
#[derive(Debug, Default)]
struct Plugin;

#[kaged_plugin({attr})]
impl Plugin {{
{handlers}}}

fn main() {{
    Plugin.run()
}}
"#,
        name = o.name
    )
}

/// `tests/manifest_drift.rs`.
pub fn drift_test(o: &NewOptions) -> String {
    format!(
        r#"//! The checked-in `kaged-plugin.yaml` is the one the code implies
//! (`{name} --print-manifest`); `KAGED_UPDATE_MANIFEST=1 cargo test`
//! rewrites it.

#[test]
fn kaged_plugin_yaml_is_current() {{
    kaged_plugin_sdk::testing::assert_binary_manifest_current(
        env!("CARGO_BIN_EXE_{name}"),
        concat!(env!("CARGO_MANIFEST_DIR"), "/kaged-plugin.yaml"),
    );
}}
"#,
        name = o.name
    )
}

/// `tests/conformance.rs`.
pub fn conformance_test(o: &NewOptions) -> String {
    format!(
        r#"//! The plugin, packed and installed the way the daemon installs it,
//! passes the kaged conformance suite in its cage (needs bubblewrap:
//! `apt-get install bubblewrap`).

#[test]
fn passes_the_conformance_suite() {{
    let report = kaged_conformance::testing::assert_conforms(
        env!("CARGO_MANIFEST_DIR").as_ref(),
        env!("CARGO_BIN_EXE_{name}"),
    );
    assert_eq!(report.plugin.name, "{name}");
}}
"#,
        name = o.name
    )
}

/// `.gitignore`.
pub const GITIGNORE: &str = "/target\n";

/// `README.md`.
pub fn readme(o: &NewOptions) -> String {
    format!(
        r#"# {name}

A kaged plugin, written with `kaged-plugin-sdk`.

```sh
cargo test                                   # unit, manifest drift and conformance tests
cargo kaged test                             # pack, install a copy, certify the copy
cargo kaged pack                             # target/kaged/{name}: ready for `plugin install`
kaged-host-sim plugin install target/kaged/{name}
```

The code is `src/main.rs`; what the code cannot know (description, command,
capabilities, timeouts) is `kaged-plugin.base.yaml`; `kaged-plugin.yaml` is
generated from both (`KAGED_UPDATE_MANIFEST=1 cargo test` after a change).
"#,
        name = o.name
    )
}
