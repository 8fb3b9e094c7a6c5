"""Mutants at the border of str and bytes (bot/agent/search/decoding.py): parameters decoded, return values
encoded, only when the failure shows bytes."""
from __future__ import annotations

from bot.agent.search.decoding import bytes_shown
from bot.agent.search.evidence import Evidence
from bot.agent.search.mutate import ranked_mutants
from bot.fix.reproduce.command import TestCommand

from .test_fix_realrepo import make_repo
from .test_mutate_guards import _added_by_the_search

URLJOIN = '''import re


def urljoin(base, path):
    if not isinstance(path, str) or not path:
        return None
    if re.match(r"^(?:https?:)?//", path):
        return path
    if not isinstance(base, str) or not re.match(r"^(?:https?:)?//", base):
        return None
    return base.rstrip("/") + "/" + path.lstrip("/")
'''
URLJOIN_TESTS = '''from urls import urljoin


def test_str():
    assert urljoin("http://a.de/", "/x") == "http://a.de/x"
    assert urljoin("http://a.de/", None) is None


def test_bytes():
    assert urljoin(b"http://a.de/", "/x") == "http://a.de/x"
    assert urljoin("http://a.de/", b"/x") == "http://a.de/x"
'''


def test_bytes_are_read_from_the_lines_pytest_shows_and_from_errors_that_name_bytes():
    assert bytes_shown('>       assert urljoin(b"http://a.de/", "/x") == "http://a.de/x"\nE   AssertionError')
    assert bytes_shown("E   TypeError: cannot use a string pattern on a bytes-like object")
    assert not bytes_shown('>       assert urljoin("http://a.de/", "/x") == "x"\nE   AssertionError: b\'x\'')
    assert not bytes_shown("E   TypeError: can only concatenate str (not \"int\") to str")
    assert bytes_shown(">       self.assertTrue(isinstance(data, bytes))\nE       AssertionError: False is not true")
    assert not bytes_shown("data = bytes_of(x)")  # a line of code pytest does not show as the failing one


def test_parameters_are_decoded_at_the_top_of_the_body_one_at_a_time_and_all_at_once():
    source = 'def join(base, path):\n    """Doc."""\n    return base + path\n'
    decoded = [m.source for m in ranked_mutants(source, "join", evidence=Evidence(bytes_shown=True))
               if m.operator == "decode"]
    top = "def join(base, path):\n    \"\"\"Doc.\"\"\"\n"
    base = "    if isinstance(base, bytes):\n        base = base.decode('utf-8')\n"
    path = "    if isinstance(path, bytes):\n        path = path.decode('utf-8')\n"
    assert decoded == [top + base + "    return base + path\n", top + path + "    return base + path\n",
                       top + base + path + "    return base + path\n"]
    assert not [m for m in ranked_mutants(source, "join") if m.operator == "decode"]


def test_a_conversion_of_what_is_already_bytes_or_str_is_dropped():
    """`'bytes' object has no attribute 'encode'`: the code converts what its callers (or a model's edit) now hand
    it as bytes; each conversion is dropped, one at a time, only when the failure shows bytes."""
    source = ("def parse(data, names):\n    for n in names:\n        data = data.replace(n.encode('ascii'), b'')\n"
              "    return fromstring(data.encode('utf-8'))\n")
    evidence = Evidence(bytes_shown=True)
    dropped = [m.source for m in ranked_mutants(source, "parse", evidence=evidence) if m.operator == "drop-codec"]
    assert dropped == [source.replace("n.encode('ascii')", "n"), source.replace("data.encode('utf-8')", "data")]
    assert not [m for m in ranked_mutants(source, "parse") if m.operator == "drop-codec"]


def test_the_search_decodes_the_bytes_the_tests_give_before_the_model_is_asked(tmp_path, docker_client,
                                                                               sandbox_image):
    root = make_repo(tmp_path / "urls", {"urls.py": URLJOIN, "tests/test_urls.py": URLJOIN_TESTS})
    assert _added_by_the_search(root, docker_client, sandbox_image) == [
        "+    if isinstance(base, bytes):", "+        base = base.decode('utf-8')",
        "+    if isinstance(path, bytes):", "+        path = path.decode('utf-8')"]


POSTDATA = '''from urllib.parse import urlencode


def postdata(fields, sort=False):
    if sort:
        return urlencode(sorted(fields.items()))
    return urlencode(fields)
'''
POSTDATA_TESTS = '''from forms import postdata


def test_bytes_for_the_request_body():
    data = postdata({"user": "a b"})
    assert isinstance(data, bytes)


def test_sorted():
    assert postdata({"b": "2", "a": "1"}, sort=True) == b"a=1&b=2"
'''


def test_return_values_are_encoded_one_at_a_time_and_all_at_once():
    encoded = [m.source for m in ranked_mutants(POSTDATA, "postdata", evidence=Evidence(bytes_shown=True))
               if m.operator == "encode"]
    first = "urlencode(sorted(fields.items())).encode('utf-8')"
    assert encoded == [POSTDATA.replace("urlencode(sorted(fields.items()))", first),
                       POSTDATA.replace("urlencode(fields)", "urlencode(fields).encode('utf-8')"),
                       POSTDATA.replace("urlencode(sorted(fields.items()))", first)
                       .replace("urlencode(fields)", "urlencode(fields).encode('utf-8')")]
    assert "    return (a + b).encode('utf-8')\n" in {
        m.source.splitlines(True)[1] for m in ranked_mutants("def f(a, b):\n    return a + b\n", "f",
                                                             evidence=Evidence(bytes_shown=True))}
    assert not [m for m in ranked_mutants(POSTDATA, "postdata") if m.operator == "encode"]


def test_the_search_encodes_what_the_tests_want_as_bytes_before_the_model_is_asked(tmp_path, docker_client,
                                                                                  sandbox_image):
    root = make_repo(tmp_path / "forms", {"forms.py": POSTDATA, "tests/test_forms.py": POSTDATA_TESTS})
    assert _added_by_the_search(root, docker_client, sandbox_image) == [
        "+        return urlencode(sorted(fields.items())).encode('utf-8')",
        "+    return urlencode(fields).encode('utf-8')"]


NOTES = '''def save(path, text, raw=b""):
    with open(path, "w") as f:
        f.write(text)
    with open(path + ".raw", "wb") as f:
        f.write(raw)
    return path
'''


def test_text_files_get_an_encoding_only_when_the_failure_is_a_unicode_error():
    def encoded(source: str, error: str) -> list[str]:
        found = ranked_mutants(source, "save", evidence=Evidence(exceptions=(error,)))
        return [m.source for m in found if m.operator == "encoding"]

    assert encoded(NOTES, "UnicodeEncodeError") == [NOTES.replace('open(path, "w")',
                                                                  "open(path, \"w\", encoding='utf-8')")]  # not "wb"
    assert encoded(NOTES, "ValueError") == []
    both = "def save(p, q):\n    p.write_text(q.read_text(),)\n"
    assert encoded(both, "UnicodeDecodeError") == [  # each call, then both at once
        "def save(p, q):\n    p.write_text(q.read_text(encoding='utf-8'),)\n",
        "def save(p, q):\n    p.write_text(q.read_text(), encoding='utf-8')\n",
        "def save(p, q):\n    p.write_text(q.read_text(encoding='utf-8'), encoding='utf-8')\n"]


def test_the_search_gives_a_file_written_in_the_locales_encoding_utf_8(tmp_path, docker_client, sandbox_image):
    """PySnooper-1's bug: a file written in the locale's encoding, which fails only where that is not UTF-8; the
    test command sets such a locale, as a CI runner's may be."""
    tests = ("from notes import save\n\n\ndef test_accents(tmp_path):\n    path = str(tmp_path / 'n.txt')\n"
             "    save(path, 'été')\n    with open(path, 'rb') as f:\n"
             "        assert f.read() == 'été'.encode('utf-8')\n")
    root = make_repo(tmp_path / "notes", {"notes.py": NOTES, "tests/test_notes.py": tests})
    command = TestCommand.parse("LANG=C PYTHONUTF8=0 PYTHONCOERCECLOCALE=0 pytest")
    assert _added_by_the_search(root, docker_client, sandbox_image, test_command=command) == [
        "+    with open(path, \"w\", encoding='utf-8') as f:"]
