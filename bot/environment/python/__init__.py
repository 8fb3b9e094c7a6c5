"""Which Python a repository's tests run on: the versions its CI and metadata name, mapped to the ones fixbot has a
sandbox base for (choice.py), read from the files that name them (sources.py, workflow.py).

In: a `Checkout` and what the user or the failing CI job said. Out: a `PythonChoice` (the version, and why). Never:
a version fixbot has no base for; a floor-only specifier outranking the versions the CI tested.
"""
