# The two commands README.md opens with. Both do all set-up first (idempotent).
.PHONY: setup demo test lint lock
setup:
	@bash scripts/setup.sh
demo: setup
	.venv/bin/fixbot fix examples/one-module
test: setup
	.venv/bin/python -m pytest $(ARGS)
lint: setup
	.venv/bin/ruff check .
	.venv/bin/mypy
# The pinned, hashed lock files that set-up (dev.lock) and the Action's image (action.lock) install from, resolved
# from pyproject.toml's ranges for Python 3.11 on x86-64 Linux, keeping the pins that still fit. Run after changing
# a dependency (`make lock LOCK_ARGS=--upgrade` moves every pin to the newest release), then commit both files.
LOCK_ARGS ?=
lock: setup
	.venv/bin/uv pip compile pyproject.toml --extra local --extra transformers --extra eval --extra dev \
	  --generate-hashes --python-version 3.11 --python-platform x86_64-unknown-linux-gnu --no-header --quiet \
	  $(LOCK_ARGS) -o requirements/dev.lock
	.venv/bin/uv pip compile pyproject.toml --extra local -c requirements/dev.lock \
	  --generate-hashes --python-version 3.11 --python-platform x86_64-unknown-linux-gnu --no-header --quiet \
	  -o requirements/action.lock
