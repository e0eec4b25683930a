#!/usr/bin/env bash
# Build every image of docker-compose.yml on this machine, with no registry:
#   1. the sandbox's runtime tree and its image (runtime/build.sh, runtime/build-image.sh),
#      the base of the runner image and, by default, of the others;
#   2. the app's dependencies as wheels, built by the host's .venv into docker/wheels (a pip
#      inside a build may not trust this network's TLS, nor reach an index at all);
#   3. `docker compose build` (or docker-compose, the v1 command), with BASE.
# Makes .env (or $ENV_FILE) from .env.example, with fresh random passwords, when there is none.
# Usage: docker/build.sh [SERVICE ...]     BASE=debian:bookworm-slim docker/build.sh
set -euo pipefail
cd "$(dirname "$0")/.."

# the compose command: the v2 plugin where it is installed, else Debian's docker-compose (v1)
if docker compose version >/dev/null 2>&1; then
  compose=(docker compose)
elif command -v docker-compose >/dev/null; then
  compose=(docker-compose)
else
  echo "build: neither 'docker compose' nor docker-compose is installed (apt-get install docker-compose)" >&2
  exit 1
fi

env_file=${ENV_FILE:-.env}
if [ ! -f "$env_file" ]; then
  random() { od -An -tx1 -N24 /dev/urandom | tr -d ' \n'; }
  (umask 077 && sed -e "s/^POSTGRES_PASSWORD=.*/POSTGRES_PASSWORD=$(random)/" \
    -e "s/^REDIS_PASSWORD=.*/REDIS_PASSWORD=$(random)/" .env.example > "$env_file")
  echo "build: made $env_file with fresh passwords; check CODEBLANKS_BASE_URL in it"
fi

# a setting from the shell, else from the env file, else the default
setting() {
  local name=$1 default=$2 value
  value=${!name:-}
  [ -n "$value" ] || value=$(sed -n "s/^$name=//p" "$env_file" | tail -1)
  echo "${value:-$default}"
}
BASE=$(setting BASE codeblanks-runtime:bookworm)
# an engine without a default bridge (dockerd --bridge=none) gives build steps no network
if docker network inspect bridge >/dev/null 2>&1; then net=default; else net=host; fi
BUILD_NETWORK=$(setting BUILD_NETWORK "$net")
export BASE BUILD_NETWORK

bash runtime/build.sh
bash runtime/build-image.sh

# the worker's seccomp profile (docker-compose.yml): the engine's own default, from Debian's
# package of Docker's source (not kept in this repo), plus bubblewrap's calls (docker/seccomp.py)
profile=docker/seccomp-worker.json
if [ ! -s "$profile" ] || [ docker/seccomp.py -nt "$profile" ]; then
  echo "build: the worker's seccomp profile, from Docker's default ($profile)"
  docker run --rm --network "$BUILD_NETWORK" codeblanks-runtime:bookworm sh -euc '
    chmod 1777 /tmp && mkdir -p /var/lib/apt/lists/partial && cd /tmp
    { apt-get update -qq && apt-get download -qq golang-github-docker-docker-dev; } >&2
    dpkg-deb --fsys-tarfile golang-github-docker-docker-dev_*.deb |
      tar -xO ./usr/share/gocode/src/github.com/docker/docker/profiles/seccomp/default.json
  ' > "$profile.default"
  python3 docker/seccomp.py "$profile.default" "$profile"
  rm -f "$profile.default"
fi

# wheels for the image's python3 (Debian bookworm's, as in the runtime tree), made again when
# pyproject.toml or this recipe changes
wheels=docker/wheels
want=$(cat pyproject.toml docker/build.sh docker/wheels.py | sha256sum | cut -d' ' -f1)
if [ "$(cat "$wheels/.recipe.sha256" 2>/dev/null)" != "$want" ]; then
  python=.venv/bin/python
  [ -x "$python" ] || { echo "build: no .venv: run scripts/setup.sh first" >&2; exit 1; }
  target=$(docker run --rm --network none codeblanks-runtime:bookworm /usr/bin/python3 -I -c \
    'import platform; print(platform.python_version())')
  host=$("$python" -c 'import platform; print(platform.python_version())')
  if [ "${host%.*}" != "${target%.*}" ]; then
    echo "build: .venv has Python $host, the images have $target: its wheels would not fit" >&2
    exit 1
  fi
  echo "build: the app's dependencies as wheels for Python $target, into $wheels"
  rm -rf "$wheels" && mkdir -p "$wheels"
  # the dependencies and the build backend (the image installs the app itself, editable)
  "$python" - > "$wheels/requirements.txt" <<'PY'
import tomllib
with open("pyproject.toml", "rb") as f:
    project = tomllib.load(f)
print("\n".join([*project["project"]["dependencies"], *project["build-system"]["requires"]]))
# Celery's Redis transport imports `packaging`, which only kombu's "redis" extra brings;
# pyproject.toml names celery without it, and a dev venv hides that (pytest brings packaging)
print("kombu[redis]")
PY
  reqs=(-r "$wheels/requirements.txt")
  for _ in 1 2 3 4 5; do
    "$python" -m pip wheel -q --disable-pip-version-check -w "$wheels" "${reqs[@]}"
    # what only the image's older or newer patch release needs (python_full_version markers)
    mapfile -t reqs < <("$python" docker/wheels.py "$wheels" "$target")
    [ ${#reqs[@]} -gt 0 ] || break
  done
  echo "$want" > "$wheels/.recipe.sha256"
fi

echo "build: ${compose[*]} build (BASE=$BASE, build network $BUILD_NETWORK)"
"${compose[@]}" --env-file "$env_file" build "$@"
