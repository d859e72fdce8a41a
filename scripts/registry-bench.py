#!/usr/bin/env python3
"""A registry's worth of plugins certified on this machine, as a CI would
(issue 48), in two releases.

The registry: 50 plugins. The Rust examples, packed (`cargo kaged pack
--profile dev`: echo, memory-markdown, oh-my-pi, sdk-testbed,
summarizing-compactor), the two any-language examples (python-notes,
node-notes) and generated variants of those two under new names.

Release 1, every plugin at 0.1.0: `kaged-conformance matrix` for the rows,
each row's job run with the generated workflow's own certify script
(`--jobs` as CI runs it: one runner per job, K at once), then `merge`.

Release 2, some variants at 0.2.0, one in three of those with a bug
planted: only the new versions are certified (a registry re-certifies
what changed), then `merge --previous` over the newest report of every
plugin. The page is opened in Chromium (headless, its rendered DOM): it
must show every plugin, the planted bugs and nothing else as not
certified, and every one of them first, as a regression.

Prints each release's wall time and the CPU time per plugin, and where the
pages are.

    scripts/registry-bench.py [--plugins 50] [--parallel 2] [--cage require|off] [--keep]

Needs the kit's binaries built (`cargo build --workspace`, or the tests
built them) under target/debug, node and python3 under /usr/bin, and
chromium.
"""
import argparse
import html
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
RUST_EXAMPLES = ["echo", "memory-markdown", "oh-my-pi", "sdk-testbed", "summarizing-compactor"]
SCRIPTED = [("python-notes", "py-notes", ["kaged-plugin.yaml", "plugin.py"]),
            ("node-notes", "node-notes", ["kaged-plugin.yaml", "plugin.js"])]

# Planted bugs: (what, file suffix, text, replacement).
BUGS = [
    ("unknown method answered -32600", ".py", "RpcError(-32601,", "RpcError(-32600,"),
    ("unknown method answered -32600", ".js", "new RpcError(-32601,", "new RpcError(-32600,"),
]


def write_scripted(d, example, old, name, files, version, bug):
    """A copy of a scripted example at `d`, renamed, at `version`, with
    the bug planted when `bug`. Answers what was planted, or None."""
    os.makedirs(d)
    planted = None
    for f in files:
        text = open(os.path.join(ROOT, "examples", example, f)).read()
        if name != old:
            text = re.sub(rf"\b{re.escape(old)}\b", name, text)
        text = text.replace("0.1.0", version)
        if bug:
            for what, suffix, a, b in BUGS:
                if f.endswith(suffix) and a in text:
                    text = text.replace(a, b)
                    planted = what
        open(os.path.join(d, f), "w").write(text)
        if f.startswith("plugin."):
            os.chmod(os.path.join(d, f), 0o755)
    if bug and not planted:
        sys.exit(f"{d}: the bug could not be planted")
    return planted


def make_plugins(base, count):
    """Release 1: [(name, dir)], every plugin at 0.1.0."""
    out = []
    packs = os.path.join(base, "packs")
    for ex in RUST_EXAMPLES[:count]:
        subprocess.run([os.path.join(BIN, "cargo-kaged"), "kaged", "pack", "-p", f"kaged-example-{ex}",
                        "--profile", "dev", "--out", packs], cwd=ROOT, check=True, capture_output=True)
        shutil.copytree(os.path.join(packs, ex), os.path.join(base, "plugins", ex))
        out.append((ex, os.path.join(base, "plugins", ex)))
    for i in range(count - len(out)):
        example, old, files = SCRIPTED[i % 2]
        name = old if i < 2 else f"{old}-v{i}"
        d = os.path.join(base, "plugins", name)
        write_scripted(d, example, old, name, files, "0.1.0", False)
        out.append((name, d))
    return out


def release_two(base, plugins):
    """Release 2: half the variants (Python and Node alike) at 0.2.0, one
    in three of those with a bug. Answers [(name, dir, bug)] for the new
    versions."""
    out = []
    variants = [n for n, _ in plugins if re.search(r"-v\d+$", n)]
    for j, name in enumerate(n for k, n in enumerate(variants) if k % 4 < 2):
        i = int(name.rsplit("-v", 1)[1])
        example, old, files = SCRIPTED[i % 2]
        d = os.path.join(base, "plugins-0.2.0", name)
        bug = write_scripted(d, example, old, name, files, "0.2.0", j % 3 == 0)
        out.append((name, d, bug))
    return out


def write_registry(path, rows):
    """A registry file of `rows` under one certifier policy."""
    policy = os.path.join(os.path.dirname(path), "policy.yaml")
    with open(policy, "w") as f:
        f.write("policy: 1\nname: registry-bench\n")
    with open(path, "w") as f:
        f.write("registry: 1\npolicy: policy.yaml\nplugins:\n")
        for name, version, d in rows:
            f.write(f"  - name: {name}\n    version: {version}\n    source: {{dir: {d}}}\n")


def certify(work, env, registry, parallel, cage):
    """`matrix` on `registry`, every row's job run with the workflow's
    certify script, K at once. Answers (rows, failed jobs, wall, cpu)."""
    conformance = os.path.join(BIN, "kaged-conformance")
    matrix = json.loads(subprocess.run([conformance, "matrix", registry, "--format", "github",
                                        "--workflow", "registry.yml"],
                                       cwd=work, env=env, check=True, capture_output=True, text=True).stdout)
    workflow = open(os.path.join(work, "registry.yml")).read()
    # The certify step's script, as the workflow runs it.
    step = workflow[workflow.index("KEY: ${{ matrix.key }}"):]
    script = step.split("run: |\n", 1)[1].split("      - uses:", 1)[0]
    script = "\n".join(l[10:] for l in script.splitlines()).replace("--cage require", f"--cage {cage}")
    # One runner per job: `--jobs` as a CI runner of this size would.
    script = script.replace("kaged-conformance run ", f"kaged-conformance run --jobs {max(1, os.cpu_count() // parallel)} ")

    def job(row):
        r = subprocess.run(["bash", "-e", "-c", script], cwd=work, capture_output=True, text=True,
                           env=dict(env, KEY=row["key"], DIR=row["dir"], GIT=row["git"], REF=row["ref"],
                                    POLICY=row["policy"]))
        return row["key"], r.returncode, r.stderr[-400:]

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        results = list(pool.map(job, matrix["include"]))
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    failed = [(k, code, err) for k, code, err in results if code != 0]
    return matrix["include"], failed, wall, cpu


def merge(work, env, out, reports, previous=None):
    args = [os.path.join(BIN, "kaged-conformance"), "merge", "--out", out]
    if previous:
        args += ["--previous", previous]
    r = subprocess.run(args + reports, cwd=work, env=env, capture_output=True, text=True)
    if not os.path.exists(os.path.join(work, out, "index.json")):
        sys.exit(f"merge wrote no index (exit {r.returncode}): {r.stderr}")
    return json.load(open(os.path.join(work, out, "index.json")))


def rendered_rows(page, shot):
    """The registry table's rows, in order, as Chromium renders the page:
    [(key, change, outcome)]. A screenshot is left at `shot`."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        sys.exit("chromium is not installed: the page must be checked in a real browser")
    flags = ["--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,2400"]
    dom = subprocess.run([browser, *flags, "--dump-dom", f"file://{page}"],
                         capture_output=True, text=True, timeout=120).stdout
    subprocess.run([browser, *flags, f"--screenshot={shot}", f"file://{page}"],
                   capture_output=True, timeout=120)
    table = dom.split('id="registry"', 1)[1].split("</table>", 1)[0]
    body = table.split("<tbody>", 1)[1]
    rows = []
    for tr in re.findall(r"<tr\b([^>]*)>", body):
        attrs = dict((k, html.unescape(v)) for k, v in re.findall(r'data-([a-z]+)="([^"]*)"', tr))
        rows.append((attrs.get("key"), attrs.get("change"), attrs.get("outcome")))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plugins", type=int, default=50)
    ap.add_argument("--parallel", type=int, default=2)
    ap.add_argument("--cage", default="require")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    a = ap.parse_args()
    for b in ["kaged-conformance", "cargo-kaged"]:
        if not os.path.exists(os.path.join(BIN, b)):
            sys.exit(f"{os.path.join(BIN, b)} is not built: cargo build --workspace")
    work = tempfile.mkdtemp(prefix="kaged-registry-")
    env = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}")
    bad = False

    plugins = make_plugins(work, a.plugins)
    write_registry(os.path.join(work, "registry-1.yaml"),
                   [(n, "0.1.0", os.path.relpath(d, work)) for n, d in plugins])
    rows1, failed1, wall1, cpu1 = certify(work, env, "registry-1.yaml", a.parallel, a.cage)
    index1 = merge(work, env, "site-1", [f"reports/{r['key']}.json" for r in rows1])
    good1 = sum(1 for r in index1["rows"] if r["good"])
    print(f"release 1: {len(plugins)} plugins at 0.1.0 ({len(plugins) - len(RUST_EXAMPLES)} scripted, "
          f"{min(len(plugins), len(RUST_EXAMPLES))} Rust); {a.parallel} jobs at once, cage {a.cage}")
    print(f"  wall {wall1:.0f} s; CPU {cpu1:.0f} s, {cpu1 / len(plugins):.1f} s per plugin; "
          f"certified {good1} of {len(index1['rows'])}")
    if failed1 or good1 != len(plugins):
        bad = True

    new = release_two(work, plugins)
    write_registry(os.path.join(work, "registry-2.yaml"),
                   [(n, "0.2.0", os.path.relpath(d, work)) for n, d, _ in new])
    rows2, failed2, wall2, cpu2 = certify(work, env, "registry-2.yaml", a.parallel, a.cage)
    newest = {n: f"reports/{n}-0.1.0.json" for n, _ in plugins}
    newest.update({n: f"reports/{n}-0.2.0.json" for n, _, _ in new})
    index2 = merge(work, env, "site-2", list(newest.values()), previous="site-1/index.json")
    planted = sorted(n for n, _, bug in new if bug)
    print(f"release 2: {len(new)} new versions ({len(planted)} with a planted bug), certified alone")
    print(f"  wall {wall2:.0f} s; CPU {cpu2:.0f} s, {cpu2 / max(1, len(new)):.1f} s per plugin")

    page = os.path.join(work, "site-2", "index.html")
    shot = os.path.join(work, "site-2.png")
    rows = rendered_rows(page, shot)
    shown = len(rows)
    regressed = [k for k, change, _ in rows[:len(planted)] if change == "regressed"]
    not_certified = sorted(k.rsplit("-", 1)[0] for k, _, outcome in rows if outcome != "certified")
    updated = sorted(k.rsplit("-", 1)[0] for k, change, _ in rows if change == "updated")
    print(f"  the page in Chromium: {shown} rows; first {len(regressed)} regressed; "
          f"not certified: {len(not_certified)} (planted {len(planted)}); updated: {len(updated)}")
    print(f"  {page}\n  {shot}")
    if shown != len(plugins):
        print(f"  the page shows {shown} plugins, not {len(plugins)}", file=sys.stderr)
        bad = True
    if updated != sorted(n for n, _, bug in new if not bug):
        print(f"  the page shows as updated {updated}", file=sys.stderr)
        bad = True
    if not_certified != planted or len(regressed) != len(planted):
        print(f"  expected the planted {planted} first as regressions, got {rows[:len(planted) + 1]}",
              file=sys.stderr)
        bad = True
    for k, code, err in failed1 + failed2:
        print(f"  {k}: the job could not run (exit {code}): {err}", file=sys.stderr)
        bad = True
    if bad:
        print(f"  kept {work}", file=sys.stderr)
        sys.exit(1)
    if not a.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
