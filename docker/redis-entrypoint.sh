#!/bin/sh
# Start redis-server in the foreground: append-only file in /data, every interface of the
# container (the compose network), and the password from REDIS_PASSWORD in a file of its own.
set -eu
[ -n "${REDIS_PASSWORD:-}" ] || { echo "redis: set REDIS_PASSWORD" >&2; exit 1; }
conf=/run/codeblanks-redis/redis.conf
umask 077
cat > "$conf" <<CONF
bind * -::*
port 6379
dir /data
appendonly yes
appendfsync everysec
daemonize no
logfile ""
requirepass "$REDIS_PASSWORD"
CONF
exec redis-server "$conf" "$@"
