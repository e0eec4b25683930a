#!/usr/bin/env bash
# Build the Docker runner image from the runtime tree (runtime/build.sh), with no registry:
# the tree is imported as the base image, so the image's python3 and numpy are the tree's.
# The base is imported again only when the tree's manifest changes; the build is cached.
# Usage: runtime/build-image.sh [TREE]   (default /var/lib/codeblanks/runtime/bookworm)
# The runner's tag is $CODEBLANKS_RUNNER_IMAGE (the worker's setting, default
# codeblanks-runner:latest); the base's is codeblanks-runtime:<the tree's dir name>, so a tree
# built elsewhere (CODEBLANKS_RUNTIME_DIR=.../bookworm-next) never replaces the images in use.
set -euo pipefail
cd "$(dirname "$0")"
dir=${1:-${CODEBLANKS_RUNTIME_DIR:-/var/lib/codeblanks/runtime/bookworm}}
base=codeblanks-runtime:$(basename "$dir")
runner=${CODEBLANKS_RUNNER_IMAGE:-codeblanks-runner:latest}
label=org.codeblanks.runtime-manifest

[ -f "$dir/codeblanks-runtime.json" ] || { echo "image: no runtime tree at $dir (run runtime/build.sh)" >&2; exit 1; }
docker info >/dev/null 2>&1 || { echo "image: the docker daemon is not reachable" >&2; exit 1; }
want=$(sha256sum "$dir/codeblanks-runtime.json" | cut -d' ' -f1)
have=$(docker image inspect --format "{{index .Config.Labels \"$label\"}}" "$base" 2>/dev/null || true)
if [ "$have" != "$want" ]; then
  echo "image: importing $dir as $base"
  tar -C "$dir" -c . | docker import --change "LABEL $label=$want" - "$base" >/dev/null
fi
# the legacy builder is enough (no RUN step) and is all that Debian's docker.io ships;
# its deprecation notice goes to stderr, so only failures are shown
if ! out=$(DOCKER_BUILDKIT=0 docker build -q --build-arg "BASE=$base" -t "$runner" . 2>&1); then
  echo "$out" >&2
  exit 1
fi
echo "image: $runner ready ($(docker image inspect --format '{{.Id}}' "$runner" | cut -c8-19))"
