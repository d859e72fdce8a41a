//! Collecting problems with their field path and YAML location, and the
//! typed accessors every check uses (a wrong type is reported once, where it
//! is found, and the check then skips the value).

use kaged_plugin_protocol::manifest::{Pos, YamlNode};

use super::report::Problem;
use super::rule::Rule;

/// `parent.key` (or `key` at the root).
pub(crate) fn child(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_owned()
    } else {
        format!("{parent}.{key}")
    }
}

/// `parent[i]`.
pub(crate) fn item(parent: &str, i: usize) -> String {
    format!("{parent}[{i}]")
}

/// Problems found so far.
#[derive(Debug, Default)]
pub(crate) struct Ctx {
    pub(crate) problems: Vec<Problem>,
}

impl Ctx {
    /// Record a problem at a position.
    pub(crate) fn at_pos(&mut self, rule: Rule, pos: Pos, path: &str, message: impl Into<String>) {
        self.problems.push(Problem {
            severity: rule.severity(),
            rule,
            path: path.to_owned(),
            line: Some(pos.line),
            column: Some(pos.column),
            message: message.into(),
        });
    }

    /// Record a problem at a node.
    pub(crate) fn at(
        &mut self,
        rule: Rule,
        node: &YamlNode,
        path: &str,
        message: impl Into<String>,
    ) {
        self.at_pos(rule, node.pos, path, message);
    }

    /// Record a wrong type.
    pub(crate) fn wrong_type(&mut self, node: &YamlNode, path: &str, expected: &str) {
        let found = node.value.type_name();
        self.at(
            Rule::WrongType,
            node,
            path,
            format!("`{path}` must be {expected}, found {found}"),
        );
    }

    /// The string, or a wrong-type problem.
    pub(crate) fn string<'a>(&mut self, node: &'a YamlNode, path: &str) -> Option<&'a str> {
        let s = node.as_str();
        if s.is_none() {
            self.wrong_type(node, path, "a string");
        }
        s
    }

    /// The integer, or a wrong-type problem.
    pub(crate) fn integer(&mut self, node: &YamlNode, path: &str) -> Option<i64> {
        let i = node.as_i64();
        if i.is_none() {
            self.wrong_type(node, path, "an integer");
        }
        i
    }

    /// The number, or a wrong-type problem.
    pub(crate) fn number(&mut self, node: &YamlNode, path: &str) -> Option<f64> {
        let n = node.as_f64();
        if n.is_none() {
            self.wrong_type(node, path, "a number");
        }
        n
    }

    /// The boolean, or a wrong-type problem.
    pub(crate) fn boolean(&mut self, node: &YamlNode, path: &str) -> Option<bool> {
        let b = node.as_bool();
        if b.is_none() {
            self.wrong_type(node, path, "a boolean");
        }
        b
    }

    /// The sequence, or a wrong-type problem.
    pub(crate) fn seq<'a>(&mut self, node: &'a YamlNode, path: &str) -> Option<&'a [YamlNode]> {
        let s = node.as_seq();
        if s.is_none() {
            self.wrong_type(node, path, "a list");
        }
        s
    }

    /// The mapping, or a wrong-type problem.
    pub(crate) fn map<'a>(
        &mut self,
        node: &'a YamlNode,
        path: &str,
    ) -> Option<&'a [(YamlNode, YamlNode)]> {
        let m = node.as_map();
        if m.is_none() {
            self.wrong_type(node, path, "a mapping");
        }
        m
    }

    /// The string entries of a list of strings, with index, node and path;
    /// a non-list or non-string entry is a wrong-type problem.
    pub(crate) fn strings<'a>(
        &mut self,
        node: &'a YamlNode,
        path: &str,
    ) -> Vec<(usize, &'a YamlNode, &'a str, String)> {
        let mut out = Vec::new();
        for (i, entry) in self.seq(node, path).unwrap_or_default().iter().enumerate() {
            let p = item(path, i);
            if let Some(s) = self.string(entry, &p) {
                out.push((i, entry, s, p));
            }
        }
        out
    }
}

/// Report every repeated key of every mapping in the tree.
pub(crate) fn duplicate_keys(ctx: &mut Ctx, node: &YamlNode, path: &str) {
    if let Some(seq) = node.as_seq() {
        for (i, n) in seq.iter().enumerate() {
            duplicate_keys(ctx, n, &item(path, i));
        }
    } else if let Some(map) = node.as_map() {
        for (i, (k, v)) in map.iter().enumerate() {
            let key = k.key_text();
            let p = child(path, &key);
            if map[..i].iter().any(|(prev, _)| prev.key_text() == key) {
                ctx.at(
                    Rule::DuplicateKey,
                    k,
                    &p,
                    format!("key `{key}` is repeated"),
                );
            }
            duplicate_keys(ctx, v, &p);
        }
    }
}

/// The node at a JSON pointer (`/properties/a/type`) below `node`, or its
/// nearest existing ancestor, with the field path of that pointer.
pub(crate) fn at_pointer<'a>(
    node: &'a YamlNode,
    path: &str,
    pointer: &str,
) -> (&'a YamlNode, String) {
    let mut n = node;
    let mut p = path.to_owned();
    let mut found = true;
    for raw in pointer.split('/').skip(1) {
        let seg = raw.replace("~1", "/").replace("~0", "~");
        let idx = n.as_seq().and(seg.parse::<usize>().ok());
        p = match idx {
            Some(i) => item(&p, i),
            None => child(&p, &seg),
        };
        let next = match idx {
            Some(i) => n.index(i),
            None => n.get(&seg),
        };
        match next {
            Some(x) if found => n = x,
            _ => found = false,
        }
    }
    (n, p)
}
