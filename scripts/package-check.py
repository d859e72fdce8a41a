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

`--keep` keeps the throwaway workspace and its target directory (by
default both go, so that `target/` stays small).
"""

import json
import pathlib
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


def main():
    keep = "--keep" in sys.argv[1:]
    packages = workspace_members()
    # `publish = false` is an empty list in cargo metadata.
    crates = {p["name"]: p["version"] for p in packages if p["publish"] != []}
    excluded = []
    for p in packages:
        if p["name"] not in crates:
            excluded += ["--exclude", p["name"]]
    run("cargo", "package", "--workspace", "--locked", "--no-verify", *excluded)

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
    (ws / "Cargo.toml").write_text("\n".join(manifest) + "\n")
    # The workspace's versions; cargo drops the entries nothing here uses.
    shutil.copy(ROOT / "Cargo.lock", ws / "Cargo.lock")

    run("cargo", "check", "--workspace", "--lib", "--bins", "--quiet",
        "--target-dir", str(place / "target"), cwd=ws)
    print(f"package check: {len(unpacked)} crates build from their .crate files "
          f"({', '.join(sorted(crates))})", flush=True)
    if not keep:
        shutil.rmtree(place, ignore_errors=True)


if __name__ == "__main__":
    main()
