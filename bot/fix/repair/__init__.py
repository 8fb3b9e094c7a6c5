"""Repair: what surrounds the agent for one target in a real repository.

In: a target (or a caller and its helper), the failing tests, the run's context. Out: a `TargetRepair`. Modules:
briefing.py (what the agent is told: the target, the tests' code, the failure), harness.py (a candidate spliced
into its file and run against the blamed tests and the guards, in one sandbox batch), renames.py (a method the tests
call by a new name), missing.py (a stub for a function the tests use and the project lacks), pairs.py (a caller and
its helper repaired together), callees.py (the signatures of what the target calls). The agent itself is
bot/agent/; the loop that gives each target its turn is bot/fix/loop/. Never: a test file changed, a candidate kept
that broke a test that passed.
"""
