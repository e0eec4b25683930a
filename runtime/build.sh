#!/usr/bin/env bash
# Build the sandbox runtime tree: a minimal Debian bookworm with python3 and numpy.
# The bwrap backend mounts it read-only; the Docker runner image is imported from it, so
# expected outputs are produced and checked with one interpreter and one numpy.
# Usage: runtime/build.sh [DIR]   (default /var/lib/codeblanks/runtime/bookworm)
set -euo pipefail
dir=${1:-${CODEBLANKS_RUNTIME_DIR:-/var/lib/codeblanks/runtime/bookworm}}
mirror=${CODEBLANKS_DEBIAN_MIRROR:-http://deb.debian.org/debian}
manifest=codeblanks-runtime.json
# bump to force a rebuild everywhere when the package list changes
recipe="bookworm minbase python3 python3-numpy v1"

if [ -f "$dir/$manifest" ] && grep -qF "\"recipe\": \"$recipe\"" "$dir/$manifest"; then
  echo "runtime: $dir is up to date"
  exit 0
fi
command -v debootstrap >/dev/null || { echo "runtime: debootstrap is missing" >&2; exit 1; }
tmp="$dir.building.$$"
rm -rf "$tmp"
mkdir -p "$(dirname "$dir")"
echo "runtime: building $dir with debootstrap (about a minute)"
debootstrap --variant=minbase --include=python3,python3-numpy bookworm "$tmp" "$mirror" \
  > "$tmp.log" 2>&1 || { tail -20 "$tmp.log" >&2; exit 1; }
rm -f "$tmp.log"
# nothing in the tree may be writable or secret; trim what a run never needs
rm -rf "$tmp"/var/cache/apt/archives/*.deb "$tmp"/var/lib/apt/lists/*
py=$(chroot "$tmp" /usr/bin/python3 -c 'import sys; print(sys.version.split()[0])')
np=$(chroot "$tmp" /usr/bin/python3 -c 'import numpy; print(numpy.__version__)')
printf '{"recipe": "%s", "python": "%s", "numpy": "%s"}\n' "$recipe" "$py" "$np" > "$tmp/$manifest"
chmod -R go-w "$tmp"
rm -rf "$dir"
mv "$tmp" "$dir"
echo "runtime: $dir ready (python $py, numpy $np)"
