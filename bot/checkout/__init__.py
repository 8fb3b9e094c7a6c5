"""The user's repository as fixbot reads it: the first step of every run.

In: a path on the host. Out: a `Checkout` (repository.py: the files the sandbox gets, and the checked-out commit's
date) and the rules that say which of its paths are tests (paths.py). Never: a file outside the repository, a
symbolic link followed, `.git` or a virtualenv read, anything written.
"""
