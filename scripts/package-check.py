#!/usr/bin/env python3
"""Check that the kit's crates build from their `.crate` files.

Usage: scripts/package-check.py [--keep]   (`.ci/run` runs it after the tests)

`cargo package --no-verify` writes every publishable crate's `.crate` (the
examples and the kit's own test crates are `publish = false` and left out),
then every `.crate` is unpacked into one throwaway workspace under
`target/package-check/`, the kit's crates patched to each other's unpacked
copies (as if all came from crates.io), and `cargo check` checks them all,
libraries, binaries and build scripts, with the workspace's `Cargo.lock`
(the same dependency versions).

Every `.crate` must hold both license texts (`LICENSE-MIT`,
`LICENSE-APACHE`). What this catches is what `cargo package`'s own verification catches: a
file the package leaves out (`include`/`exclude`, a `build.rs` or
`include_str!` reaching outside the crate), a path dependency without a
version, a manifest that does not stand alone. It checks the crates
together, in one build, where `cargo package` builds each alone: on two
cores that is minutes instead of seven, since each crate alone compiled
the kit's crates below it again (the kit's crates once each here). What
the together-build could hide, a dependency feature one crate uses but
only another declares, the author-workflow and guide tests cover: they
build the protocol, the SDK, the host crates and the suite as a plugin
and its dev-dependencies do, each with only the features it declares.

The fuzz targets (`*/fuzz`, their own workspaces for `cargo fuzz`) are
checked here too, against the unpacked crates they fuzz, with their lock
files' versions (libFuzzer's C++ is not built: a check links nothing).

It builds into the workspace's own `target/`, with the workspace's
`[profile.dev]`, and checks only what the kit's libraries, binaries and
the fuzz targets need: no dev-dependency (the test build, which is also
clippy's gate in `.ci/run`, compiles everything in build mode, which a
check cannot reuse; until issue 32 a member depending on every crate the
workspace resolves made this check reuse clippy's). `cargo package` runs offline after a `cargo fetch`: online
it asks the index again for every crate.

`--keep` keeps the throwaway workspace (by default it goes).
"""

import json
import os
import pathlib
import tomllib
import shutil
import subprocess
import sys
import tarfile

ROOT = pathlib.Path(__file__).resolve().parent.parent

# The fuzz targets' workspaces, checked with the crates.
FUZZ = ["kaged-plugin-sdk/protocol/fuzz", "kaged-host-sim/fuzz"]

# The license texts every published crate ships (`MIT OR Apache-2.0`).
LICENSES = ["LICENSE-MIT", "LICENSE-APACHE"]



def run(*args, cwd=ROOT, env=None):
    print("+", " ".join(args), flush=True)
    subprocess.run(args, cwd=cwd, env=env, check=True)


def metadata():
    """`cargo metadata` of the workspace (Linux only), after `cargo fetch`:
    its members and every crate it resolves, with their features."""
    out = subprocess.run(
        ["cargo", "metadata", "--locked", "--offline", "--format-version", "1",
         "--filter-platform", "x86_64-unknown-linux-gnu"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout
    return json.loads(out)


def dev_profile():
    """The workspace's `[profile.dev]` (and its per-package overrides) as
    TOML lines: the unpacked crates compile as the workspace's own do."""
    profile = tomllib.loads((ROOT / "Cargo.toml").read_text())["profile"]["dev"]
    lines = []

    def table(name, values):
        lines.append(f"[{name}]")
        for key, value in values.items():
            if not isinstance(value, dict):
                lines.append(f"{key} = {json.dumps(value)}")
        lines.append("")

    table("profile.dev", profile)
    for pkg, values in profile.get("package", {}).items():
        table(f"profile.dev.package.{json.dumps(pkg)}", values)
    return lines


def toml_value(v):
    """A TOML value (strings, booleans, lists, inline tables) as text."""
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return json.dumps(v)


def fuzz_manifest(m, crates):
    """A fuzz crate's manifest `m` (parsed) as a member of the throwaway
    workspace: its path dependencies (the kit's crates) on their unpacked
    copies, no `[workspace]` or profile of its own."""
    lines = ["[package]"]
    lines += [f"{k} = {toml_value(v)}" for k, v in m["package"].items() if k != "metadata"]
    lines += ["", "[dependencies]"]
    for name, spec in m["dependencies"].items():
        if isinstance(spec, dict) and "path" in spec:
            spec = {"path": f"../{name}-{crates[name]}"}
        lines.append(f"{name} = {toml_value(spec)}")
    for b in m.get("bin", []):
        lines += ["", "[[bin]]"] + [f"{k} = {toml_value(v)}" for k, v in b.items()]
    return lines


def lock_with_fuzz_entries():
    """The workspace's `Cargo.lock` plus the fuzz lock files' packages it
    lacks (libFuzzer's bindings): every version as locked somewhere."""
    text = (ROOT / "Cargo.lock").read_text()
    have = set()
    for entry in tomllib.loads(text)["package"]:
        have.add((entry["name"], entry["version"]))
    extra = []
    for fuzz_dir in FUZZ:
        fuzz_lock = (ROOT / fuzz_dir / "Cargo.lock").read_text()
        for block in fuzz_lock.split("\n[[package]]\n")[1:]:
            entry = tomllib.loads(block)
            key = (entry["name"], entry["version"])
            if key not in have and entry.get("source"):
                have.add(key)
                extra.append("[[package]]\n" + block.strip() + "\n")
    return text.rstrip("\n") + "\n\n" + "\n".join(extra)


def main():
    keep = "--keep" in sys.argv[1:]
    run("cargo", "fetch", "--locked", "--quiet")
    for fuzz_dir in FUZZ:
        run("cargo", "fetch", "--locked", "--quiet", "--manifest-path", f"{fuzz_dir}/Cargo.toml")
    meta = metadata()
    packages = [p for p in meta["packages"] if p["id"] in meta["workspace_members"]]
    # `publish = false` is an empty list in cargo metadata.
    crates = {p["name"]: p["version"] for p in packages if p["publish"] != []}
    excluded = []
    for p in packages:
        if p["name"] not in crates:
            excluded += ["--exclude", p["name"]]
    run("cargo", "package", "--workspace", "--locked", "--offline", "--no-verify", *excluded)

    place = ROOT / "target" / "package-check"
    ws = place / "workspace"
    shutil.rmtree(place, ignore_errors=True)
    ws.mkdir(parents=True)
    members = []
    for name, version in sorted(crates.items()):
        dot_crate = ROOT / "target" / "package" / f"{name}-{version}.crate"
        with tarfile.open(dot_crate) as tar:
            tar.extractall(ws, filter="data")
        members.append(f"{name}-{version}")
        # `license = "MIT OR Apache-2.0"`: both texts ship in every crate.
        for text in LICENSES:
            if not (ws / f"{name}-{version}" / text).is_file():
                sys.exit(f"package check: {name}'s .crate lacks {text}")
    fuzzed = []
    for fuzz_dir in FUZZ:
        m = tomllib.loads((ROOT / fuzz_dir / "Cargo.toml").read_text())
        member = m["package"]["name"]
        shutil.copytree(ROOT / fuzz_dir, ws / member,
                        ignore=shutil.ignore_patterns("Cargo.toml", "Cargo.lock", "target",
                                                      "corpus", "artifacts"))
        (ws / member / "Cargo.toml").write_text("\n".join(fuzz_manifest(m, crates)) + "\n")
        members.append(member)
        fuzzed.append(member)

    manifest = ["[workspace]", 'resolver = "2"', "members = ["]
    manifest += [f'    "{m}",' for m in members]
    manifest += ["]", "", "[patch.crates-io]"]
    manifest += [
        f'{name} = {{ path = "{name}-{version}" }}' for name, version in sorted(crates.items())
    ]
    manifest += ["", *dev_profile()]
    (ws / "Cargo.toml").write_text("\n".join(manifest) + "\n")
    # The locked versions; cargo drops the entries nothing here uses.
    (ws / "Cargo.lock").write_text(lock_with_fuzz_entries())

    # A check links nothing, so libFuzzer's C++ (which libfuzzer-sys's
    # build script compiles unless CUSTOM_LIBFUZZER_PATH names a prebuilt
    # library) is not built: the path is never read.
    env = dict(os.environ, CUSTOM_LIBFUZZER_PATH=str(place / "libfuzzer-not-linked.a"))
    run("cargo", "check", "--workspace", "--lib", "--bins", "--quiet", "--offline",
        "--target-dir", str(ROOT / "target"), cwd=ws, env=env)
    print(f"package check: {len(crates)} crates build from their .crate files "
          f"({', '.join(sorted(crates))}); the fuzz targets of {', '.join(fuzzed)} "
          f"compile against them", flush=True)
    if not keep:
        shutil.rmtree(place, ignore_errors=True)


if __name__ == "__main__":
    main()
