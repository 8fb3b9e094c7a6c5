"""What the three designs share: the model call and the checks of its answer, the test node, the search node, the
budgets and routers (nodes.py), the prompts (prompts.py) and the linter's note of locals never read (unused.py).

In: the agent's context and state. Out: state updates, and the messages each design sends. Never: a design's own
wiring (bot/agent/designs/), a choice among candidates that pass (bot/agent/choose/).
"""
