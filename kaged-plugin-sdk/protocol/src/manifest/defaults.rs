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
        for schema in [&self.config_schema, &self.system_config_schema] {
            let props = schema
                .as_ref()
                .and_then(|s| s.get("properties"))
                .and_then(Value::as_object);
            for (name, prop) in props.into_iter().flatten() {
                if let Some(default) = prop.get("default") {
                    out.entry(name.clone()).or_insert_with(|| default.clone());
                }
            }
        }
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
