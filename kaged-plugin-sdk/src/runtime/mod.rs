//! The plugin runtime: builder, serving loop, host handle and stdio.

mod builder;
mod handler;
mod host;
pub mod macro_support;
mod serve;
pub mod stdio;

pub use builder::{Plugin, PluginBuilder};
pub use handler::Call;
pub use host::{Host, HostCallError};
pub use serve::ServeExit;

impl Plugin {
    /// Serve on stdio until `shutdown` or stdin EOF, then exit the process
    /// with code 0 (1 when stdio cannot be set up). Sets up JSON logging on
    /// stderr first (level from `KAGED_LOG_LEVEL`).
    ///
    /// Started with `--print-manifest`, it prints the manifest its code
    /// implies instead ([`Plugin::manifest_yaml`]) and exits, before
    /// touching stdio.
    pub fn run(self) -> ! {
        if std::env::args_os().skip(1).any(|a| a == crate::describe::PRINT_MANIFEST_FLAG) {
            std::process::exit(self.print_manifest());
        }
        crate::logging::init();
        let runtime = match tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
        {
            Ok(rt) => rt,
            Err(e) => {
                eprintln!("error: cannot start the tokio runtime: {e}");
                std::process::exit(1)
            }
        };
        let code = runtime.block_on(async move {
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
        // Stray `print!` output sits in std's stdout buffer (now stderr):
        // flush it, since exit() runs no destructors.
        let _ = std::io::Write::flush(&mut std::io::stdout());
        std::process::exit(code)
    }
}

/// A type that declares a plugin: implemented by `#[kaged_plugin]` (or by
/// hand) so that `MyPlugin::new().run()` works.
///
/// ```
/// use kaged_plugin_sdk::{plugin, Call, KagedPlugin, PluginBuilder, PluginError};
/// struct Echo;
/// impl KagedPlugin for Echo {
///     fn plugin_builder(self) -> PluginBuilder {
///         plugin!("echo").method("echo.say", |p: serde_json::Value, _c: Call| async move {
///             Ok::<_, PluginError>(p)
///         })
///     }
/// }
/// assert_eq!(Echo.build().unwrap().methods(), ["echo.say"]);
/// ```
pub trait KagedPlugin: Sized {
    /// The builder with every declaration of this plugin.
    fn plugin_builder(self) -> PluginBuilder;

    /// Build the plugin; see [`PluginBuilder::build`].
    fn build(self) -> Result<Plugin, crate::SdkError> {
        self.plugin_builder().build()
    }

    /// Build and serve on stdio (or answer `--print-manifest`); see
    /// [`Plugin::run`].
    fn run(self) -> ! {
        self.plugin_builder().run()
    }
}
