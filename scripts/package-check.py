#!/usr/bin/env python3
"""Check that the kit's crates build from their `.crate` files.

Usage: scripts/package-check.py [--keep]

`cargo package --no-verify` writes every publishable crate's `.crate` (the
examples and the kit's own test crates are `publish = false` and left out),
then every `.crate` is unpacked into one throwaway workspace under
`target/package-check/`, the kit's crates patched to each other's unpacked
copies (as if all came from crates.io), and `cargo check` checks them all,
libraries, binaries and build scripts, with the workspace's `Cargo.lock`
(the same dependency versions).

What this catches is what `cargo package`'s own verification catches: a
file the package leaves out (`include`/`exclude`, a `build.rs` or
`include_str!` reaching outside the crate), a path dependency without a
version, a manifest that does not stand alone. It checks the crates
together, in one build, where `cargo package` builds each alone: on two
cores that is minutes instead of seven, since each crate alone compiled
the kit's crates below it again (the kit's crates once each here). What
the together-build could hide, a dependency feature one crate uses but
only another declares, the per-crate builds already cover: the protocol
and host core alone (the fuzz targets' check), a plugin and its
dev-dependency on the suite (the author-workflow and guide tests).

It builds into the workspace's own `target/`, with the workspace's
`[profile.dev]` (copied into the throwaway manifest): every dependency
whose features come out the same is checked once for both, and the build
scripts (SQLite's C among them) run once. `cargo package` runs offline
after a `cargo fetch`: online it asks the index again for every crate.

`--keep` keeps the throwaway workspace (by default it goes).
"""

import json
import pathlib
import tomllib
import shutil
import subprocess
import sys
import tarfile

ROOT = pathlib.Path(__file__).resolve().parent.parent


def run(*args, cwd=ROOT):
    print("+", " ".join(args), flush=True)
    subprocess.run(args, cwd=cwd, check=True)


def workspace_members():
    """The workspace's members, as `cargo metadata` describes them."""
    out = subprocess.run(
        ["cargo", "metadata", "--locked", "--no-deps", "--format-version", "1"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout
    return json.loads(out)["packages"]


def dev_profile():
    """The workspace's `[profile.dev]` (and its per-package overrides) as
    TOML lines: another profile would give every dependency another
    fingerprint, and nothing the tests or clippy built would be reused."""
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


def main():
    keep = "--keep" in sys.argv[1:]
    packages = workspace_members()
    # `publish = false` is an empty list in cargo metadata.
    crates = {p["name"]: p["version"] for p in packages if p["publish"] != []}
    excluded = []
    for p in packages:
        if p["name"] not in crates:
            excluded += ["--exclude", p["name"]]
    run("cargo", "fetch", "--locked", "--quiet")
    run("cargo", "package", "--workspace", "--locked", "--offline", "--no-verify", *excluded)

    place = ROOT / "target" / "package-check"
    ws = place / "workspace"
    shutil.rmtree(place, ignore_errors=True)
    ws.mkdir(parents=True)
    unpacked = []
    for name, version in sorted(crates.items()):
        dot_crate = ROOT / "target" / "package" / f"{name}-{version}.crate"
        with tarfile.open(dot_crate) as tar:
            tar.extractall(ws, filter="data")
        unpacked.append(f"{name}-{version}")

    manifest = ["[workspace]", 'resolver = "2"', "members = ["]
    manifest += [f'    "{m}",' for m in unpacked]
    manifest += ["]", "", "[patch.crates-io]"]
    manifest += [
        f'{name} = {{ path = "{name}-{version}" }}' for name, version in sorted(crates.items())
    ]
    manifest += ["", *dev_profile()]
    (ws / "Cargo.toml").write_text("\n".join(manifest) + "\n")
    # The workspace's versions; cargo drops the entries nothing here uses.
    shutil.copy(ROOT / "Cargo.lock", ws / "Cargo.lock")

    run("cargo", "check", "--workspace", "--lib", "--bins", "--quiet",
        "--target-dir", str(ROOT / "target"), cwd=ws)
    print(f"package check: {len(unpacked)} crates build from their .crate files "
          f"({', '.join(sorted(crates))})", flush=True)
    if not keep:
        shutil.rmtree(place, ignore_errors=True)


if __name__ == "__main__":
    main()
