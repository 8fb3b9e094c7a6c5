"""The mutation search: one-edit mutants of a function, ranked, screened and confirmed with the real tests.

In: a function's source, the failure's feedback (evidence.py reads what it says: a None used, a regex, an
undefined name), a harness and an optional fast screen. Out: the passing mutants, fewest changed lines first, and a
`SearchRound` record (rounds.py). The families of edits, each in its own module: operators.py (comparisons,
arithmetic, constants, calls, bounds, variables, swaps, deleted statements), strings.py (string literals),
regex.py (regular expressions), guards.py (missing None checks, caught exceptions), names.py (an undefined name),
decoding.py (bytes decoded, text encoded); mutate.py applies and ranks them on a text (text.py). Never: a model
call; an edit of the docstring, a comment or the signature.
"""
