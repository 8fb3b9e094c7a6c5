"""Code that runs inside fixbot's containers, on the project's Python (3.9 and newer), shipped there as files or
sources: nothing here is imported by fixbot's own process.

import_check.py runs in the build container (the checkout's modules imported after the install). Standard library
only; never anything of `bot`.
"""
