//! Writing a knob change back into the project file: plugin-host.md § Plugin
//! knob schema, "Knob changes write to project.yaml's
//! AgentSpec.plugins.<name>.config via the standard config-update path".
//!
//! Only the declaration's `config:` changes: its field is set, and the
//! block is written back as one flow mapping (`config: {"retain_every": 7}`,
//! JSON being YAML) on the lines the old block held; every other line of
//! the file stays byte for byte, comments included (comments inside the old
//! `config:` block go with it). A declaration without `config:` gets one,
//! after its last line. The result is parsed again and must hold the new
//! value, or nothing is written.
//!
//! ```
//! use kaged_host_engine::agents::persist::set_config_field;
//! let text = "primary:\n  plugins:\n    notes:   # the notes plugin\n      package: \"@kaged/notes\"\n      config: { max: 10 }\n";
//! let out = set_config_field(text, "p.yaml", "primary", "notes", "max", &serde_json::json!(25)).unwrap();
//! assert_eq!(out, "primary:\n  plugins:\n    notes:   # the notes plugin\n      package: \"@kaged/notes\"\n      config: {\"max\":25}\n");
//! ```

use kaged_plugin_protocol::manifest::{parse_yaml, Pos, YamlNode};
use serde_json::{Map, Value};

use super::project::{Project, PRIMARY};

/// Why a knob change could not be written into the project file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot write `{field}` of `{key}` on agent `{agent_path}` into {file}: {reason}")]
pub struct PersistError {
    /// The project file.
    pub file: String,
    /// The agent path.
    pub agent_path: String,
    /// The declaration key.
    pub key: String,
    /// The config field.
    pub field: String,
    /// What stood in the way.
    pub reason: String,
}

/// `text` (a project file named `file`) with `field` set to `value` in
/// the `config:` of declaration `key` on `agent_path`; see the module docs.
pub fn set_config_field(
    text: &str,
    file: &str,
    agent_path: &str,
    key: &str,
    field: &str,
    value: &Value,
) -> Result<String, PersistError> {
    let fail = |reason: String| PersistError {
        file: file.to_string(),
        agent_path: agent_path.to_string(),
        key: key.to_string(),
        field: field.to_string(),
        reason,
    };
    let root = parse_yaml(text).map_err(|e| fail(format!("it does not parse: {}", e.message)))?;
    let (decl_key, decl) = declaration(&root, agent_path, key).ok_or_else(|| {
        fail("no such declaration in the file (it changed since it was loaded?)".into())
    })?;
    let Some(entries) = decl.as_map().filter(|_| decl.pos.line > decl_key.pos.line) else {
        return Err(fail(
            "the declaration is not a block mapping, which is the only form written back".into(),
        ));
    };
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let config_entry = entries.iter().find(|(k, _)| k.as_str() == Some("config"));
    let mut config = match config_entry {
        Some((_, v)) => match v.to_json() {
            Value::Object(m) => m,
            Value::Null => Map::new(),
            other => return Err(fail(format!("its `config` is not a mapping but {other}"))),
        },
        None => Map::new(),
    };
    config.insert(field.to_string(), value.clone());
    let (indent, first, last) = match config_entry {
        Some((k, v)) => (
            k.pos.column - 1,
            k.pos.line,
            end_line(&root, k.pos, v, &lines),
        ),
        None => {
            let first_key = &entries[0].0;
            let after = end_line(&root, decl_key.pos, decl, &lines);
            (first_key.pos.column - 1, after + 1, after)
        }
    };
    let block = format!(
        "{}config: {}\n",
        " ".repeat(indent),
        Value::Object(config.clone())
    );
    let mut out = String::with_capacity(text.len() + block.len());
    for l in &lines[..first - 1] {
        out.push_str(l);
    }
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&block);
    for l in lines.get(last..).unwrap_or_default() {
        out.push_str(l);
    }
    check(&out, file, agent_path, key, &config).map_err(fail)?;
    Ok(out)
}

/// The key and value nodes of declaration `key` on `agent_path`.
fn declaration<'a>(
    root: &'a YamlNode,
    agent_path: &str,
    key: &str,
) -> Option<(&'a YamlNode, &'a YamlNode)> {
    let mut parts = agent_path.split('.');
    if parts.next() != Some(PRIMARY) {
        return None;
    }
    let mut agent = root.get(PRIMARY)?;
    while let Some(sub) = parts.next() {
        if sub != "subagents" {
            return None;
        }
        agent = agent.get("subagents")?.get(parts.next()?)?;
    }
    agent.get("plugins")?.entry(key)
}

/// The last line (1-based) of the node `value` whose key starts at `key`:
/// the line before the first node after it, less trailing blank and
/// comment-only lines; the file's last line when nothing follows.
fn end_line(root: &YamlNode, key: Pos, value: &YamlNode, lines: &[&str]) -> usize {
    let at = |p: &Pos| (p.line, p.column);
    let mut inside = vec![key];
    positions(value, &mut inside);
    let end = inside
        .iter()
        .map(at)
        .max()
        .unwrap_or((key.line, key.column));
    let mut all = Vec::new();
    positions(root, &mut all);
    let next = all
        .iter()
        .filter(|p| at(p) > end && p.line > key.line)
        .map(|p| p.line)
        .min();
    let mut last = next.map_or(lines.len(), |n| n - 1);
    while last > key.line {
        let l = lines[last - 1].trim();
        if l.is_empty() || l.starts_with('#') {
            last -= 1;
        } else {
            break;
        }
    }
    last
}

fn positions(node: &YamlNode, out: &mut Vec<Pos>) {
    out.push(node.pos);
    if let Some(items) = node.as_seq() {
        for i in items {
            positions(i, out);
        }
    }
    if let Some(entries) = node.as_map() {
        for (k, v) in entries {
            positions(k, out);
            positions(v, out);
        }
    }
}

/// The written file parses as a project and the declaration holds `want`.
fn check(
    text: &str,
    file: &str,
    agent_path: &str,
    key: &str,
    want: &Map<String, Value>,
) -> Result<(), String> {
    let project = Project::from_yaml_str(text, file)
        .map_err(|e| format!("the rewritten file would not load ({e}); nothing written"))?;
    let got = project
        .agent(agent_path)
        .and_then(|a| a.plugin(key))
        .and_then(|d| d.config.clone());
    match got.as_ref() == Some(want) {
        true => Ok(()),
        false => Err("the rewritten file would not hold the new config; nothing written".into()),
    }
}
