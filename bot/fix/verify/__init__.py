"""Verify and report: the one unified diff of the kept fixes (patch.py: made with difflib, checked by unidiff and
`git apply --check`, never outside the targets' files), and the report of what was done.

In: the checkout's files before and after. Out: the diff, or PatchRejected. Never: a change of a test file, a line
changed that no fix changed (every other line stays byte-identical).
"""
