#!/usr/bin/env bash
# Set up everything codeblanks needs on Debian (as root), then run the main job.
#   scripts/setup.sh [--port P] set up, then run everything locally (codeblanks dev)
#   scripts/setup.sh --no-run   set up only (the test command uses this)
# Idempotent: a second run installs nothing and takes a few seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages, by the command or file that shows each is present
apt_packages=(
  "bwrap:bubblewrap"
  "debootstrap:debootstrap"
  "setpriv:util-linux"
  "dockerd:docker.io"
  "docker-compose:docker-compose"  # docker/build.sh and the deployment tests (compose v1)
  "/usr/bin/chromium:chromium"   # browser tests drive Debian's chromium via Playwright
  "node:nodejs"                  # the editor bundle's reproducibility test rebuilds it
  "npm:npm"
  "redis-server:redis-server"    # the queue's broker; tests start private ones
  "/usr/lib/postgresql/15/bin/initdb:postgresql"  # tests start private clusters
)

missing=()
for entry in "${apt_packages[@]}"; do
  cmd=${entry%%:*} pkg=${entry#*:}
  if ! command -v "$cmd" >/dev/null 2>&1 && [ ! -e "$cmd" ]; then
    [[ " ${missing[*]} " == *" $pkg "* ]] || missing+=("$pkg")
  fi
done
# Docker puts every container under its docker-default AppArmor profile wherever the kernel
# has AppArmor on (Debian 12 and Ubuntu do), and starts none at all when apparmor_parser is
# missing to load it ("AppArmor enabled on system but the docker-default profile could not be
# loaded"): docker.io only recommends the package, and recommends are not installed here
if [ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" = Y ] \
  && [ ! -x /sbin/apparmor_parser ] && [ ! -x /usr/sbin/apparmor_parser ]; then
  missing+=(apparmor)
fi
python=${PYTHON:-python3}
command -v "$python" >/dev/null || missing+=(python3)
if ! "$python" -c 'import venv, ensurepip' >/dev/null 2>&1; then missing+=(python3-venv); fi

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: these Debian packages are missing: ${missing[*]}; run this script as root" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# the virtualenv, reinstalled only when pyproject.toml changes
stamp=.venv/.codeblanks-installed
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ ! -x .venv/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "setup: installing Python packages into .venv"
  [ -x .venv/bin/python ] || "$python" -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check --upgrade pip >/dev/null
  .venv/bin/pip install -q --disable-pip-version-check -e '.[dev]'
  echo "$want" > "$stamp"
fi
# the message catalogs: .po (committed) -> .mo (build output)
bash scripts/i18n.sh compile
# byte-compile our code: PYTHONDONTWRITEBYTECODE machines would otherwise compile on every start
.venv/bin/python -m compileall -q core service workers demo >/dev/null

# the sandbox runtime: a minimal Debian with python3 and numpy (about a minute, once)
bash runtime/build.sh

# the host check: user namespaces, cgroups, seccomp, bubblewrap, the runtime tree, and a cold
# and a warm run timed; a host that fails it cannot grade safely (nor start a worker)
.venv/bin/codeblanks doctor

if [ "${1:-}" != "--no-run" ]; then
  echo "setup: done; starting codeblanks dev (Ctrl-C stops it)"
  exec .venv/bin/codeblanks dev "$@"
fi
