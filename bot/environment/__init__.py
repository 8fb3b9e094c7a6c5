"""The test environment as the project's CI builds it: which Python, what pip installs, the build container, and
the retries of a build that fails; cached as an image the tests run in.

In: a `Checkout` and an `EnvRequest` (what the user said: a Python, set-up commands, a date). Out: an
`Environment` (prepare.py: the image, the Python chosen and why, the lock). Steps: python/ (which Python), install/
(which pip commands), build.py (one build in a container that reaches only the package index), dated.py (as of a
date), drift.py (dependencies newer than the project), generated.py (modules the build wrote that the tests
import). Never: the project's code left installed in the image (it comes from the checkout in every run), a host
mount, a token, or a connection to anything but the package index.
"""
