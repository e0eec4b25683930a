# PostgreSQL for docker-compose.yml: Debian's postgresql, its cluster in /var/lib/postgresql/data
# (a volume), made on first start with the password from POSTGRES_PASSWORD, run in the
# foreground as the postgres user.
ARG BASE=debian:bookworm-slim
FROM ${BASE}
# a runtime tree imported as BASE has a /tmp that apt's unprivileged helper cannot write;
# postgresql-common is told not to make a cluster of its own at install time
RUN chmod 1777 /tmp /var/tmp \
 && mkdir -p /var/lib/apt/lists/partial \
 && apt-get update -qq \
 && export DEBIAN_FRONTEND=noninteractive \
 && apt-get install -y -qq --no-install-recommends postgresql-common >/dev/null \
 && sed -ri 's/#(create_main_cluster) .*$/\1 = false/' /etc/postgresql-common/createcluster.conf \
 && apt-get install -y -qq --no-install-recommends postgresql >/dev/null \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb \
 && ln -s "$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)" /usr/local/lib/postgresql-bin \
 && install -d -o postgres -g postgres -m 0700 /var/lib/postgresql/data \
 && install -d -o postgres -g postgres -m 2775 /run/postgresql
COPY postgres-entrypoint.sh /usr/local/bin/
ENV PATH=/usr/local/lib/postgresql-bin:/usr/local/bin:/usr/bin:/bin \
    PGDATA=/var/lib/postgresql/data
USER postgres
EXPOSE 5432
# SIGINT is PostgreSQL's fast shutdown: sessions end, the data is checkpointed
STOPSIGNAL SIGINT
ENTRYPOINT ["/usr/local/bin/postgres-entrypoint.sh"]
