# The web and worker image (docker-compose.yml): Debian's python3, the app's dependencies from
# wheels built on the host (docker/build.sh), the app's source installed editable (its
# templates, static files, migrations and lessons are read from /app), bubblewrap and the
# sandbox's runtime tree for the worker's warm pool, and the docker CLI that the optional
# `docker` sandbox backend runs. No pip install reaches an index from in here.
ARG BASE=debian:bookworm-slim
# the sandbox's runtime tree as an image (runtime/build.sh, runtime/build-image.sh): every
# lesson was checked with its python3 and numpy
ARG RUNTIME=codeblanks-runtime:bookworm

FROM ${RUNTIME} AS runtime

# the virtualenv, in a stage of its own so that the wheels stay out of the final image
FROM ${BASE} AS venv
# a runtime tree imported as BASE has a /tmp that apt's unprivileged helper cannot write
RUN chmod 1777 /tmp /var/tmp \
 && mkdir -p /var/lib/apt/lists/partial \
 && apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      python3 python3-venv >/dev/null \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
COPY docker/wheels /wheels
RUN python3 -m venv /opt/codeblanks \
 && /opt/codeblanks/bin/pip install -q --no-index --no-cache-dir --disable-pip-version-check \
      /wheels/*.whl

FROM ${BASE}
# python3 for the app; bubblewrap for the warm and bwrap sandboxes; only the client binary of
# Debian's docker package (bookworm's docker.io, or docker-cli where it exists), not a daemon:
# the `docker` backend's worker talks to the host's engine
RUN chmod 1777 /tmp /var/tmp \
 && mkdir -p /var/lib/apt/lists/partial \
 && apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      python3 ca-certificates bubblewrap >/dev/null \
 && cli=docker.io && if apt-cache show docker-cli >/dev/null 2>&1; then cli=docker-cli; fi \
 && cd /tmp && apt-get download -qq "$cli" \
 && dpkg-deb --fsys-tarfile "$cli"_*.deb | tar -x -C / ./usr/bin/docker \
 && rm -f /tmp/*.deb && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb \
 && docker --version >/dev/null
RUN useradd --system --uid 10001 --user-group --home-dir /var/lib/codeblanks \
      --shell /usr/sbin/nologin codeblanks \
 && install -d -o codeblanks -g codeblanks -m 0711 /var/lib/codeblanks \
 && install -d -o codeblanks -g codeblanks -m 0700 /var/lib/codeblanks/instance
COPY --from=venv /opt/codeblanks /opt/codeblanks
# where workers/sandbox/runtime.py looks for it (CODEBLANKS_RUNTIME_DIR's default); the
# sandbox's uids reach it through the codeblanks home, which they may cross (0711), not list
COPY --from=runtime / /var/lib/codeblanks/runtime/bookworm/
COPY pyproject.toml README.md /app/
COPY core /app/core
COPY workers /app/workers
COPY service /app/service
COPY demo /app/demo
COPY lessons /app/lessons
COPY docker/app-entrypoint.sh /app/docker/
RUN /opt/codeblanks/bin/pip install -q --no-index --no-cache-dir --disable-pip-version-check \
      --no-deps --no-build-isolation -e /app \
 && /opt/codeblanks/bin/pybabel compile -d /app/service/web/translations -D messages \
 && /opt/codeblanks/bin/python -m compileall -q /app/core /app/service /app/workers /app/demo
ENV PATH=/opt/codeblanks/bin:/usr/local/bin:/usr/bin:/bin \
    PYTHONUNBUFFERED=1 \
    HOME=/var/lib/codeblanks \
    CODEBLANKS_INSTANCE_DIR=/var/lib/codeblanks/instance \
    CODEBLANKS_LESSONS_DIR=/app/lessons
WORKDIR /var/lib/codeblanks
ENTRYPOINT ["/app/docker/app-entrypoint.sh"]
CMD ["codeblanks", "serve", "--host", "0.0.0.0", "--port", "8000"]
