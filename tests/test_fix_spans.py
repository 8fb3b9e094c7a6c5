"""bot.fix.locate.spans: function spans from the AST, a best guess in a module that does not parse, line-exact
splicing."""
from __future__ import annotations

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.fix.locate.spans import (
    Span,
    broken_span,
    code_spans,
    enclosing_span,
    function_source,
    function_spans,
    lines_of,
    replace_span,
    splice,
)

MODULE = '''\
import functools


def plain(x):
    def inner(y):
        return y + 1
    return inner(x)


class Outer:
    attr = 1

    @staticmethod
    @functools.lru_cache(
        maxsize=None)
    def cached(x):
        return x

    class Inner:
        async def run(self):
            """Doc
with a column-0 line."""
            return 1

    if True:
        def conditional(self):
            return 2


x = plain(1)
'''


def test_function_spans_cover_methods_nesting_and_decorators():
    assert function_spans(MODULE) == [
        Span("plain", 4, 7),
        Span("Outer.cached", 13, 17),
        Span("Outer.Inner.run", 20, 23),
        Span("Outer.conditional", 26, 27),
    ]


@pytest.mark.parametrize(("line", "qualname"), [
    (6, "plain"), (13, "Outer.cached"), (15, "Outer.cached"), (22, "Outer.Inner.run"), (27, "Outer.conditional"),
    (11, None), (30, None), (1, None),
])
def test_enclosing_span(line, qualname):
    span = enclosing_span(MODULE, line)
    assert (span.qualname if span else None) == qualname


def test_enclosing_span_of_a_module_that_does_not_parse_is_none():
    assert enclosing_span("def f(:\n    return 1\n", 2) is None


def syntax_error_line(source: str) -> int:
    with pytest.raises(SyntaxError) as info:
        compile(source, "m.py", "exec")
    return info.value.lineno


BROKEN = {
    # name: (source, expected span); Python 3.11's own line is what pytest reports
    "missing colon": ("import os\n\n\ndef f(x)\n    return x\n\n\ndef g():\n    return 2\n", Span("f", 4, 5)),
    "unclosed parenthesis": (
        "def f(x):\n    y = g(x\n    return y\n\n\ndef h():\n    return 1\n", Span("f", 1, 3)),
    "unclosed paren on the last line": ("def f(x):\n    return g(x\n", Span("f", 1, 2)),
    "method, missing colon": (
        "class A:\n    class B:\n        @property\n        async def m(self)\n            return 1\n\n"
        "    def n(self):\n        return 2\n", Span("A.B.m", 3, 5)),
    "bracket in method": ("class A:\n    def m(self):\n        return [1, 2\n\n    def n(self):\n        return 3\n",
                          Span("A.m", 2, 3)),
    "forgot a comma": ("def f():\n    return [1\n            2]\n\nx = 1\n", Span("f", 1, 3)),
    "body not indented": ("def f(x):\nreturn x\n\n\ndef g():\n    pass\n", Span("f", 1, 2)),
    "unindent in a method": ("class A:\n    def m(self):\n        x = 1\n  y = 2\n", Span("A.m", 2, 3)),
    "column-0 string above the error": ('def f():\n    s = """\nabc\n"""\n    return s +\n', Span("f", 1, 5)),
    "nested def": ("def f():\n    def g(:\n        pass\n    return g\n", Span("f", 1, 4)),
    "unclosed decorator": ("@dec(1\ndef f():\n    pass\n", Span("f", 1, 3)),
    "multi-line header": ("def f(a,\n      b)\n    return a\n", Span("f", 1, 3)),
}


@pytest.mark.parametrize("name", BROKEN)
def test_broken_span(name):
    source, expected = BROKEN[name]
    assert broken_span(source, syntax_error_line(source)) == expected


def test_broken_span_when_an_older_python_reports_the_line_after_an_unclosed_bracket():
    source = "def f(x):\n    return g(x\n\ndef h():\n    return 1\n"
    assert syntax_error_line(source) == 2
    assert broken_span(source, 4) == Span("f", 1, 2)  # Python 3.8 names `def h():`; our compiler knows better


def test_broken_span_outside_any_function_is_none():
    assert broken_span("def f():\n    return 1\n\nx = = 2\n", 4) is None
    assert broken_span("class A:\n    x = = 1\n", 2) is None
    assert broken_span("", 1) is None


def test_replace_span_reindents_a_method_and_keeps_every_other_byte():
    source = "class A:\n    def m(self):\n        return 1\n\n    def n(self):\n        return 2\n"
    new = replace_span(source, Span("A.m", 2, 3), "def m(self):\n    x = 2\n\n    return x\n")
    assert new == ("class A:\n    def m(self):\n        x = 2\n\n        return x\n"
                   "\n    def n(self):\n        return 2\n")


def test_replace_span_keeps_whitespace_only_lines_it_does_not_change():
    """Dedenting empties a whitespace-only line, inside a docstring too; the fix's diff must not show it."""
    source = "class A:\n    def m(self):\n        '''Doc.\n        \n        More.'''\n        \n        return 1\n"
    own = textwrap.dedent("".join(source.splitlines(keepends=True)[1:]))  # its blank lines emptied
    assert "\n\n" in own and replace_span(source, Span("A.m", 2, 7), own) == source
    fixed = replace_span(source, Span("A.m", 2, 7), own.replace("return 1", "x = 2\n\n    return x"))
    assert fixed == source.replace("return 1", "x = 2\n\n        return x")  # a new blank line stays empty


def test_replace_span_keeps_crlf_line_endings():
    source = "def f():\r\n    return 1\r\n\r\ndef g():\r\n    return 2\r\n"
    new = replace_span(source, Span("f", 1, 2), "def f():\n    return 3\n")
    assert new == "def f():\r\n    return 3\r\n\r\ndef g():\r\n    return 2\r\n"


def test_replace_span_keeps_a_missing_final_newline():
    source = "def f():\n    return 1\n\ndef g():\n    return 2"
    assert replace_span(source, Span("g", 4, 5), "def g():\n    return 3\n") == source[:-1] + "3"
    assert replace_span(source, Span("f", 1, 2), "def f():\n    return 0") == source.replace("1", "0")


def test_lines_are_counted_like_ast_counts_them():
    source = "def f():\n    s = 'a\x0cb'\n    return s\x0c\n"  # str.splitlines would split at the form feed
    assert len(lines_of(source)) == 3
    assert function_spans(source) == [Span("f", 1, 3)]


# --- property: replacing a span by its own text is the identity -------------------------------------------------

NAMES = st.sampled_from(["f", "g", "h", "run", "total", "_helper"])
STATEMENTS = st.sampled_from([
    "return x", "x = x + 1", "if x:\n    return 1", "for i in range(3):\n    x += i", "pass",
    "s = '''doc\n    text'''", "y = [\n    1,\n    2,\n]", "# a comment", "return (x,\n        1)",
])


@st.composite
def functions(draw) -> str:
    body = "\n".join(draw(st.lists(STATEMENTS, min_size=1, max_size=4)) + ["return x"])
    decorator = draw(st.sampled_from(["", "@staticmethod\n", "@dec(1,\n     2)\n"]))
    keyword = draw(st.sampled_from(["def", "async def"]))
    return f"{decorator}{keyword} {draw(NAMES)}(x):\n{textwrap.indent(body, '    ')}\n"


@st.composite
def modules(draw) -> str:
    parts = []
    for fn in draw(st.lists(functions(), min_size=1, max_size=4)):
        if draw(st.booleans()):
            fn = f"class {draw(NAMES).title()}:\n{textwrap.indent(fn, draw(st.sampled_from(['    ', chr(9)])))}"
        parts.append(fn)
    text = "import os\n\n" + draw(st.sampled_from(["\n", "\n\n"])).join(parts)
    if draw(st.booleans()):
        text = text.rstrip("\n")
    return text.replace("\n", draw(st.sampled_from(["\n", "\r\n"])))


@settings(max_examples=200, deadline=None)
@given(modules())
def test_replacing_a_span_by_its_own_text_is_the_identity(source):
    spans = function_spans(source)
    assert spans
    lines = lines_of(source)
    for span in spans:
        own = textwrap.dedent("".join(lines[span.start - 1:span.end]).replace("\r\n", "\n"))
        assert replace_span(source, span, own) == source


@settings(max_examples=100, deadline=None)
@given(modules(), st.data())
def test_replacing_a_span_changes_only_its_lines(source, data):
    span = data.draw(st.sampled_from(function_spans(source)))
    lines = lines_of(source)
    new = replace_span(source, span, "def replaced(x):\n    return 42\n")
    after = lines_of(new)
    tail = len(lines) - span.end
    assert after[:span.start - 1] == lines[:span.start - 1]
    assert after[len(after) - tail:] == lines[span.end:]
    assert "".join(after[span.start - 1:len(after) - tail]).strip().endswith("return 42")
    assert [s.qualname.rsplit(".", 1)[-1] for s in function_spans(new)].count("replaced") == 1


ASSIGNMENTS = '''\
import re

_RE = re.compile(r"\\d+")
LIMIT: int = 3
a, (b, *c) = 1, (2, 3)
x = y = {
    "k": lambda v: v + 1,
}
os.environ["X"] = "1"
COUNT += 1
total: int


def f():
    local = 1
    return local


class K:
    \tDOC = """
column 0
"""
    \trate = 0.5

    \tdef m(self):
    \t\treturn self.rate


try:
    FAST = True
except ImportError:
    FAST = False
'''.replace("    \\t", "\\t")


def test_code_spans_are_functions_and_top_level_assignments_in_source_order():
    assert code_spans(ASSIGNMENTS) == [
        Span("_RE", 3, 3, "assignment"),
        Span("LIMIT", 4, 4, "assignment"),
        Span("a, b, c", 5, 5, "assignment"),
        Span("x, y", 6, 8, "assignment"),  # an item or attribute store, `+=`, a bare annotation: no names bound
        Span("f", 14, 16),
        Span("K.DOC", 20, 22, "assignment"),
        Span("K.rate", 23, 23, "assignment"),
        Span("K.m", 25, 26),
        Span("FAST", 30, 30, "assignment"),
        Span("FAST", 32, 32, "assignment"),
    ]
    assert [s for s in code_spans(MODULE) if s.kind == "function"] == function_spans(MODULE)
    assert [s.qualname for s in code_spans(MODULE) if s.kind == "assignment"] == ["Outer.attr", "x"]


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_replacing_an_assignment_by_its_own_text_is_the_identity(eol):
    source = ASSIGNMENTS.replace("\n", eol)
    lines = lines_of(source)
    for span in code_spans(source):
        own = textwrap.dedent("".join(lines[span.start - 1:span.end]).replace("\r\n", "\n"))
        assert replace_span(source, span, own) == source, span


def test_replacing_a_class_attribute_keeps_every_other_byte():
    [rate] = [s for s in code_spans(ASSIGNMENTS) if s.qualname == "K.rate"]
    new = replace_span(ASSIGNMENTS, rate, "rate = 0.25\n")
    assert new == ASSIGNMENTS.replace("\trate = 0.5", "\trate = 0.25")
    [table] = [s for s in code_spans(ASSIGNMENTS) if s.qualname == "x, y"]
    fixed = replace_span(ASSIGNMENTS, table, 'x = y = {\n    "k": lambda v: v - 1,\n}')
    assert fixed == ASSIGNMENTS.replace("v + 1", "v - 1")


def test_splice_keeps_every_other_byte():
    module = ("import os\n\n\nclass K:\n    def mean(self, xs):\n        return 0\n\n"
              "    def other(self):\n        return 1\n# end\n")
    new = splice(module, "mean", "def mean(self, xs):\n    return sum(xs)\n")
    assert new == module.replace("        return 0\n", "        return sum(xs)\n")
    assert function_source(new, "mean") == "def mean(self, xs):\n    return sum(xs)\n"
    with pytest.raises(ValueError):
        splice(module, "nope", "def nope():\n    pass\n")


def test_decorators_are_part_of_the_function():
    module = textwrap.dedent("""
        import functools

        @functools.cache
        def f(x):
            return x
    """)
    assert function_source(module, "f").startswith("@functools.cache\ndef f(x):")
