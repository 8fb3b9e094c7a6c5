"""The agent's three designs, each the nodes and routers it adds to the shared graph (bot/agent/graph.py):
reflect.py (draft, test, reflect; the default), thought_patch.py + edits.py + edit_layout.py (a root-cause plan,
then line edits applied by fixbot), tool_call.py (the model calls run_tests itself).

In: the agent's context and state. Out: a `wire(graph)` each. Never: a node of another design.
"""
