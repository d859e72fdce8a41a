//! The config a daemon sends when the operator set nothing: the `default`
//! of every top-level property of `config_schema` and
//! `system_config_schema` (plugin-host.md § Merging; ADDENDUM §16: "the
//! merged config holds the defaults of both").

use serde_json::{Map, Value};

use super::Manifest;

impl Manifest {
    /// The defaults of both config schemas, merged: each top-level property
    /// with a `default`, the project side's where both name a field (a
    /// collision is a manifest error anyway). `{}` without schemas.
    ///
    /// ```
    /// use kaged_plugin_protocol::manifest::Manifest;
    /// let m = Manifest::from_yaml_str(concat!(
    ///     "name: x\nversion: 0.1.0\nkaged_api: 1\ndescription: d\ncommand: [./x]\ncapabilities: []\n",
    ///     "config_schema: {type: object, properties: {greeting: {type: string, default: hi}}}\n",
    ///     "system_config_schema: {type: object, properties: {region: {type: string, default: eu}, token: {type: string}}}\n",
    /// )).unwrap();
    /// assert_eq!(serde_json::Value::Object(m.config_defaults()),
    ///            serde_json::json!({"greeting": "hi", "region": "eu"}));
    /// ```
    pub fn config_defaults(&self) -> Map<String, Value> {
        let mut out = Map::new();
        apply_defaults(self.config_schema.as_ref(), &mut out);
        apply_defaults(self.system_config_schema.as_ref(), &mut out);
        out
    }

    /// `given` over [`Manifest::config_defaults`]: what the daemon sends
    /// for an operator config that leaves fields out.
    pub fn config_over_defaults(&self, given: &Map<String, Value>) -> Map<String, Value> {
        let mut out = self.config_defaults();
        out.extend(given.iter().map(|(k, v)| (k.clone(), v.clone())));
        out
    }
}

/// Give every top-level property of `schema` that has a `default` and is
/// absent from `config` its default (the daemon does this before it
/// validates and sends a config: plugin-host.md § Merging).
///
/// ```
/// use kaged_plugin_protocol::manifest::apply_defaults;
/// let schema = serde_json::json!({"properties": {"n": {"default": 3}, "s": {}}});
/// let mut config = serde_json::json!({"s": "x"}).as_object().cloned().unwrap();
/// apply_defaults(Some(&schema), &mut config);
/// assert_eq!(serde_json::Value::Object(config), serde_json::json!({"s": "x", "n": 3}));
/// ```
pub fn apply_defaults(schema: Option<&Value>, config: &mut Map<String, Value>) {
    let props = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object);
    for (name, prop) in props.into_iter().flatten() {
        if let Some(default) = prop.get("default") {
            config
                .entry(name.clone())
                .or_insert_with(|| default.clone());
        }
    }
}
