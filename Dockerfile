# The GitHub Action's image. The base is configurable: python:3.11-slim-bookworm where a registry is reachable,
# or the offline-bootstrapped sandbox base (`--build-arg BASE=fixbot-sandbox:<tag>`) on machines without one.
# Sandbox containers run as siblings through the runner's mounted /var/run/docker.sock; files reach them through
# the Docker API, never bind mounts. (The `fixbot ci` entry point arrives with the Action's issue.)
ARG BASE=python:3.11-slim-bookworm
FROM ${BASE}
USER root
COPY pyproject.toml README.md /opt/fixbot/
COPY bot /opt/fixbot/bot
COPY sandbox /opt/fixbot/sandbox
COPY eval /opt/fixbot/eval
RUN python3 -m venv /opt/venv && /opt/venv/bin/pip install --no-cache-dir /opt/fixbot
ENV PATH=/opt/venv/bin:$PATH
ENTRYPOINT ["fixbot"]
CMD ["--help"]
