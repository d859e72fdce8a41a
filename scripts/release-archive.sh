#!/usr/bin/env bash
# Pack the kit's command-line tools for one target as the archives a GitHub
# release carries and `cargo binstall` fetches (each crate's
# [package.metadata.binstall] names them): $DIST/NAME-TARGET.tar.gz (DIST
# defaults to dist) holding NAME-TARGET/BIN, LICENSE-MIT and LICENSE-APACHE.
#
#   scripts/release-archive.sh TARGET            # cargo build --release --locked --target TARGET
#   scripts/release-archive.sh TARGET BIN_DIR    # pack the binaries already in BIN_DIR
#
# .github/workflows/release.yml runs the first form on every tag `v*`;
# conformance/tests/release.rs runs the second on the test build's binaries
# (with GZIP_LEVEL=1: a quick pack; releases get 9).
set -euo pipefail
cd "$(dirname "$0")/.."
target="${1:?usage: scripts/release-archive.sh TARGET [BIN_DIR]}"
bin_dir="${2:-}"
# package:binary, one archive each.
tools=(kaged-conformance:kaged-conformance kaged-host-sim:kaged-host-sim cargo-kaged:cargo-kaged)
if [ -z "$bin_dir" ]; then
    packages=()
    for t in "${tools[@]}"; do packages+=(-p "${t%%:*}"); done
    cargo build --release --locked --target "$target" "${packages[@]}"
    bin_dir="target/$target/release"
fi
dist="${DIST:-dist}"
mkdir -p "$dist"
for t in "${tools[@]}"; do
    name="${t%%:*}" bin="${t##*:}"
    if [ ! -x "$bin_dir/$bin" ]; then
        echo "release-archive: $bin_dir/$bin is missing" >&2
        exit 1
    fi
    stage="$(mktemp -d)"
    mkdir "$stage/$name-$target"
    cp "$bin_dir/$bin" LICENSE-MIT LICENSE-APACHE "$stage/$name-$target/"
    tar -C "$stage" -cf - "$name-$target" | gzip -"${GZIP_LEVEL:-9}" > "$dist/$name-$target.tar.gz"
    rm -rf "$stage"
    echo "$dist/$name-$target.tar.gz"
done
