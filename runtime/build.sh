#!/usr/bin/env bash
# Build the sandbox runtime tree: a minimal Debian bookworm with python3, numpy and matplotlib.
# The bwrap backend mounts it read-only; the Docker runner image is imported from it, so
# expected outputs are produced and checked with one interpreter and one numpy.
# Usage: runtime/build.sh [DIR]   (default /var/lib/codeblanks/runtime/bookworm)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-${CODEBLANKS_RUNTIME_DIR:-/var/lib/codeblanks/runtime/bookworm}}
mirror=${CODEBLANKS_DEBIAN_MIRROR:-http://deb.debian.org/debian}
manifest=codeblanks-runtime.json
# bump to force a rebuild everywhere when the package list changes
recipe="bookworm minbase python3 python3-numpy python3-matplotlib, no GUI, v2"
# how a run draws (runtime/codeblanks_drawing.py): put in place again whenever it changes
hook=$here/codeblanks_drawing.py
drawing=$(sha256sum "$hook" | cut -c1-16)
site=usr/lib/python3/dist-packages

install_hook() {  # $1: the tree
  install -m 0644 "$hook" "$1/$site/codeblanks_drawing.py"
  echo "import codeblanks_drawing" > "$1/$site/codeblanks_drawing.pth"
  chmod 0644 "$1/$site/codeblanks_drawing.pth"
  chroot "$1" /usr/bin/python3 -c \
    'import py_compile; py_compile.compile("/usr/lib/python3/dist-packages/codeblanks_drawing.py")'
}

write_manifest() {  # $1: the tree
  local py np mpl
  py=$(chroot "$1" /usr/bin/python3 -c 'import sys; print(sys.version.split()[0])')
  np=$(chroot "$1" /usr/bin/python3 -c 'import numpy; print(numpy.__version__)')
  mpl=$(chroot "$1" /usr/bin/python3 -c 'import matplotlib; print(matplotlib.__version__)')
  printf '{"recipe": "%s", "python": "%s", "numpy": "%s", "matplotlib": "%s", "drawing": "%s"}\n' \
    "$recipe" "$py" "$np" "$mpl" "$drawing" > "$1/$manifest.new"
  mv "$1/$manifest.new" "$1/$manifest"
  rm -rf "$1/root/.config" "$1/root/.cache"  # what importing matplotlib as root left
}

if [ -f "$dir/$manifest" ] && grep -qF "\"recipe\": \"$recipe\"" "$dir/$manifest"; then
  if grep -qF "\"drawing\": \"$drawing\"" "$dir/$manifest"; then
    echo "runtime: $dir is up to date"
    exit 0
  fi
  install_hook "$dir"
  write_manifest "$dir"
  echo "runtime: $dir has the new drawing hook ($drawing)"
  exit 0
fi
command -v debootstrap >/dev/null || { echo "runtime: debootstrap is missing" >&2; exit 1; }
command -v dpkg-deb >/dev/null || { echo "runtime: dpkg-deb is missing" >&2; exit 1; }
tmp="$dir.building.$$"
rm -rf "$tmp" "$tmp.omits"
mkdir -p "$(dirname "$dir")"
echo "runtime: building $dir with debootstrap (about two minutes)"
debootstrap --variant=minbase --include=python3,python3-numpy bookworm "$tmp" "$mirror" \
  > "$tmp.log" 2>&1 || { tail -20 "$tmp.log" >&2; exit 1; }
# matplotlib without a GUI toolkit: Debian's package depends on Tk (python3-pil.imagetk) and
# its fonttools on sympy, lxml and the Unicode database (120 MB), which only windows, PDF
# subsetting and font editing use. One empty package of ours provides them, so apt installs
# none and the tree's package database stays whole (the app's images apt-get on top of it).
mkdir -p "$tmp.omits/DEBIAN"
cat > "$tmp.omits/DEBIAN/control" <<'CONTROL'
Package: codeblanks-runtime-omits
Version: 1
Architecture: all
Maintainer: codeblanks <codeblanks@localhost>
Provides: python3-pil.imagetk (= 9.4.0-1.1+deb12u1), libjs-jquery (= 3.6.1+dfsg+~3.5.14-1), libjs-jquery-ui (= 1.13.2+dfsg-1), python3-sympy (= 1.11.1-1), python3-lxml (= 4.9.2-1+b1), unicode-data (= 15.0.0-1), python3-fs (= 2.4.16-2), python3-lz4 (= 4.0.2+dfsg-1+b2), python3-ufolib2 (= 0.14.0+dfsg1-1)
Description: what the codeblanks sandbox runtime leaves out on purpose
 A GUI toolkit (Tk), jQuery, and the font tools' extras that only windows, PDF and PS
 subsetting and font editing use: a run draws with Agg, to PNG.
CONTROL
dpkg-deb --build "$tmp.omits" "$tmp/tmp/omits.deb" >> "$tmp.log"
rm -rf "$tmp.omits"
{
  chroot "$tmp" dpkg -i /tmp/omits.deb
  # munkres first: fonttools takes it or scipy (and scipy brings a compiler)
  DEBIAN_FRONTEND=noninteractive chroot "$tmp" apt-get install -y -q --no-install-recommends \
    -o Dpkg::Use-Pty=0 python3-munkres python3-matplotlib
} >> "$tmp.log" 2>&1 || { tail -20 "$tmp.log" >&2; exit 1; }
rm -f "$tmp.log" "$tmp/tmp/omits.deb"
# nothing in the tree may be writable or secret; trim what a run never needs
rm -rf "$tmp"/var/cache/apt/archives/*.deb "$tmp"/var/cache/apt/*.bin "$tmp"/var/lib/apt/lists/*
rm -rf "$tmp"/usr/share/doc "$tmp"/usr/share/man "$tmp"/usr/share/info "$tmp"/usr/share/locale
find "$tmp/$site" -type d -name tests -prune -exec rm -rf {} +
# matplotlib's font list, built once here (a run would take about a second to scan the fonts):
# the drawing hook copies it into each run's own $MPLCONFIGDIR
mkdir -p "$tmp/usr/share/codeblanks/matplotlib"
chroot "$tmp" env MPLCONFIGDIR=/usr/share/codeblanks/matplotlib \
  MATPLOTLIBRC=/usr/share/matplotlib/mpl-data/matplotlibrc \
  /usr/bin/python3 -c 'import matplotlib.font_manager'
ls "$tmp"/usr/share/codeblanks/matplotlib/fontlist-v*.json >/dev/null
install_hook "$tmp"
write_manifest "$tmp"
chmod -R go-w "$tmp"
rm -rf "$dir"
mv "$tmp" "$dir"
echo "runtime: $dir ready ($(tr -d '{}"\n' < "$dir/$manifest"))"
