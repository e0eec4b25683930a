#!/bin/sh
# Start PostgreSQL in the foreground. On first start (an empty $PGDATA) make the cluster: the
# superuser POSTGRES_USER with the password POSTGRES_PASSWORD (scram-sha-256 over TCP, from
# any address of the compose network) and the database POSTGRES_DB.
set -eu
user=${POSTGRES_USER:-codeblanks}
db=${POSTGRES_DB:-$user}
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  [ -n "${POSTGRES_PASSWORD:-}" ] || { echo "postgres: set POSTGRES_PASSWORD" >&2; exit 1; }
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
  initdb -D "$PGDATA" -U "$user" --pwfile="$pwfile" -E UTF8 --locale=C.UTF-8 \
    --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$pwfile"
  printf 'host all all all scram-sha-256\n' >> "$PGDATA/pg_hba.conf"
  # on the socket only (trusted: it is inside this container) while the database is made, so
  # that no client connects before it exists
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
  psql -v ON_ERROR_STOP=1 -q -U "$user" -d postgres -c "CREATE DATABASE \"$db\""
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  echo "postgres: made the cluster in $PGDATA with the database $db"
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' "$@"
