"""Locate: which spans of project code to blame for the failing tests, best first.

In: the checkout's files, the run before any change (its failures and per-test coverage), the failing tests. Out:
ranked `CodeTarget`s (rank.py), the spans of a module (spans.py: functions, methods, module-level assignments, and
the one place code is put back into a file), the excerpt of a long function the model is shown (excerpt.py).
Never: a test file, a conftest, a test helper or an installed package as a target (project_files.py).
"""
