# The two commands README.md opens with. Both do all set-up first (idempotent).
.PHONY: setup demo test
setup:
	@bash scripts/setup.sh
demo: setup
	.venv/bin/fixbot fix examples/one-module
test: setup
	.venv/bin/python -m pytest $(ARGS)
