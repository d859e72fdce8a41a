//! The profile side of a plugin: the schemas of its methods' params and
//! results on the builder ([`PluginBuilder::method_schemas`]; `#[method]`
//! declares them from the handler's types), and the conformance profile a
//! built plugin implies ([`Plugin::profile`], what `--print-profile`
//! prints).

use super::builder::{Plugin, PluginBuilder};
use crate::describe::{profile_of, profile_yaml, MethodSchemas};
use crate::protocol::profile::Profile;

impl PluginBuilder {
    /// What the conformance profile says of the custom method `name`
    /// (declared before, with [`PluginBuilder::method`]): the schemas of
    /// its params and result, and the examples in the params schema. See
    /// [`MethodSchemas`]. A later call for the same method replaces it.
    pub fn method_schemas(mut self, name: &str, schemas: MethodSchemas) -> Self {
        if !self.def.methods.iter().any(|m| m == name)
            || self.def.tools.iter().any(|t| {
                crate::protocol::names::prefixed_tool_name(&self.def.name, &t.name) == name
            })
        {
            self.def.errors.push(format!(
                "method_schemas(\"{name}\"): declare the custom method first with .method(\"{name}\", ..)"
            ));
            return self;
        }
        self.def.method_schemas.retain(|(m, _)| m != name);
        self.def.method_schemas.push((name.to_string(), schemas));
        self
    }
}

impl Plugin {
    /// The conformance profile (`kaged-conformance.yaml`) this plugin's
    /// code implies: an entry for every custom method whose types say
    /// something.
    pub fn profile(&self) -> Profile {
        profile_of(&self.def.method_schemas)
    }

    /// [`Plugin::profile`] as YAML, with a header comment; what
    /// `--print-profile` prints.
    pub fn profile_yaml(&self) -> String {
        profile_yaml(&self.def.name, &self.profile())
    }

    /// Print [`Plugin::profile_yaml`] on stdout; the process exit code
    /// (0, or 1 when stdout cannot be written).
    pub(crate) fn print_profile(&self) -> i32 {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        match out
            .write_all(self.profile_yaml().as_bytes())
            .and_then(|()| out.flush())
        {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("error: cannot write the profile: {e}");
                1
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::describe::{MethodSchemas, ParamsSchema};
    use crate::{Call, PluginError};

    #[test]
    fn schemas_need_a_declared_custom_method() {
        let err = crate::plugin!("x")
            .method_schemas("x.nope", MethodSchemas::without_params::<u8>())
            .build()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("declare the custom method first"), "{err}");
        let plugin = crate::plugin!("x")
            .method("x.count", |_: serde_json::Value, _: Call| async {
                Ok::<_, PluginError>(1)
            })
            .method_schemas("x.count", MethodSchemas::new(ParamsSchema::Unknown, None))
            .method_schemas("x.count", MethodSchemas::without_params::<u8>())
            .build()
            .expect("valid");
        let profile = plugin.profile();
        assert_eq!(
            profile.methods.len(),
            1,
            "the later call replaced the first"
        );
        assert_eq!(profile.methods["x.count"].examples[0].params, json!({}));
        assert!(plugin.profile_yaml().contains("x.count:\n"));
    }
}
