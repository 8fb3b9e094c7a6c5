# The two commands README.md opens with. Both do all set-up first (idempotent).
.PHONY: setup demo test lint
setup:
	@bash scripts/setup.sh
demo: setup
	.venv/bin/fixbot fix examples/one-module
test: setup
	.venv/bin/python -m pytest $(ARGS)
lint: setup
	.venv/bin/ruff check .
	.venv/bin/mypy
