#!/bin/sh
# Run the command as the unprivileged codeblanks user. Where the Docker socket is mounted (the
# worker), add the socket's group so that the docker CLI reaches the engine; that access is
# root-equivalent on the engine's host (docs/operations.md, "The Docker socket").
set -eu
if [ "$(id -u)" != 0 ]; then
  exec "$@"
fi
# a named volume starts with the image's owner and mode; a bind mount may not
install -d -o codeblanks -g codeblanks -m 0700 "${CODEBLANKS_INSTANCE_DIR:-/var/lib/codeblanks/instance}"
groups=$(id -g codeblanks)
if [ -S /var/run/docker.sock ]; then
  groups="$groups,$(stat -c %g /var/run/docker.sock)"
fi
exec setpriv --reuid=codeblanks --regid=codeblanks --groups="$groups" \
  --inh-caps=-all --bounding-set=-all -- "$@"
