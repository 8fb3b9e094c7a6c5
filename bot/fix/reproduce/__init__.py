"""Reproduce: the test command, the whole suite run in the sandbox, and why each failing test fails.

In: the checkout's files, the test command, the run's context (bot/fix/context.py). Out: `Reproduced`
(runs.py: the run before any change with per-test coverage, the tests to repair, and those set aside: flaky, the
network's and services', missing programs', the environment's causes). Modules: command.py + command_env.py +
unittest_cmd.py (the command), testrun.py (one pytest run in the sandbox, read back), by_module.py (a suite too slow
or too big as a whole), broken_conftest.py, classify.py (environment or code), hold_back.py and env_retry.py
(another environment where the failures are the environment's). Never: a change to the code, a repair, a model call.
"""
