//! The plugin runtime: builder, serving loop, host handle and stdio.

mod blocking;
mod builder;
mod handler;
pub mod hook_types;
mod host;
pub mod macro_support;
mod metadata;
mod profile;
mod schema_probe;
mod serve;
pub mod stdio;
mod writer;

pub use builder::{Plugin, PluginBuilder};
pub use handler::Call;
pub use host::{Host, HostCallError};
pub use serve::ServeExit;

use crate::protocol::{HookName, PluginRole};
use crate::tool::ToolSpec;

impl Plugin {
    /// Serve on stdio until `shutdown` or stdin EOF, then exit the process
    /// with code 0 (1 when stdio cannot be set up). Sets up JSON logging on
    /// stderr first (level from `KAGED_LOG_LEVEL`).
    ///
    /// Started with `--print-manifest`, it prints the manifest its code
    /// implies instead ([`Plugin::manifest_yaml`]) and exits, before
    /// touching stdio; with `--print-profile`, the conformance profile
    /// ([`Plugin::profile_yaml`]).
    pub fn run(self) -> ! {
        let flag = |f: &str| std::env::args_os().skip(1).any(|a| a == f);
        if flag(crate::describe::PRINT_MANIFEST_FLAG) {
            std::process::exit(self.print_manifest());
        }
        if flag(crate::describe::PRINT_PROFILE_FLAG) {
            std::process::exit(self.print_profile());
        }
        crate::logging::init();
        let runtime = match self.build_runtime() {
            Ok(rt) => rt,
            Err(e) => {
                eprintln!("error: cannot start the tokio runtime: {e}");
                std::process::exit(1)
            }
        };
        // On one thread (the default): the blocking stdio loop, which makes
        // only the protocol's own syscalls (see `blocking`).
        if self.def.worker_threads == 0 && stdio::stdio_are_pipes() {
            let code = match stdio::take_stdio_fds() {
                Ok((input, output)) => {
                    match blocking::serve_blocking(&self, &runtime, input, output) {
                        Ok(exit) => {
                            tracing::debug!(?exit, "plugin stopping");
                            0
                        }
                        Err(e) => {
                            tracing::error!("plugin runtime failed: {e}");
                            1
                        }
                    }
                }
                Err(e) => {
                    tracing::error!("cannot take over stdio: {e}");
                    1
                }
            };
            let _ = std::io::Write::flush(&mut std::io::stdout());
            std::process::exit(code)
        }
        // With worker threads, the serving loop runs as a task on a worker,
        // not on this thread in `block_on`: a handler it spawns then starts
        // on the same worker (tokio's LIFO slot) instead of waking another
        // thread for every call.
        let serving = runtime.spawn(async move {
            let (input, output) = match stdio::take_stdio() {
                Ok(io) => io,
                Err(e) => {
                    tracing::error!("cannot take over stdio: {e}");
                    return 1;
                }
            };
            match self.serve(input, output).await {
                Ok(exit) => {
                    tracing::debug!(?exit, "plugin stopping");
                    0
                }
                Err(e) => {
                    tracing::error!("plugin runtime failed: {e}");
                    1
                }
            }
        });
        let code = runtime.block_on(serving).unwrap_or_else(|e| {
            tracing::error!("the serving loop panicked: {e}");
            1
        });
        // Stray `print!` output sits in std's stdout buffer (now stderr):
        // flush it, since exit() runs no destructors.
        let _ = std::io::Write::flush(&mut std::io::stdout());
        std::process::exit(code)
    }
}

impl Plugin {
    /// The runtime [`Plugin::run`] serves on. One thread by default: the
    /// reader, the handlers and the writer take turns, and a call's
    /// notification and answer leave in one write; n worker threads with
    /// [`crate::PluginBuilder::worker_threads`].
    pub(crate) fn build_runtime(&self) -> std::io::Result<tokio::runtime::Runtime> {
        let mut builder = match self.def.worker_threads {
            0 => tokio::runtime::Builder::new_current_thread(),
            n => {
                let mut b = tokio::runtime::Builder::new_multi_thread();
                b.worker_threads(n);
                b
            }
        };
        builder.enable_all().build()
    }
}

/// What a built plugin declares.
impl Plugin {
    /// The plugin's name.
    pub fn name(&self) -> &str {
        &self.def.name
    }

    /// The version answered in `initialize`.
    pub fn version(&self) -> &str {
        self.def.version.as_deref().unwrap_or_default()
    }

    /// Custom methods then prefixed tool names, as sent in `initialize`.
    pub fn methods(&self) -> &[String] {
        &self.def.methods
    }

    /// Declared notification names.
    pub fn notifications(&self) -> &[String] {
        &self.def.notifications
    }

    /// Declared tools with their schemas.
    pub fn tools(&self) -> &[ToolSpec] {
        &self.def.tools
    }

    /// Subscribed hooks.
    pub fn hooks(&self) -> &[HookName] {
        &self.def.hooks
    }

    /// Declared roles (`observer` is implied by hooks when none is set).
    pub fn roles(&self) -> Vec<PluginRole> {
        if self.def.roles.is_empty() && !self.def.hooks.is_empty() {
            vec![PluginRole::Observer]
        } else {
            self.def.roles.clone()
        }
    }

    /// Capabilities reported in `initialize`.
    pub fn capabilities_used(&self) -> &[String] {
        &self.def.capabilities_used
    }

    /// The JSON Schema of the config type given to `on_config`, if any.
    pub fn config_schema(&self) -> Option<&serde_json::Value> {
        self.def.config_schema.as_ref()
    }

    /// Check every tool schema (valid JSON Schema, object root). Meant for
    /// the plugin's own tests; the runtime never panics on a bad schema.
    pub fn check_tools(&self) -> Result<(), Vec<crate::tool::ToolSchemaError>> {
        let errors: Vec<_> = self
            .def
            .tools
            .iter()
            .filter_map(|t| crate::tool::check_tool(&t.name, &t.parameters_schema).err())
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

/// A type that declares a plugin: implemented by `#[kaged_plugin]` (or by
/// hand, returning a builder) so that `MyPlugin::new().run()` works.
///
/// ```
/// use kaged_plugin_sdk::{kaged_plugin, Call, KagedPlugin, PluginError};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Shout {
///     text: String,
/// }
///
/// struct Echo;
///
/// #[kaged_plugin(name = "echo", notifications("echo.said"))]
/// impl Echo {
///     #[method("echo.say")]
///     async fn say(&self, p: serde_json::Value, call: Call) -> Result<serde_json::Value, PluginError> {
///         call.host.notify("echo.said", &p)?;
///         Ok(p)
///     }
///
///     /// Upper-case the text.
///     #[tool]
///     async fn shout(&self, a: Shout) -> Result<String, PluginError> {
///         Ok(a.text.to_uppercase())
///     }
/// }
///
/// let plugin = Echo.build().unwrap();
/// assert_eq!(plugin.methods(), ["echo.say", "echo.shout"]);
/// assert_eq!(plugin.tools()[0].description, "Upper-case the text.");
/// // Echo.run() would serve on stdio.
/// ```
pub trait KagedPlugin: Sized {
    /// The builder with every declaration of this plugin.
    fn plugin_builder(self) -> PluginBuilder;

    /// Build the plugin; see [`PluginBuilder::build`].
    fn build(self) -> Result<Plugin, crate::SdkError> {
        self.plugin_builder().build()
    }

    /// Build and serve on stdio (or answer `--print-manifest` or
    /// `--print-profile`); see [`Plugin::run`].
    fn run(self) -> ! {
        self.plugin_builder().run()
    }
}

#[cfg(test)]
mod runtime_tests;
