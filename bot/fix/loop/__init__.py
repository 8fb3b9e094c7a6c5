"""The repair loop: the ranked targets, each in its turn, until the failing tests pass or the time is spent.

In: the run's context (bot/fix/context.py), the reproduction (`Work`, work.py: what the run has found and done),
the options. Out: `Work` with its repairs (`TargetRepair`s), each kept fix verified by the whole suite and the base
of the next target. Modules: targets.py (which target next, the search's sweep over every ranked target, each
target's share of the time and its pass, the steps besides the agent, each fix verified by the whole suite),
turn.py (one target's turn with the agent), deferred.py (a fix that looks wrong waits until nothing else fixes its
tests), progress.py (the agent's progress lines), work.py (the run's state between the steps). Never: a fix kept
that broke a test that passed before; a test file changed; a patch written (bot/fix/verify/ does).
"""
