# The reverse proxy in front of the web app (docker-compose.yml): Debian's nginx, which reads
# every request whole, under its own deadlines, before the app sees it, and sends the answers
# on to slow readers itself. Its configuration is docker/proxy.conf, its ports and public
# scheme filled in at start by docker/proxy-entrypoint.sh; it runs as www-data.
ARG BASE=debian:bookworm-slim
FROM ${BASE}
# a runtime tree imported as BASE has a /tmp that apt's unprivileged helper cannot write
RUN chmod 1777 /tmp /var/tmp \
 && mkdir -p /var/lib/apt/lists/partial \
 && apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      nginx-light >/dev/null \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb /etc/nginx/sites-enabled/* \
 && install -d -o www-data -g www-data -m 0750 /run/codeblanks-proxy
COPY proxy.conf /etc/nginx/codeblanks.conf.in
COPY proxy-entrypoint.sh /usr/local/bin/
USER www-data
ENTRYPOINT ["/usr/local/bin/proxy-entrypoint.sh"]
