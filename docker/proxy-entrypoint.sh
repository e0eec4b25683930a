#!/bin/sh
# Start nginx in the foreground with docker/proxy.conf, its @PLACES@ filled in: the port it
# listens on (PORT), the web app's address (APP), and the scheme the public sees, https when
# CODEBLANKS_BASE_URL is an https URL (a TLS terminator in front), else http.
set -eu
[ -n "${PORT:-}" ] && [ -n "${APP:-}" ] || { echo "proxy: set PORT and APP" >&2; exit 1; }
case "${CODEBLANKS_BASE_URL:-}" in https://*) scheme=https ;; *) scheme=http ;; esac
conf=/run/codeblanks-proxy/nginx.conf
sed -e "s|@PORT@|$PORT|g" -e "s|@APP@|$APP|g" -e "s|@SCHEME@|$scheme|g" \
  /etc/nginx/codeblanks.conf.in > "$conf"
exec nginx -e stderr -c "$conf" -g "daemon off;" "$@"
