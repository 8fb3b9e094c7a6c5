"""The choice among candidates that pass weak tests (the examples protocol): the vote (select.py) over what
candidates return on more inputs, the model's asserts from the docstring (expectations.py), functions written from
the docstring alone (references.py), the model's likelihood of each (likelihood.py), the original's likely
neighbours (neighbours.py), and the shortlist's vetoes (shortlist.py); a passing fix made minimal (minimize.py).

In: the candidates that pass, the target, the model. Out: the one to keep, and a `Selection` record of why. Never:
a candidate that fails the visible tests chosen over one that passes them.
"""
