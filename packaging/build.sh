#!/usr/bin/env bash
# packaging/build.sh TARGET OUT [MATURIN_ARGS...]: one platform's release artefacts in OUT:
#   wheels/streamcheck_cli-VERSION-*.whl    the PyPI wheel (maturin, bindings "bin")
#   npm/streamcheck-OS-CPU-VERSION.tgz      the npm package of the platform (@streamcheck/OS-CPU)
#   npm/streamcheck-VERSION.tgz             the npm launcher package (the same on every platform)
#   binstall/streamcheck-TARGET.tar.gz      what `cargo binstall streamcheck` fetches
# All of them carry the one binary maturin built (release profile, stripped). maturin must be
# on PATH (packaging/requirements-maturin.txt); the release workflow passes
# `--zig --compatibility manylinux2014` for Linux. TARGET is a Rust target triple; on the
# host's own triple no --target is given, so the build is cargo's target/release.
set -euo pipefail
target=$1 out=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
case $target in
  x86_64-unknown-linux-gnu) npm=linux-x64 ;;
  aarch64-unknown-linux-gnu) npm=linux-arm64 ;;
  x86_64-apple-darwin) npm=darwin-x64 ;;
  aarch64-apple-darwin) npm=darwin-arm64 ;;
  *) echo "build.sh: no npm package for $target (packaging/npm/)" >&2; exit 2 ;;
esac
command -v maturin >/dev/null || {
  echo "build.sh: maturin is not on PATH (pip install --require-hashes -r packaging/requirements-maturin.txt)" >&2
  exit 2
}
cross=(--target "$target")
[ "$(rustc -vV | sed -n 's/^host: //p')" = "$target" ] && cross=()

mkdir -p "$out/wheels" "$out/npm" "$out/binstall"
out=$(cd "$out" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

maturin build --release --locked "${cross[@]}" -m "$here/../harness/Cargo.toml" --out "$stage/wheels" "$@"
wheel=$(echo "$stage"/wheels/*.whl)
python3 -m zipfile -e "$wheel" "$stage/wheel"
binary=$(echo "$stage"/wheel/*.data/scripts/streamcheck)
mv "$wheel" "$out/wheels/"

cp -R "$here/npm/$npm" "$stage/$npm"
mkdir -p "$stage/$npm/bin" "$stage/streamcheck-$target"
install -m 755 "$binary" "$stage/$npm/bin/streamcheck"
npm pack --silent "$stage/$npm" --pack-destination "$out/npm" >/dev/null
npm pack --silent "$here/npm/streamcheck" --pack-destination "$out/npm" >/dev/null

install -m 755 "$binary" "$stage/streamcheck-$target/streamcheck"
tar -C "$stage" -czf "$out/binstall/streamcheck-$target.tar.gz" "streamcheck-$target"
ls -l "$out"/wheels/*.whl "$out"/npm/*.tgz "$out/binstall/streamcheck-$target.tar.gz"
