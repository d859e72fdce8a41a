#!/usr/bin/env python3
"""Check that no file of a library crate imports from a module above its own layer.

Usage: scripts/module-layers.py <crate>/src [--suggest]
       scripts/module-layers.py <crate>/src/<module> [--suggest]

The crate's `lib.rs` states its layer order in one line of its doc comment:

    //! <!-- layers: daemon > bench in_process > core -->

top to bottom: `>` separates layers, modules on one layer are separated by
spaces. Every top-level module of `lib.rs` (`mod x;` / `pub mod x;`) is
listed exactly once. A file belongs to the top-level module whose tree holds
it; the file-level imports are those `scripts/module-cycles.py` finds
(use trees and paths, followed through re-exports to the defining file). An
import from a module on a higher layer fails, naming the file, the module it
reaches up to and the names it uses. Imports within one layer are allowed
(module-cycles.py already refuses circles).

Given a module's folder instead (one with a `mod.rs`, inside a crate's
`src`), the same holds one level down: its `mod.rs` states the order of its
own submodules, and the imports between files of the folder are checked
against it (imports from outside the folder are not its concern).

`--suggest` prints a layer line that fits today's imports (each module as
low as its imports allow) to start from; the check itself never guesses.
Exits 1 on a violation or a missing/incomplete layer line, 0 otherwise.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys

_here = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("module_cycles", os.path.join(_here, "module-cycles.py"))
assert _spec and _spec.loader
mc = importlib.util.module_from_spec(_spec)
sys.modules["module_cycles"] = mc
_spec.loader.exec_module(mc)

LAYER_LINE = re.compile(r"<!--\s*layers:\s*(.*?)\s*-->")
MOD_DECL = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+([A-Za-z_][A-Za-z0-9_]*)\s*;", re.M)


def top_modules(lib: str) -> list[str]:
    """The modules `lib.rs` declares, in order (test-only ones included)."""
    text = mc.strip_source(open(lib, encoding="utf-8").read())
    return MOD_DECL.findall(text)


def parse_layers(lib: str) -> list[list[str]] | None:
    """The stated layers, top first, or None when lib.rs states none."""
    for line in open(lib, encoding="utf-8"):
        m = LAYER_LINE.search(line)
        if m:
            return [layer.split() for layer in m.group(1).split(">")]
    return None


def owner(src: str, file: str, modules: set[str]) -> str | None:
    """The top-level module whose tree holds `file` (None for lib.rs)."""
    rel = os.path.relpath(file, src)
    first = rel.split(os.sep)[0]
    name = first[:-3] if first.endswith(".rs") else first
    return name if name in modules else None


def crate_src(folder: str) -> str | None:
    """The `src` folder of the crate that holds `folder` (the nearest one with a `lib.rs`)."""
    d = os.path.abspath(folder)
    while True:
        if os.path.isfile(os.path.join(d, "lib.rs")):
            return d
        up = os.path.dirname(d)
        if up == d:
            return None
        d = up


def module_edges(src: str, modules: set[str]) -> list[tuple[str, str, str, str, set[str]]]:
    """(from module, to module, from file, to file, names) for each cross-module import."""
    root = crate_src(src) or src
    crate = mc.Crate(root, os.path.join(root, "lib.rs"))
    out = []
    for (a, b), why in crate.edges().items():
        ma, mb = owner(src, a, modules), owner(src, b, modules)
        if ma and mb and ma != mb:
            out.append((ma, mb, a, b, why))
    return out


def suggest(modules: list[str], edges) -> str:
    """Each module on the lowest layer its imports allow, printed top first."""
    deps = {m: {mb for ma, mb, *_ in edges if ma == m} for m in modules}
    level: dict[str, int] = {}

    def depth(m: str, stack: tuple[str, ...] = ()) -> int:
        if m in level:
            return level[m]
        if m in stack:
            return 0  # a circle: module-cycles.py reports it
        level[m] = 1 + max((depth(d, stack + (m,)) for d in deps[m]), default=-1)
        return level[m]

    for m in modules:
        depth(m)
    top = max(level.values(), default=0)
    layers = [sorted(m for m in modules if level[m] == n) for n in range(top, -1, -1)]
    return " > ".join(" ".join(layer) for layer in layers if layer)


def main(argv: list[str]) -> int:
    args = [a for a in argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    src = os.path.normpath(args[0])
    lib = os.path.join(src, "lib.rs")
    if not os.path.isfile(lib):
        lib = os.path.join(src, "mod.rs")
        if not os.path.isfile(lib) or crate_src(src) is None:
            print(f"{src}: neither a crate's src (lib.rs) nor a module folder (mod.rs) inside one",
                  file=sys.stderr)
            return 2
    modules = top_modules(lib)
    edges = module_edges(src, set(modules))
    if "--suggest" in argv:
        print(f"<!-- layers: {suggest(modules, edges)} -->")
        return 0
    layers = parse_layers(lib)
    if layers is None:
        print(f"{lib}: no `<!-- layers: ... -->` line in its doc comment; "
              f"today's imports fit: <!-- layers: {suggest(modules, edges)} -->")
        return 1
    rank: dict[str, int] = {}
    bad = 0
    for i, layer in enumerate(layers):
        for m in layer:
            if m in rank:
                print(f"{lib}: `{m}` is listed twice in the layer line")
                bad += 1
            rank[m] = len(layers) - i
    for m in modules:
        if m not in rank:
            print(f"{lib}: module `{m}` is not in the layer line")
            bad += 1
    for m in rank:
        if m not in modules:
            print(f"{lib}: the layer line names `{m}`, which {os.path.basename(lib)} does not declare")
            bad += 1
    rel = lambda p: os.path.relpath(p, src)  # noqa: E731
    for ma, mb, a, b, why in sorted(edges):
        if ma in rank and mb in rank and rank[mb] > rank[ma]:
            print(f"{rel(a)} (layer of `{ma}`) imports from `{mb}`, a layer above it: "
                  f"{rel(b)} ({', '.join(sorted(why))})")
            bad += 1
    if bad:
        return 1
    print(f"{src}: every import runs down ({len(layers)} layers)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
