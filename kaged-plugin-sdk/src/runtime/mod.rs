//! The plugin runtime: builder, serving loop, host handle and stdio.

mod builder;
mod handler;
mod host;
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
    pub fn run(self) -> ! {
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
