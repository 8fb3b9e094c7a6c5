"""A variant's functions swapped into the running tests' process: `fixbot_probe_swap`, shipped beside fixbot's
pytest plugin and used by `fixbot_probe_variants` in each variant's forked child.

A variant that differs from the files the process imported in function bodies only (a mutant, a model's sample)
is compiled with the old version of each changed module; comparing their code objects says which functions
changed. Each live function object of an old code object (found through the garbage collector: module functions,
methods, static and class methods, property accessors, closures, and the `from m import f` copies, which are the
same objects) gets the new code object (`function.__code__ = new`), so every reference to it runs the variant.
A function whose lines only moved gets its new code too, so that tracebacks name the variant's lines, which
linecache then shows.

Anything else needs a process of its own (`NeedsProcess`, and the host runs that variant the old way): a change to
code that runs at import (the module's or a class body's: constants, tables, class attributes, decorators,
defaults, new or removed names), a changed function that already ran while the process imported and collected
(what it returned may be held: a decorator, a table, parametrize's arguments; `CallWatch` records what ran), a
closure whose free variables differ, a changed docstring (doctests are collected from it), a module imported
before the watch started, a syntax error, or a live function whose code is not the file's own (rewritten).

Standard library only: this file runs inside the sandbox's Python (3.9+), never on the host.
"""
import cProfile
import dis
import functools
import gc
import importlib.util
import linecache
import os
import sys
import types

FUNCTION = 0x0001 | 0x0002  # CO_OPTIMIZED | CO_NEWLOCALS: a function's body (a module's or a class's runs at import)
LINE_TABLE = "co_linetable" if sys.version_info >= (3, 10) else "co_lnotab"
CODE_MARK = "\0fixbot-code"  # stands for a nested code object when only the code around it is compared
LINE_MARK = "\0fixbot-line"  # stands for the line a class body stores (3.13's __firstlineno__)


class NeedsProcess(Exception):
    """The variant changes what the process already ran, or what cannot be swapped: it needs a process of its own."""


class CallWatch:
    """Which functions run from now until `stop` (cProfile: one entry per code object run, at C speed)."""

    def __init__(self):
        self.before = set(sys.modules)  # imported before the watch: what they ran is unknown
        self._profile = cProfile.Profile()
        try:
            self._profile.enable()
        except ValueError:  # another profiler holds the hook (3.12+)
            self._profile = None

    def stop(self):
        """The code objects that ran (None when the watch could not start)."""
        if self._profile is None:
            return None
        # before 3.12 the profiler is the process's one profile hook: code that set another one stopped the record
        replaced = sys.version_info < (3, 12) and sys.getprofile() is not self._profile
        self._profile.disable()
        if replaced:
            return None
        return [entry.code for entry in self._profile.getstats() if isinstance(entry.code, types.CodeType)]


@functools.cache
def _real(path):
    return os.path.realpath(path)


class Index:
    """The live state of the changed files, taken once in the parent before the first fork (the children share
    it): the modules loaded from each, their live functions, and which of their code objects ran."""

    def __init__(self, paths, before, ran):
        reals = {_real(p) for p in paths}
        self.modules = {}
        for module in list(sys.modules.values()):
            path = getattr(module, "__file__", None)
            if isinstance(path, str) and _real(path) in reals:
                self.modules.setdefault(_real(path), []).append(module)
        self.early = {real for real, modules in self.modules.items() if any(m.__name__ in before for m in modules)}
        self.ran = None if ran is None else {code for code in ran if _real(code.co_filename) in reals}
        self.functions = {}
        for obj in gc.get_objects():
            if type(obj) is types.FunctionType and _real(obj.__code__.co_filename) in reals:
                self.functions.setdefault(_real(obj.__code__.co_filename), []).append(obj)


def apply(index, path, old_source, new_source):
    """Swaps what `new_source` changes from `old_source` (bytes) into the process; NeedsProcess when that would
    not give what a fresh import of `new_source` gives."""
    real = _real(path)
    modules = index.modules.get(real)
    if not modules:
        return  # not imported: an import from here on reads the variant's file, which is on disk now
    if real in index.early:
        raise NeedsProcess("%s was imported before fixbot's probe started" % path)
    filename = modules[0].__file__
    old = compile(old_source, filename, "exec", dont_inherit=True)
    try:
        new = compile(new_source, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        raise NeedsProcess("%s does not compile: %s" % (path, exc)) from None
    changes = {}
    _match(old, new, changes, index.ran, path)
    if changes:
        _swap(index.functions.get(real, ()), changes, set(_walk(old)), path)
    text = importlib.util.decode_source(new_source)
    for name in {m.__file__ for m in modules}:
        # no mtime: linecache.checkcache keeps the entry (the file on disk goes back to the base's afterwards)
        linecache.cache[name] = (len(text), None, text.splitlines(True), name)


def _swap(functions, changes, known, path):
    for function in functions:
        code = function.__code__
        if code not in known:
            raise NeedsProcess("%s: %s is not the file's own code (rewritten?)" % (path, function.__qualname__))
        new = changes.get(code)
        if new is not None:
            function.__code__ = new


def _match(old, new, changes, ran, path):
    """Pairs the old and new code objects of one place; code that ran at import must be the same but for lines."""
    if old.co_flags & FUNCTION == FUNCTION:
        _match_function(old, new, changes, ran, path)
        return
    if _skeleton(old) != _skeleton(new):
        raise NeedsProcess("%s: code that runs at import changed (%s)" % (path, _name(old)))
    for pair in zip(_codes(old), _codes(new)):  # as many: the skeletons are equal
        _match(*pair, changes, ran, path)


def _match_function(old, new, changes, ran, path):
    if old == new and _lines(old) == _lines(new):
        return
    if _norm(old) != _norm(new):  # what it does changed, not only where its lines are
        if ran is None:
            raise NeedsProcess("no record of what ran while the tests were collected")
        if old in ran:
            raise NeedsProcess("%s: %s ran while the tests were collected" % (path, _name(old)))
        if old.co_freevars != new.co_freevars:
            raise NeedsProcess("%s: the variables %s closes over changed" % (path, _name(old)))
        if _doc(old) != _doc(new):
            raise NeedsProcess("%s: the docstring of %s changed" % (path, _name(old)))
    known = changes.setdefault(old, new)
    if known is not new and not (known == new and _lines(known) == _lines(new)):
        raise NeedsProcess("%s: two identical functions of %s change differently" % (path, _name(old)))
    olds, news = _codes(old), _codes(new)
    if len(olds) == len(news):  # else the nested ones never ran (their function did not): nothing holds them
        for pair in zip(olds, news):
            _match_function(*pair, changes, ran, path)


def _name(code):
    return getattr(code, "co_qualname", code.co_name)


def _doc(code):
    first = code.co_consts[0] if code.co_consts else None
    return first if isinstance(first, str) else None


def _codes(code):
    return [c for c in code.co_consts if isinstance(c, types.CodeType)]


def _walk(code):
    yield code
    for nested in _codes(code):
        yield from _walk(nested)


def _lines(code):
    return code.co_firstlineno, getattr(code, LINE_TABLE), tuple(_lines(c) for c in _codes(code))


def _consts(code, nested):
    """The constants, nested code objects replaced by `nested(code)` and a class body's own line by a mark."""
    line = _line_const(code)
    return tuple(LINE_MARK if i == line else nested(c) if isinstance(c, types.CodeType) else c
                 for i, c in enumerate(code.co_consts))


def _norm(code):
    """The code object without its line numbers, nested ones too: equal when only lines moved."""
    return code.replace(co_firstlineno=1, co_consts=_consts(code, _norm), **{LINE_TABLE: b""})


def _skeleton(code):
    """The code object without its line numbers and without the bodies of the code nested in it."""
    return code.replace(co_firstlineno=1, co_consts=_consts(code, lambda c: (CODE_MARK, c.co_name)),
                        **{LINE_TABLE: b""})


def _line_const(code):
    """3.13+: the index of the constant a class body stores as `__firstlineno__`, when nothing else loads it."""
    if "__firstlineno__" not in code.co_names:
        return None
    instructions = list(dis.get_instructions(code))
    for load, store in zip(instructions, instructions[1:]):
        if store.opname == "STORE_NAME" and store.argval == "__firstlineno__" and load.opname == "LOAD_CONST":
            uses = sum(1 for i in instructions if i.opname == "LOAD_CONST" and i.arg == load.arg)
            return load.arg if uses == 1 else None
    return None
