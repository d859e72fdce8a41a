//! The builder API: declare methods, tools, hooks, notifications, config and
//! shutdown handlers, then `run()`. The macros crate expands to these calls.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::handler::{
    decode, erase, erase_tool, BoxFut, Call, ConfigHandler, Route, ShutdownHandler,
};
use super::macro_support::{HandlerParams, SchemaParams};
use super::Host;
use crate::describe::ManifestBase;
use crate::error::{PluginError, SdkError};
use crate::protocol::{
    names, CompactParams, ErrorCode, HookName, PluginRole, ProjectActivatedParams,
    ProjectDeactivatedParams, SessionIdleParams, SessionStartParams, SessionStartResult,
};
use crate::tool::{schema_for, ToolSpec};

/// Work run once at `initialized`, before any handler answers: bringing
/// the plugin's storage schema up to date. `Ok(version)` is the schema's
/// version after it; an error fails every later call with its answer.
pub(crate) type SchemaTask = Arc<
    dyn Fn(Host) -> futures_util::future::BoxFuture<'static, Result<usize, PluginError>>
        + Send
        + Sync,
>;

/// Everything a plugin declares; built by [`PluginBuilder`].
#[derive(Default)]
pub(crate) struct PluginDef {
    pub name: String,
    pub version: Option<String>,
    pub routes: HashMap<String, Route>,
    /// Custom methods then prefixed tools, in declaration order.
    pub methods: Vec<String>,
    pub notifications: Vec<String>,
    pub capabilities_used: Vec<String>,
    pub tools: Vec<ToolSpec>,
    pub hooks: Vec<HookName>,
    pub roles: Vec<PluginRole>,
    pub config: Option<ConfigHandler>,
    pub config_schema: Option<Value>,
    pub on_shutdown: Option<ShutdownHandler>,
    pub errors: Vec<String>,
    /// What the manifest needs and the code cannot say (description...).
    pub base: ManifestBase,
    /// 0: [`Plugin::run`] serves on one thread; n: on n worker threads.
    pub worker_threads: usize,
    /// Run at `initialized`, before any handler: the schema migrations
    /// (`PluginBuilder::migrations`, in `migrations.rs`).
    pub migrations: Option<SchemaTask>,
    /// What the conformance profile says of custom methods, by name.
    pub method_schemas: Vec<(String, crate::describe::MethodSchemas)>,
}

/// A plugin ready to serve. Build one with [`Plugin::builder`] (or the
/// [`crate::plugin!`] macro, which also sets the version from Cargo).
///
/// ```
/// use kaged_plugin_sdk::{Plugin, Call, PluginError};
/// #[derive(serde::Deserialize)]
/// struct Say { text: String }
/// let plugin = Plugin::builder("echo")
///     .version("0.1.0")
///     .method("echo.say", |p: Say, _call: Call| async move {
///         Ok::<_, PluginError>(serde_json::json!({ "said": p.text }))
///     })
///     .build()
///     .unwrap();
/// assert_eq!(plugin.methods(), ["echo.say"]);
/// ```
pub struct Plugin {
    pub(crate) def: Arc<PluginDef>,
}

/// Declares a plugin; see [`Plugin`].
pub struct PluginBuilder {
    pub(crate) def: PluginDef,
}

impl Plugin {
    /// Start declaring a plugin named `name` (the manifest's `name`).
    pub fn builder(name: impl Into<String>) -> PluginBuilder {
        let name = name.into();
        let mut errors = Vec::new();
        if !names::is_plugin_name(&name) {
            errors.push(format!(
                "plugin name `{name}` must match ^[a-z][a-z0-9-]*$ and be at most 64 characters"
            ));
        }
        PluginBuilder {
            def: PluginDef {
                name,
                errors,
                ..PluginDef::default()
            },
        }
    }
}

impl PluginBuilder {
    /// The threads [`Plugin::run`] serves on. By default (0) the reader,
    /// every handler and the writer share one thread: the fastest setup for
    /// handlers that await (I/O, storage, timers), and the reader still
    /// never waits on a handler. A handler that computes or blocks for long
    /// should use `tokio::task::spawn_blocking`; or set `n` worker threads
    /// here so that other calls and `ping` are answered meanwhile.
    ///
    /// ```
    /// let plugin = kaged_plugin_sdk::plugin!("busy").worker_threads(2).build().unwrap();
    /// # let _ = plugin;
    /// ```
    pub fn worker_threads(mut self, n: usize) -> Self {
        self.def.worker_threads = n;
        self
    }

    /// Set the version answered in `initialize` (must equal the manifest's).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.def.version = Some(version.into());
        self
    }

    fn add_route(&mut self, name: String, route: Route, declare: bool) {
        if self.def.routes.contains_key(&name) {
            self.def.errors.push(format!("`{name}` is declared twice"));
            return;
        }
        self.def.routes.insert(name.clone(), route);
        if declare {
            self.def.methods.push(name);
        }
    }

    /// A custom method. `params` (minus `_context`) deserialize into `P`;
    /// failures answer `-32602` naming the field.
    pub fn method<P, R, F, Fut>(mut self, name: &str, handler: F) -> Self
    where
        P: HandlerParams,
        R: Serialize + Send + 'static,
        F: Fn(P, Call) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, PluginError>> + Send + 'static,
    {
        if let Some(problem) = names::method_name_problem(name) {
            self.def.errors.push(problem);
            return self;
        }
        self.add_route(
            name.into(),
            Route::Method(erase(handler, ErrorCode::InvalidParams)),
            true,
        );
        self
    }

    /// A tool, called as `<plugin>.<name>` (ADDENDUM §1). Its
    /// `parameters_schema` comes from `A`'s `JsonSchema`; arguments are
    /// validated by deserializing `A` (a bad one answers `-32602` naming
    /// the field), and with the `schema-validation` feature against the
    /// whole schema first (see [`crate::tool`]).
    pub fn tool<A, R, F, Fut>(mut self, name: &str, description: &str, handler: F) -> Self
    where
        A: SchemaParams,
        R: Serialize + Send + 'static,
        F: Fn(A, Call) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, PluginError>> + Send + 'static,
    {
        if !names::is_tool_name(name) {
            self.def.errors.push(format!(
                "tool name `{name}` must be a single lowercase segment matching ^[a-z][a-z0-9_]*$"
            ));
            return self;
        }
        let schema = schema_for::<A>();
        let handler = erase_tool(handler, &schema);
        self.def.tools.push(ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters_schema: schema,
        });
        let full = names::prefixed_tool_name(&self.def.name, name);
        self.add_route(full, Route::Tool(handler), true);
        self
    }

    /// A notification the plugin may emit (listed in `initialize`).
    pub fn notification(mut self, name: &str) -> Self {
        match names::method_name_problem(name) {
            Some(p) => self
                .def
                .errors
                .push(p.replace("method name", "notification name")),
            None => self.def.notifications.push(name.into()),
        }
        self
    }

    /// A capability reported in `capabilities_used` (must be in the
    /// manifest): a string or a typed
    /// [`Capability`](crate::protocol::capability::Capability).
    pub fn capability_used(mut self, capability: impl Into<String>) -> Self {
        self.def.capabilities_used.push(capability.into());
        self
    }

    /// Claim a role (`compactor` requires a `pre_compact` handler).
    pub fn role(mut self, role: PluginRole) -> Self {
        if !self.def.roles.contains(&role) {
            self.def.roles.push(role);
        }
        self
    }

    /// A hook handler with any params type (the full params, `_context`
    /// included, deserialize into `P`). Prefer the typed methods
    /// [`Self::on_session_start`] and friends.
    pub fn hook<P, R, F, Fut>(mut self, hook: HookName, handler: F) -> Self
    where
        P: HandlerParams,
        R: Serialize + Send + 'static,
        F: Fn(P, Call) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, PluginError>> + Send + 'static,
    {
        let route = Route::Hook(erase(handler, ErrorCode::InvalidParams));
        self.add_route(hook.method().into(), route, false);
        if !self.def.hooks.contains(&hook) {
            self.def.hooks.push(hook);
        }
        self
    }

    /// `on_session_start`: return text to prepend to the system prompt.
    pub fn on_session_start<F, Fut>(self, handler: F) -> Self
    where
        F: Fn(SessionStartParams, Call) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Option<SessionStartResult>, PluginError>> + Send + 'static,
    {
        self.hook(HookName::OnSessionStart, handler)
    }

    /// `on_session_idle`: side effects only (save the transcript...).
    pub fn on_session_idle<F, Fut>(self, handler: F) -> Self
    where
        F: Fn(SessionIdleParams, Call) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), PluginError>> + Send + 'static,
    {
        self.hook(HookName::OnSessionIdle, move |p, c| {
            let fut = handler(p, c);
            async move { fut.await.map(|()| Value::Null) }
        })
    }

    /// `pre_compact`: answer an observer result or (as the designated
    /// compactor) a `CompactorResult`; see [`crate::protocol::CompactParams::role`].
    pub fn pre_compact<R, F, Fut>(self, handler: F) -> Self
    where
        R: Serialize + Send + 'static,
        F: Fn(CompactParams, Call) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, PluginError>> + Send + 'static,
    {
        self.hook(HookName::PreCompact, handler)
    }

    /// `post_compact`: answer an observer result (or `None`).
    pub fn post_compact<R, F, Fut>(self, handler: F) -> Self
    where
        R: Serialize + Send + 'static,
        F: Fn(CompactParams, Call) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, PluginError>> + Send + 'static,
    {
        self.hook(HookName::PostCompact, handler)
    }

    /// `config.update`: the params deserialize into `C` (failures answer
    /// `-32004` naming the field); its `JsonSchema` is the config schema.
    pub fn on_config<C, F, Fut>(mut self, handler: F) -> Self
    where
        C: SchemaParams,
        F: Fn(C, Host) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), PluginError>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        self.def.config_schema = Some(schema_for::<C>());
        self.def.config = Some(Arc::new(move |params: Value, host: Host| -> BoxFut<_> {
            let handler = Arc::clone(&handler);
            Box::pin(async move {
                let cfg: C = decode(params, ErrorCode::ConfigInvalid)?;
                handler(cfg, host).await.map_err(PluginError::into_rpc)
            })
        }));
        self
    }

    /// `projects.activated`.
    pub fn on_project_activated<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(ProjectActivatedParams, Call) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), PluginError>> + Send + 'static,
    {
        let route = Route::Method(erase(handler, ErrorCode::InvalidParams));
        self.add_route(
            crate::protocol::methods::PROJECTS_ACTIVATED.into(),
            route,
            false,
        );
        self
    }

    /// `projects.deactivated`.
    pub fn on_project_deactivated<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(ProjectDeactivatedParams, Call) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), PluginError>> + Send + 'static,
    {
        let route = Route::Method(erase(handler, ErrorCode::InvalidParams));
        self.add_route(
            crate::protocol::methods::PROJECTS_DEACTIVATED.into(),
            route,
            false,
        );
        self
    }

    /// Run `task` at `initialized`, before any handler (the builder's
    /// `migrations`, which lives with the migrations).
    pub(crate) fn schema_task(mut self, task: SchemaTask) -> Self {
        self.def.migrations = Some(task);
        self
    }

    /// Runs on `shutdown` (and on stdin EOF) before the process exits.
    pub fn on_shutdown<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.def.on_shutdown = Some(Arc::new(move || -> BoxFut<()> { Box::pin(handler()) }));
        self
    }

    /// Finish, reporting every definition problem at once.
    pub fn build(mut self) -> Result<Plugin, SdkError> {
        if self.def.version.is_none() {
            self.def.errors.push(
                "no version: call .version(env!(\"CARGO_PKG_VERSION\")) or start with kaged_plugin_sdk::plugin!(name)".into(),
            );
        }
        if self.def.roles.contains(&PluginRole::Compactor)
            && !self.def.hooks.contains(&HookName::PreCompact)
        {
            self.def
                .errors
                .push("the compactor role requires a pre_compact handler".into());
        }
        if self.def.migrations.is_some()
            && !self
                .def
                .capabilities_used
                .iter()
                .any(|c| c == "kaged:storage:write")
        {
            self.def.errors.push(
                "migrations run on brokered storage and need the kaged:storage:write capability: add .capability_used(\"kaged:storage:write\") (capabilities(\"kaged:storage:write\") in #[kaged_plugin])".into(),
            );
        }
        if self.def.errors.is_empty() {
            Ok(Plugin {
                def: Arc::new(self.def),
            })
        } else {
            Err(SdkError::Definition(self.def.errors.join("; ")))
        }
    }

    /// Build and serve on stdio; see [`Plugin::run`]. A definition problem
    /// is printed to stderr and the process exits 1.
    pub fn run(self) -> ! {
        match self.build() {
            Ok(plugin) => plugin.run(),
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(1)
            }
        }
    }
}

/// Start a builder named `$name` with the calling crate's version.
///
/// ```
/// let plugin = kaged_plugin_sdk::plugin!("echo").build().unwrap();
/// assert_eq!(plugin.version(), env!("CARGO_PKG_VERSION"));
/// ```
#[macro_export]
macro_rules! plugin {
    ($name:expr) => {
        $crate::Plugin::builder($name).version(env!("CARGO_PKG_VERSION"))
    };
}
