#!/usr/bin/env python3
"""Run the kit's coverage-guided fuzz targets (cargo fuzz, libFuzzer) and
print one line per target, bench-style.

    scripts/fuzz.py                  # every target, 60 s each
    scripts/fuzz.py --seconds 10     # a quick pass
    scripts/fuzz.py sql_rewrite      # one target
    scripts/fuzz.py --seeds-only     # only write the seed corpora

Targets (each in a `fuzz/` crate beside the crate it fuzzes, outside the
workspace):

    kaged-plugin-sdk/protocol/fuzz  line_codec, jsonrpc_classify, manifest_parse
    kaged-host-sim/fuzz             manifest_validate, sql_rewrite

Seeds come from the tests: the wire messages of the golden file and the
transcript snapshots, every manifest in the repository, and the SQL
statements of the storage tests. Corpora grow under target/fuzz/corpus/,
crashes land in target/fuzz/artifacts/<target>/; the script exits 1 when a
target crashed, with the command that reproduces it.

cargo fuzz needs a nightly compiler for its sanitizer flags: the script uses
`+nightly` when rustup has a nightly toolchain, and otherwise the default
toolchain with RUSTC_BOOTSTRAP=1. Install cargo fuzz with
`cargo install cargo-fuzz`.
"""

import argparse
import json
import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "target" / "fuzz"

TARGETS = {
    "line_codec": "kaged-plugin-sdk/protocol/fuzz",
    "jsonrpc_classify": "kaged-plugin-sdk/protocol/fuzz",
    "manifest_parse": "kaged-plugin-sdk/protocol/fuzz",
    "manifest_validate": "kaged-host-sim/fuzz",
    "sql_rewrite": "kaged-host-sim/fuzz",
}

SQL_START = r"(?:SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|WITH|PRAGMA|ATTACH|DETACH|VALUES|REPLACE|BEGIN|VACUUM|select|insert|create)"


def tracked(*patterns):
    out = subprocess.run(["git", "ls-files", *patterns], cwd=ROOT, capture_output=True, text=True, check=True)
    return [ROOT / p for p in out.stdout.split()]


def wire_messages():
    """Every message of the golden file and the transcript snapshots, as one compact line each."""
    found = []

    def walk(v):
        if isinstance(v, dict):
            if "jsonrpc" in v:
                found.append(json.dumps(v, separators=(",", ":"), ensure_ascii=False))
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    for f in tracked("*.jsonl"):
        for line in f.read_text().splitlines():
            try:
                walk(json.loads(line))
            except ValueError:
                pass
    for f in tracked("*.snap"):
        # An insta snapshot: a `---` header, then the value.
        body = f.read_text().split("\n---\n", 1)[-1]
        try:
            walk(json.loads(body))
        except ValueError:
            for line in body.splitlines():
                try:
                    walk(json.loads(line))
                except ValueError:
                    pass
    # The shapes the classifier tests name, which no transcript holds.
    found += ["[]", "[{}]", "{}", "null", '{"jsonrpc":"2.0","id":null,"method":"x"}', '{"jsonrpc":"1.0","id":1}', "{"]
    return sorted(set(found))


def manifests():
    files = tracked("*kaged-plugin.yaml", "*kaged-plugin.base.yaml", "kaged-host-sim/tests/fixtures/manifests/*.yaml")
    return [f.read_text() for f in files]


def sql_statements():
    texts = []
    for f in tracked("kaged-host-sim/storage/tests/storage/*.rs", "kaged-host-sim/storage/src/*.rs", "kaged-host-sim/storage/src/rewrite/*.rs"):
        src = f.read_text()
        texts += re.findall(r'r#"(' + SQL_START + r'.*?)"#', src, re.S)
        texts += [s.replace('\\"', '"') for s in re.findall(r'"(' + SQL_START + r'(?:[^"\\]|\\.)*)"', src)]
    return sorted(set(texts))


def seeds(target):
    if target == "line_codec":
        # First byte: limit 63, chunks of 1..8 bytes; then a transcript.
        msgs = wire_messages()
        stream = "\n".join(msgs[:40]) + "\npartial"
        return [b"\x3f" + stream.encode(), b"\x05" + b"ab\ncdefgh\n\nxyz", b"\xff" + "\n".join(msgs[40:80]).encode()] + [
            b"\x00" + m.encode() for m in msgs[:20]
        ]
    if target == "jsonrpc_classify":
        return [m.encode() for m in wire_messages()]
    if target in ("manifest_parse", "manifest_validate"):
        return [m.encode() for m in manifests()]
    if target == "sql_rewrite":
        return [s.encode() for s in sql_statements()]
    raise KeyError(target)


def write_seeds(target):
    corpus = WORK / "corpus" / target
    corpus.mkdir(parents=True, exist_ok=True)
    items = seeds(target)
    for item in items:
        (corpus / ("seed-" + hashlib.sha1(item).hexdigest())).write_bytes(item)
    return corpus, len(items)


def toolchain():
    listed = subprocess.run(["rustup", "toolchain", "list"], capture_output=True, text=True)
    if listed.returncode == 0 and any(l.startswith("nightly") for l in listed.stdout.splitlines()):
        return ["+nightly"], {}
    return [], {"RUSTC_BOOTSTRAP": "1"}


def run(target, seconds, corpus):
    plus, env_extra = toolchain()
    env = dict(os.environ, CARGO_TARGET_DIR=str(WORK), **env_extra)
    artifacts = WORK / "artifacts" / target
    artifacts.mkdir(parents=True, exist_ok=True)
    fuzz_dir = ROOT / TARGETS[target]
    cmd = ["cargo", *plus, "fuzz", "run", "--fuzz-dir", str(fuzz_dir), target, str(corpus), "--",
           f"-max_total_time={seconds}", f"-artifact_prefix={artifacts}/", "-print_final_stats=1"]
    p = subprocess.run(cmd, cwd=fuzz_dir.parent, env=env, capture_output=True, text=True)
    log = p.stdout + p.stderr
    (WORK / f"{target}.log").write_text(log)
    runs = re.search(r"stat::number_of_executed_units:\s*(\d+)", log)
    cov = re.findall(r"\bcov: (\d+)", log)
    crash = re.search(r"Test unit written to (\S+)", log)
    return {
        "target": target,
        "ok": p.returncode == 0 and not crash,
        "runs": int(runs.group(1)) if runs else 0,
        "cov": int(cov[-1]) if cov else 0,
        "corpus": len(list(corpus.iterdir())),
        "crash": crash.group(1) if crash else None,
        "code": p.returncode,
        # Reproduce with the crash file in place of the corpus.
        "cmd": " ".join(cmd[:cmd.index(str(corpus))]),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("targets", nargs="*", choices=[[], *TARGETS], help="targets to run (default: all)")
    ap.add_argument("--seconds", type=int, default=60, help="time per target (default 60)")
    ap.add_argument("--seeds-only", action="store_true", help="write the seed corpora and stop")
    args = ap.parse_args()
    targets = args.targets or list(TARGETS)
    if not args.seeds_only and shutil.which("cargo-fuzz") is None:
        sys.exit("fuzz: cargo-fuzz is not installed: cargo install cargo-fuzz")
    failed = False
    if not args.seeds_only:
        print(f"{'target':<18} {'seeds':>6} {'runs':>10} {'runs/s':>8} {'cov':>6} {'corpus':>7}  result")
    for t in targets:
        corpus, n = write_seeds(t)
        if n == 0:
            sys.exit(f"fuzz: no seeds found for {t}: the tests it seeds from moved")
        if args.seeds_only:
            print(f"{t:<18} {n:>6}  -> {corpus}")
            continue
        r = run(t, args.seconds, corpus)
        if r["ok"]:
            result = "ok"
        elif r["crash"]:
            result = f"CRASH {r['crash']}\n    reproduce: {r['cmd']} {r['crash']}"
        else:
            result = f"ERROR (exit {r['code']}; see {WORK / (t + '.log')})"
        failed |= not r["ok"]
        print(f"{t:<18} {n:>6} {r['runs']:>10} {r['runs'] // max(args.seconds, 1):>8} {r['cov']:>6} {r['corpus']:>7}  {result}", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
