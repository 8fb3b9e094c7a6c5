"""Which pip commands install a checkout's test environment, read from its declarations (setup.py, setup.cfg,
pyproject.toml, requirements files, tox.ini) without running any of them.

In: a `Checkout` (and the Python the tests run on). Out: an `InstallPlan` (plan.py): pip's own commands, the files
they need, where they came from. Never: the project's setup.py run on the host.
"""
