//! An SDK plugin served in this process, over an in-memory pipe: the one
//! place the host side meets the plugin SDK (`kaged-host-core` knows
//! nothing of it).

use std::future::Future;
use std::path::Path;

use kaged_host_core::{HostSim, LaunchError, PluginHandle};

/// [`HostSim::connect_plugin`](ConnectPlugin::connect_plugin): test an SDK
/// plugin end to end without a process.
pub trait ConnectPlugin {
    /// Serve an SDK plugin in this process (a task on the current Tokio
    /// runtime) over an in-memory pipe and [`connect`](HostSim::connect) to
    /// it: the plugin is tested end to end without a process, its manifest
    /// taken from its code.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use kaged_host_sim::ConnectPlugin;
    /// use kaged_host_core::HostSim;
    /// use kaged_plugin_sdk::{plugin, Call, PluginError};
    /// let p = plugin!("demo")
    ///     .method("demo.ping", |_: serde_json::Value, _: Call| async { Ok::<_, PluginError>("pong") })
    ///     .build()
    ///     .unwrap();
    /// let plugin = HostSim::default().connect_plugin(p).await.unwrap();
    /// assert_eq!(plugin.call("demo.ping", None, None).await.unwrap(), "pong");
    /// plugin.shutdown().await;
    /// # });
    /// ```
    fn connect_plugin(
        &self,
        plugin: kaged_plugin_sdk::Plugin,
    ) -> impl Future<Output = Result<PluginHandle, LaunchError>> + Send;
}

impl ConnectPlugin for HostSim {
    async fn connect_plugin(
        &self,
        plugin: kaged_plugin_sdk::Plugin,
    ) -> Result<PluginHandle, LaunchError> {
        let manifest = plugin.manifest();
        let (host_side, plugin_side) = tokio::io::duplex(1 << 20);
        let (p_read, p_write) = tokio::io::split(plugin_side);
        tokio::spawn(async move { plugin.serve(p_read, p_write).await });
        let (h_read, h_write) = tokio::io::split(host_side);
        self.connect(manifest, Path::new("."), h_read, h_write)
            .await
    }
}
