# Redis for docker-compose.yml: Debian's redis-server, append-only persistence in /data (a
# volume), a password from REDIS_PASSWORD (kept out of the command line), as the redis user.
ARG BASE=debian:bookworm-slim
FROM ${BASE}
# a runtime tree imported as BASE has a /tmp that apt's unprivileged helper cannot write
RUN chmod 1777 /tmp /var/tmp \
 && mkdir -p /var/lib/apt/lists/partial \
 && apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      redis-server >/dev/null \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb \
 && install -d -o redis -g redis -m 0750 /data /run/codeblanks-redis
COPY redis-entrypoint.sh /usr/local/bin/
USER redis
WORKDIR /data
EXPOSE 6379
ENTRYPOINT ["/usr/local/bin/redis-entrypoint.sh"]
