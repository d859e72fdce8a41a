#!/usr/bin/env python3
"""A registry's worth of plugins certified on this machine, as a CI would
(issue 48): 50 plugins (the two any-language examples and 48 generated
variants of them, one in three with a planted bug), one registry file,
`kaged-conformance matrix` for the rows, each row's job run with the
workflow's own script (`--jobs` as CI runs it: one runner per job, N at
once), then `kaged-conformance merge` into one page. Prints the wall time
and the CPU time per plugin, and where the page is.

    scripts/registry-bench.py [--plugins 50] [--parallel 2] [--cage require|off]

Needs the kit's binaries built (`cargo build --workspace`, or the tests
built them) under target/debug, and node and python3 under /usr/bin.
"""
import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "debug")

# Planted bugs: (what, file suffix, text, replacement).
BUGS = [
    ("unknown method answered -32600", ".py", "RpcError(-32601,", "RpcError(-32600,"),
    ("unknown method answered -32600", ".js", "new RpcError(-32601,", "new RpcError(-32600,"),
]


def make_plugins(base, count):
    """Copies of python-notes and node-notes under new names; every third
    one with a bug planted. Answers [(name, dir, bug)]."""
    examples = [("python-notes", "py-notes", ["kaged-plugin.yaml", "plugin.py"]),
                ("node-notes", "node-notes", ["kaged-plugin.yaml", "plugin.js"])]
    out = []
    for i in range(count):
        example, old, files = examples[i % 2]
        name = old if i < 2 else f"{old}-v{i}"
        d = os.path.join(base, "plugins", name)
        os.makedirs(d)
        bug = None
        for f in files:
            text = open(os.path.join(ROOT, "examples", example, f)).read()
            if name != old:
                text = re.sub(rf"\b{re.escape(old)}\b", name, text)
            if i >= 2 and i % 3 == 0:
                for what, suffix, a, b in BUGS:
                    if f.endswith(suffix) and a in text:
                        text = text.replace(a, b)
                        bug = what
            open(os.path.join(d, f), "w").write(text)
            if f.startswith("plugin."):
                os.chmod(os.path.join(d, f), 0o755)
        out.append((name, d, bug))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plugins", type=int, default=50)
    ap.add_argument("--parallel", type=int, default=2)
    ap.add_argument("--cage", default="require")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    a = ap.parse_args()
    conformance = os.path.join(BIN, "kaged-conformance")
    if not os.path.exists(conformance):
        sys.exit(f"{conformance} is not built: cargo build --workspace")
    work = tempfile.mkdtemp(prefix="kaged-registry-")
    plugins = make_plugins(work, a.plugins)
    with open(os.path.join(work, "registry.yaml"), "w") as f:
        f.write("registry: 1\nplugins:\n")
        for name, _, _ in plugins:
            f.write(f"  - name: {name}\n    version: 0.1.0\n    source: {{dir: plugins/{name}}}\n")
    env = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}")
    matrix = json.loads(subprocess.run([conformance, "matrix", "registry.yaml", "--format", "github",
                                        "--workflow", "registry.yml"],
                                       cwd=work, env=env, check=True, capture_output=True, text=True).stdout)
    workflow = open(os.path.join(work, "registry.yml")).read()
    # The certify step's script, as the workflow runs it.
    step = workflow[workflow.index("KEY: ${{ matrix.key }}"):]
    script = step.split("run: |\n", 1)[1].split("      - uses:", 1)[0]
    script = "\n".join(l[10:] for l in script.splitlines()).replace("--cage require", f"--cage {a.cage}")
    # One runner per job: `--jobs` as a CI runner of this size would.
    script = script.replace("kaged-conformance run ", f"kaged-conformance run --jobs {max(1, os.cpu_count() // a.parallel)} ")

    def job(row):
        started = time.monotonic()
        r = subprocess.run(["bash", "-e", "-c", script], cwd=work, capture_output=True, text=True,
                           env=dict(env, KEY=row["key"], DIR=row["dir"], GIT=row["git"], REF=row["ref"],
                                    POLICY=row["policy"]))
        return row["key"], r.returncode, time.monotonic() - started, r.stderr[-400:]

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=a.parallel) as pool:
        results = list(pool.map(job, matrix["include"]))
    merge = subprocess.run([conformance, "merge", "--out", "site"] +
                           [f"reports/{row['key']}.json" for row in matrix["include"]],
                           cwd=work, env=env, capture_output=True, text=True)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    failed_jobs = [k for k, code, _, _ in results if code != 0]
    index = json.load(open(os.path.join(work, "site", "index.json")))
    good = sum(1 for r in index["rows"] if r["good"])
    planted = sum(1 for _, _, bug in plugins if bug)
    print(f"{len(plugins)} plugins, {planted} with a planted bug; {a.parallel} jobs at once, cage {a.cage}")
    print(f"wall {wall:.0f} s; CPU {cpu:.0f} s, {cpu / len(plugins):.1f} s per plugin; "
          f"jobs {min(t for _, _, t, _ in results):.1f}-{max(t for _, _, t, _ in results):.1f} s each")
    print(f"page: {good} good, {len(plugins) - good} not (merge exit {merge.returncode}); "
          f"jobs that could not run: {failed_jobs or 'none'}")
    print(f"{os.path.join(work, 'site', 'index.html')}")
    if len(plugins) - good != planted or failed_jobs:
        for k, code, _, err in results:
            if code != 0:
                print(f"  {k}: exit {code}: {err}", file=sys.stderr)
        sys.exit(1)
    if not a.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
