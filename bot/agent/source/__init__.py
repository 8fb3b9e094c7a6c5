"""The code in a model's answer and in a target: code blocks and the functions in them (blocks.py), one function
extracted and checked against the target's name and signature, its AST hash to spot repeats (code.py), a faithful
merge back into the original's text (faithful.py), SEARCH/REPLACE blocks (edit_blocks.py), and a caller and its
helper as one target (parts.py).

In: model text, a target's source. Out: a function's source, or the problem with the answer. Never: a call of the
model, a test run.
"""
