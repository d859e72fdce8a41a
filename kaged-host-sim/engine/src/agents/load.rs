//! The YAML loader of the project model: located nodes in, model values
//! out, every error naming file, line, column and field path.

use std::path::Path;

use kaged_plugin_protocol::manifest::{parse_yaml, YamlNode};
use serde_json::Value;

use super::error::ProjectError;
use super::local::SystemConfig;
use super::project::{AgentSpec, Isolation, Located, PluginDecl, Project, PRIMARY};
use super::yaml::{join_path, Parser};

impl Project {
    /// Parse a project from YAML text; `file` names it in errors.
    pub fn from_yaml_str(text: &str, file: &str) -> Result<Project, ProjectError> {
        let root = parse_yaml(text).map_err(|e| ProjectError::Syntax {
            file: file.to_string(),
            line: e.pos.map(|p| p.line),
            column: e.pos.map(|p| p.column),
            message: e.message,
        })?;
        let p = Parser { file };
        p.expect_map(&root, "(root)")?;
        let primary = root
            .get(PRIMARY)
            .ok_or_else(|| p.err(&root, "primary", "missing field `primary`"))?;
        let id = Path::new(file)
            .parent()
            .map(|p| p.display().to_string())
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| ".".to_string());
        Ok(Project {
            file: file.to_string(),
            id,
            primary: p.agent(primary, PRIMARY.to_string())?,
            system: SystemConfig::default(),
        })
    }

    /// Load a project file.
    pub fn load(path: &Path) -> Result<Project, ProjectError> {
        let text = std::fs::read_to_string(path).map_err(|source| ProjectError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Project::from_yaml_str(&text, &path.display().to_string())
    }
}

impl Parser<'_> {
    fn string(&self, node: &YamlNode, path: &str) -> Result<Located<String>, ProjectError> {
        match node.as_str() {
            Some(s) if !s.is_empty() => Ok(Located {
                value: s.to_string(),
                pos: node.pos,
            }),
            Some(_) => Err(self.err(node, path, "must not be empty")),
            None => Err(self.err(
                node,
                path,
                format!("expected a string, found {}", node.value.type_name()),
            )),
        }
    }

    fn agent(&self, node: &YamlNode, path: String) -> Result<AgentSpec, ProjectError> {
        let fields = self.expect_map(node, &path)?;
        let field = |name: &str| {
            fields
                .iter()
                .find(|(k, _, _)| k == name)
                .map(|(_, _, v)| *v)
        };
        let mut plugins = Vec::new();
        let plugins_path = format!("{path}.plugins");
        for (key, k, v) in self.optional_map(field("plugins"), &plugins_path)? {
            plugins.push(self.decl(&key, k, v, &join_path(&plugins_path, &key))?);
        }
        let compaction_delegate = self.delegate(field("compaction"), &path)?;
        let mut tools_disabled = Vec::new();
        let tools_path = format!("{path}.tools");
        for (name, _, v) in self.optional_map(field("tools"), &tools_path)? {
            let tool_path = join_path(&tools_path, &name);
            if v.is_null() {
                continue;
            }
            for (f, _, fv) in self.expect_map(v, &tool_path)? {
                if f == "enabled" {
                    match fv.as_bool() {
                        Some(false) => tools_disabled.push(name.clone()),
                        Some(true) => {}
                        None => {
                            return Err(self.err(
                                fv,
                                &format!("{tool_path}.enabled"),
                                format!("expected a boolean, found {}", fv.value.type_name()),
                            ))
                        }
                    }
                }
            }
        }
        let mut subagents = Vec::new();
        let sub_path = format!("{path}.subagents");
        for (name, k, v) in self.optional_map(field("subagents"), &sub_path)? {
            let valid = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if !valid {
                return Err(self.err(
                    k,
                    &join_path(&sub_path, &name),
                    "a subagent name must match ^[A-Za-z][A-Za-z0-9_-]*$ (it becomes an agent path segment)",
                ));
            }
            subagents.push(self.agent(v, format!("{sub_path}.{name}"))?);
        }
        Ok(AgentSpec {
            path,
            pos: node.pos,
            plugins,
            compaction_delegate,
            tools_disabled,
            subagents,
        })
    }

    fn delegate(
        &self,
        compaction: Option<&YamlNode>,
        agent_path: &str,
    ) -> Result<Option<Located<String>>, ProjectError> {
        let path = format!("{agent_path}.compaction");
        let fields = self.optional_map(compaction, &path)?;
        let Some((_, _, delegate)) = fields.iter().find(|(k, _, _)| k == "delegate") else {
            return Ok(None);
        };
        let path = format!("{path}.delegate");
        let fields = self.optional_map(Some(delegate), &path)?;
        match fields.iter().find(|(k, _, _)| k == "plugin") {
            Some((_, _, v)) => Ok(Some(self.string(v, &format!("{path}.plugin"))?)),
            None if delegate.is_null() => Ok(None),
            None => Err(self.err(delegate, &path, "missing field `plugin`")),
        }
    }

    fn decl(
        &self,
        key: &str,
        key_node: &YamlNode,
        node: &YamlNode,
        path: &str,
    ) -> Result<PluginDecl, ProjectError> {
        let mut decl = PluginDecl {
            key: key.to_string(),
            pos: key_node.pos,
            package: None,
            version: None,
            source: None,
            isolation: None,
            hooks: None,
            config: None,
        };
        if node.is_null() {
            return Ok(decl);
        }
        for (field, k, v) in self.expect_map(node, path)? {
            let fpath = format!("{path}.{field}");
            match field.as_str() {
                "package" => decl.package = Some(self.string(v, &fpath)?),
                "version" => {
                    let s = self.string(v, &fpath)?;
                    if let Err(e) = semver::VersionReq::parse(&s.value) {
                        return Err(self.err(
                            v,
                            &fpath,
                            format!(
                                "`{}` is not a semver requirement (`1.4.2`, `^1.4`, `>=1.2, <2`): {e}",
                                s.value
                            ),
                        ));
                    }
                    decl.version = Some(s);
                }
                "source" => decl.source = Some(self.string(v, &fpath)?),
                "isolation" => {
                    let s = self.string(v, &fpath)?;
                    let iso = Isolation::parse(&s.value).ok_or_else(|| {
                        self.err(
                            v,
                            &fpath,
                            format!("expected `agent` or `project`, found `{}`", s.value),
                        )
                    })?;
                    decl.isolation = Some(Located {
                        value: iso,
                        pos: v.pos,
                    });
                }
                "hooks" => {
                    let items = v.as_seq().ok_or_else(|| {
                        self.err(
                            v,
                            &fpath,
                            format!("expected a list of hooks, found {}", v.value.type_name()),
                        )
                    })?;
                    let mut hooks = Vec::new();
                    for (i, h) in items.iter().enumerate() {
                        hooks.push(self.string(h, &format!("{fpath}[{i}]"))?);
                    }
                    decl.hooks = Some(hooks);
                }
                "config" => match v.to_json() {
                    Value::Null => {}
                    Value::Object(m) => decl.config = Some(m),
                    _ => {
                        return Err(self.err(
                            v,
                            &fpath,
                            format!("expected a mapping, found {}", v.value.type_name()),
                        ))
                    }
                },
                _ => return Err(self.err(
                    k,
                    &fpath,
                    "unknown field (expected package, version, source, isolation, hooks or config)",
                )),
            }
        }
        Ok(decl)
    }
}
