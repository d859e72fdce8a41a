#!/usr/bin/env python3
"""Find file-level import circles inside one Rust crate.

Usage: scripts/module-cycles.py <crate>/src [--edges]

Every `.rs` file reachable from the crate roots (`lib.rs`, `main.rs`,
`bin/*.rs`, `bin/*/main.rs`, each a tree of its own) is a node. File A has an
edge to file B when A names an item that is *defined* in B:

* `use` trees (`use crate::a::b::{c, d as e}`, `use super::x`, `use self::y`,
  `use child::z` for a child module, `use super::*` globs), `pub use` included;
* paths written in code (`crate::a::b::f(..)`, `super::g`, `$crate::h!`).

Names are followed through re-exports to the file that defines them: when
`lib.rs` says `pub use runtime::Plugin` and a file uses `crate::Plugin`, the
edge goes to the file that defines `Plugin`, not to `lib.rs`. A module file
(`lib.rs`, `mod.rs`, `foo.rs` of `foo/`) re-exporting from its own
descendants (`pub use child::X`) is structure, not an import: no edge. A
child importing an item defined in its parent file is an edge.

Module layouts: `foo.rs` + `foo/bar.rs`, `foo/mod.rs`, inline `mod x { .. }`
(a part of its file) and `#[path = ".."]`. Comments and string literals are
skipped. The parse is lexical, not a compiler: a name it cannot resolve
(another crate, an enum variant, a method) gives no edge.

Prints each circle (a strongly connected component of more than one file)
with the edges inside it and the names behind each edge, and exits 1 if
there is any; prints "no circles" and exits 0 otherwise. `--edges` also
prints every edge.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
ITEM_KINDS = ("fn", "struct", "enum", "trait", "type", "const", "static", "union", "mod")


# --------------------------------------------------------------------------
# Lexing: strip comments and literals, keep everything else in place.


def strip_source(text: str) -> str:
    """The source with comments removed and string/char literals emptied."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
            out.append(" ")
            continue
        m = re.compile(r'b?r(#*)"').match(text, i)
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = text.find('"' + m.group(1), m.end())
            i = n if end < 0 else end + 1 + len(m.group(1))
            out.append('""')
            continue
        if c == '"' or (c == "b" and text.startswith('b"', i) and not _ident_before(text, i)):
            i += 2 if c == "b" else 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            out.append('""')
            continue
        if c == "'":
            # A char literal ('a', '\n', '\u{1F600}') or a lifetime ('a).
            m = re.compile(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'").match(text, i)
            if m:
                out.append("' '")
                i = m.end()
                continue
        out.append(c)
        i += 1
    return "".join(out)


def _ident_before(text: str, i: int) -> bool:
    return i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")


# --------------------------------------------------------------------------
# The module tree.


@dataclass
class Module:
    """A module: a file of its own or an inline `mod x { .. }` in a file."""

    path: tuple[str, ...]  # from the crate root, e.g. ("runtime", "builder")
    file: str  # the file its items live in
    is_file_root: bool  # the module is a whole file (not inline)
    parent: "Module | None"
    children: dict[str, "Module"] = field(default_factory=dict)
    items: set[str] = field(default_factory=set)  # names defined here
    reexports: dict[str, tuple[str, ...]] = field(default_factory=dict)  # name -> path
    glob_reexports: list[tuple[str, ...]] = field(default_factory=list)
    uses: list[tuple[tuple[str, ...], bool, bool]] = field(default_factory=list)  # (path, glob, pub)
    code_paths: list[tuple[str, ...]] = field(default_factory=list)
    idents: set[str] = field(default_factory=set)  # every identifier written here
    end: int | None = None  # for an inline module: where its body ends

    def ancestors(self):
        m = self.parent
        while m is not None:
            yield m
            m = m.parent


class Crate:
    def __init__(self, src: str, root_file: str):
        self.src = src
        self.root = Module((), root_file, True, None)
        self.modules: list[Module] = []
        self.macro_files: dict[str, str] = {}
        self._load(self.root, root_file, owns_dir=True)

    # -- loading --------------------------------------------------------

    def _load(self, module: Module, file: str, owns_dir: bool) -> None:
        with open(file, encoding="utf-8") as f:
            text = strip_source(f.read())
        # The directory child module files of this file live in.
        base = os.path.dirname(file)
        if not owns_dir:
            base = os.path.join(base, os.path.splitext(os.path.basename(file))[0])
        self._parse_body(module, text, base)

    def _parse_body(self, module: Module, text: str, child_dir: str) -> None:
        """Parse one module body: items at its top level, inline modules
        recursively, `use` statements and code paths anywhere inside."""
        self.modules.append(module)
        pos, n = 0, len(text)
        depth = 0
        inline_spans: list[tuple[int, int]] = []  # bodies of inline child modules
        token = re.compile(
            r"(?P<attrpath>#\[\s*path\s*=\s*\"[^\"]*\"\s*\])"
            r"|(?P<use>\b(?:pub(?:\s*\([^)]*\))?\s+)?use\s+[^;]*;)"
            r"|(?P<mod>\b(?:pub(?:\s*\([^)]*\))?\s+)?mod\s+(?P<modname>" + IDENT + r")\s*(?P<modend>[;{]))"
            r"|(?P<item>\b(?:pub(?:\s*\([^)]*\))?\s+)?(?:(?:async|unsafe|const|extern(?:\s+\"\")?)\s+)*"
            r"(?P<kind>fn|struct|enum|trait|type|const|static|union)\s+(?P<name>" + IDENT + r"))"
            r"|(?P<macro>macro_rules!\s*(?P<macroname>" + IDENT + r"))"
            r"|(?P<open>\{)|(?P<close>\})"
        )
        while pos < n:
            m = token.search(text, pos)
            if not m:
                break
            pos = m.end()
            if m.group("open"):
                depth += 1
            elif m.group("close"):
                if depth == 0:
                    # The end of this inline module's body.
                    self._collect_code(module, _blank(text[: m.start()], inline_spans))
                    module.end = m.end()
                    return
                depth -= 1
            elif m.group("use"):
                stmt = m.group("use")
                is_pub = stmt.lstrip().startswith("pub")
                tree = re.sub(r"^\s*(pub(\s*\([^)]*\))?\s+)?use\s+", "", stmt)[:-1]
                for path, glob in expand_use_tree(tree):
                    module.uses.append((path, glob, is_pub))
                    if is_pub and depth == 0:
                        if glob:
                            module.glob_reexports.append(path)
                        elif path:
                            alias = path[-1]
                            am = re.search(r"\bas\s+(" + IDENT + r")$", path[-1])
                            if am:
                                alias = am.group(1)
                            module.reexports[alias] = _strip_alias(path)
            elif m.group("mod"):
                name = m.group("modname")
                if m.group("modend") == ";":
                    if depth == 0:
                        child_file = self._child_file(child_dir, name, module)
                        if child_file:
                            child = Module(module.path + (name,), child_file, True, module)
                            module.children[name] = child
                            module.items.add(name)
                            owns = os.path.basename(child_file) == "mod.rs"
                            self._load(child, child_file, owns_dir=owns)
                else:
                    # Inline module: parse its body as a module of its own,
                    # in the same file.
                    child = Module(module.path + (name,), module.file, False, module)
                    if depth == 0:
                        module.children[name] = child
                        module.items.add(name)
                    sub = text[m.end():]
                    self._parse_body(child, sub, os.path.join(child_dir, name))
                    end = m.end() + (child.end if child.end is not None else len(sub))
                    inline_spans.append((m.end(), end))
                    pos = end
            elif m.group("item"):
                if depth == 0:
                    module.items.add(m.group("name"))
            elif m.group("macro"):
                # `#[macro_export]` puts it at the crate root (`crate::m!`),
                # defined in this file.
                module.items.add(m.group("macroname") + "!")
                self.macro_files[m.group("macroname") + "!"] = module.file
        self._collect_code(module, _blank(text, inline_spans))

    def _child_file(self, child_dir: str, name: str, module: Module) -> str | None:
        for cand in (os.path.join(child_dir, name + ".rs"), os.path.join(child_dir, name, "mod.rs")):
            if os.path.isfile(cand):
                return cand
        return self._path_attr(module, name, child_dir)

    def _path_attr(self, module: Module, name: str, child_dir: str) -> str | None:
        with open(module.file, encoding="utf-8") as f:
            raw = f.read()
        m = re.search(r'#\[\s*path\s*=\s*"([^"]+)"\s*\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+' + name + r"\s*;", raw)
        if m:
            cand = os.path.join(os.path.dirname(module.file), m.group(1))
            if os.path.isfile(cand):
                return cand
        return None

    def _collect_code(self, module: Module, text: str) -> None:
        # Paths in code (not in `use` statements, handled above).
        body = re.sub(r"\b(?:pub(?:\s*\([^)]*\))?\s+)?use\s+[^;]*;", " ", text)
        for m in re.finditer(r"(?<![A-Za-z0-9_:])\$?((?:crate|super|self)(?:\s*::\s*" + IDENT + r")+)(\s*!)?", body):
            segs = tuple(s.strip() for s in m.group(1).split("::"))
            if m.group(2):
                segs = segs[:-1] + (segs[-1] + "!",)
            module.code_paths.append(segs)
        # `child::item` paths that start with a child module's name are
        # collected at resolution time from the identifiers.
        for m in re.finditer(r"(?<![A-Za-z0-9_:])(" + IDENT + r")\s*::\s*(" + IDENT + r")", body):
            module.code_paths.append(("?" + m.group(1), m.group(2)))
        module.idents.update(re.findall(IDENT, body))

    # -- resolution -----------------------------------------------------

    def start(self, module: Module, first: str) -> tuple[Module, int] | None:
        """The module a path starts in, and how many segments that used."""
        if first in ("crate", "$crate"):
            return self.root, 1
        if first == "self":
            return module, 1
        if first == "super":
            return module.parent, 1
        return None

    def resolve(self, module: Module, path: tuple[str, ...], seen=None) -> str | None:
        """The file that defines what `path` (as written in `module`) names."""
        if not path:
            return None
        seen = seen or set()
        key = (id(module), path)
        if key in seen:
            return None
        seen.add(key)
        cur: Module | None
        i = 0
        if path[0].startswith("?"):
            # `name::x` in code: a child module or an item imported by `use`.
            name = path[0][1:]
            if name in module.children:
                cur, i = module.children[name], 1
            else:
                target = self._imported(module, name)
                if target is None:
                    return None
                return self.resolve(target[0], target[1] + path[1:], seen)
        else:
            s = self.start(module, path[0])
            if s is None:
                if path[0] in module.children:
                    cur, i = module.children[path[0]], 1
                else:
                    return None
            else:
                cur, i = s
        while cur is not None and i < len(path) and path[i] == "super":
            cur, i = cur.parent, i + 1
        while cur is not None and i < len(path):
            seg = path[i]
            if seg in cur.children:
                cur, i = cur.children[seg], i + 1
                continue
            return self.lookup(cur, seg, path[i + 1:], seen)
        return cur.file if cur is not None else None

    def lookup(self, module: Module, name: str, rest: tuple[str, ...], seen) -> str | None:
        """The file defining `name` as seen in `module` (with `rest` after it)."""
        if name in module.items:
            return module.file
        if module is self.root and name in self.macro_files:
            return self.macro_files[name]
        if name in module.reexports:
            return self.resolve(module, module.reexports[name] + rest, seen) or None
        for g in module.glob_reexports:
            f = self.resolve(module, g + (name,) + rest, seen)
            if f:
                return f
        # A private `use` in the module also brings the name in scope.
        imported = self._imported(module, name)
        if imported:
            return self.resolve(imported[0], imported[1] + rest, seen)
        return None

    def _imported(self, module: Module, name: str):
        for path, glob, _ in module.uses:
            if glob or not path:
                continue
            alias = path[-1]
            am = re.search(r"\bas\s+(" + IDENT + r")$", alias)
            if am:
                alias = am.group(1)
            if alias == name:
                return module, _strip_alias(path)
        return None

    def exported_names(self, module: Module, seen=None) -> set[str]:
        seen = seen or set()
        if id(module) in seen:
            return set()
        seen.add(id(module))
        names = set(module.items) | set(module.reexports)
        for g in module.glob_reexports:
            target = self.module_at(module, g)
            if target is not None:
                names |= self.exported_names(target, seen)
        return names

    def module_at(self, module: Module, path: tuple[str, ...]) -> Module | None:
        s = self.start(module, path[0]) if path else None
        if s is None:
            if path and path[0] in module.children:
                cur, i = module.children[path[0]], 1
            else:
                return None
        else:
            cur, i = s
        while cur is not None and i < len(path):
            if path[i] == "super":
                cur = cur.parent
            elif path[i] in cur.children:
                cur = cur.children[path[i]]
            else:
                return None
            i += 1
        return cur

    # -- edges ----------------------------------------------------------

    def edges(self) -> dict[tuple[str, str], set[str]]:
        out: dict[tuple[str, str], set[str]] = {}

        def add(module: Module, target: str | None, why: str) -> None:
            if target and target != module.file:
                out.setdefault((module.file, target), set()).add(why)

        for module in self.modules:
            for path, glob, is_pub in module.uses:
                if not path:
                    continue
                if glob:
                    target = self.module_at(module, path)
                    if target is None:
                        continue
                    if is_pub and self._descends(target, module):
                        continue
                    for name in self.exported_names(target) & module.idents:
                        add(module, self.lookup(target, name, (), set()), "::".join(path) + "::" + name)
                    continue
                clean = _strip_alias(path)
                if is_pub and self._is_descendant_path(module, clean):
                    continue  # a module re-exporting its own children: structure
                add(module, self.resolve(module, clean), "::".join(clean))
            for path in module.code_paths:
                shown = "::".join(p.lstrip("?") for p in path)
                add(module, self.resolve(module, path), shown)
        return out

    def _descends(self, target: Module, module: Module) -> bool:
        return module in target.ancestors() or target is module

    def _is_descendant_path(self, module: Module, path: tuple[str, ...]) -> bool:
        """Whether `path` points into one of `module`'s descendant modules."""
        # The longest module prefix of the path.
        cur = None
        for k in range(len(path), 0, -1):
            cur = self.module_at(module, path[:k])
            if cur is not None:
                break
        if cur is None or cur is module:
            return False
        if module not in cur.ancestors():
            return False
        # And what it names is defined at or below that child.
        file = self.resolve(module, path)
        if file is None:
            return True
        return any(m.file == file and (m is cur or cur in m.ancestors()) for m in self.modules)


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with the given spans replaced by spaces."""
    for a, b in spans:
        text = text[:a] + " " * (b - a) + text[b:]
    return text


def _strip_alias(path: tuple[str, ...]) -> tuple[str, ...]:
    last = re.sub(r"\s+as\s+" + IDENT + r"$", "", path[-1]).strip()
    if last == "self":
        return path[:-1]
    return path[:-1] + (last,)


def expand_use_tree(tree: str) -> list[tuple[tuple[str, ...], bool]]:
    """`a::{b, c::{d, e as f}, *}` -> [(a,b), (a,c,d), (a,c,'e as f'), (a,) glob]."""
    tree = " ".join(tree.split())
    out: list[tuple[tuple[str, ...], bool]] = []

    def walk(prefix: tuple[str, ...], s: str) -> None:
        s = s.strip()
        if not s:
            return
        if s.startswith("::"):
            s = s[2:]
        brace = s.find("{")
        if brace >= 0:
            head = [p.strip() for p in s[:brace].split("::") if p.strip()]
            inner = s[brace + 1: s.rfind("}")]
            for part in split_top(inner):
                walk(prefix + tuple(head), part)
            return
        parts = [p.strip() for p in s.split("::")]
        if parts[-1] == "*":
            out.append((prefix + tuple(parts[:-1]), True))
        else:
            out.append((prefix + tuple(parts), False))

    walk((), tree)
    return out


def split_top(s: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in s:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p for p in parts if p.strip()]


# --------------------------------------------------------------------------
# Cycles.


def strongly_connected(nodes: list[str], edges: dict[tuple[str, str], set[str]]) -> list[list[str]]:
    succ: dict[str, list[str]] = {n: [] for n in nodes}
    for a, b in edges:
        succ.setdefault(a, []).append(b)
        succ.setdefault(b, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        # Iterative Tarjan.
        work = [(v, iter(succ[v]))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(succ[w])))
                    advanced = True
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))

    for n in sorted(succ):
        if n not in index:
            visit(n)
    return sorted(out)


def crate_roots(src: str) -> list[str]:
    roots = [os.path.join(src, f) for f in ("lib.rs", "main.rs") if os.path.isfile(os.path.join(src, f))]
    bin_dir = os.path.join(src, "bin")
    if os.path.isdir(bin_dir):
        for entry in sorted(os.listdir(bin_dir)):
            p = os.path.join(bin_dir, entry)
            if entry.endswith(".rs") and os.path.isfile(p):
                roots.append(p)
            elif os.path.isfile(os.path.join(p, "main.rs")):
                roots.append(os.path.join(p, "main.rs"))
    return roots


def main(argv: list[str]) -> int:
    args = [a for a in argv[1:] if not a.startswith("--")]
    show_edges = "--edges" in argv
    if len(args) != 1 or not os.path.isdir(args[0]):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    src = os.path.normpath(args[0])
    roots = crate_roots(src)
    if not roots:
        print(f"{src}: no lib.rs, main.rs or bin/*.rs", file=sys.stderr)
        return 2
    found = 0
    for root in roots:
        crate = Crate(src, root)
        edges = crate.edges()
        rel = lambda p: os.path.relpath(p, src)  # noqa: E731
        files = sorted({m.file for m in crate.modules})
        if show_edges:
            for (a, b), why in sorted(edges.items()):
                print(f"{rel(a)} -> {rel(b)}  ({', '.join(sorted(why))})")
        for comp in strongly_connected(files, edges):
            found += 1
            print(f"circle of {len(comp)} files (crate root {rel(root)}):")
            inside = set(comp)
            for (a, b), why in sorted(edges.items()):
                if a in inside and b in inside:
                    print(f"  {rel(a)} -> {rel(b)}  ({', '.join(sorted(why))})")
    if found:
        return 1
    print(f"{src}: no circles")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
