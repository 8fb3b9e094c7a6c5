"""JUnit XML (pytest's `--junitxml`, xunit1 with file/line attributes, or xunit2 without) → list[Failure].

junitparser reads the XML; the text inside <failure>/<error> is pytest's own report, so the same report parser
as the terminal output gives frames, assertion and expected/actual."""
from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from xml.etree.ElementTree import ParseError as XMLSyntaxError

from junitparser import Error, JUnitXml, JUnitXmlError
from junitparser import Failure as JFailure

from bot.failures.traceback import comparison, error_type_from_message, parse_report, relativize, relativize_text
from bot.failures.types import Failure, ParseError


def parse_junit(source: str | bytes | os.PathLike[str], root: str | None = None) -> list[Failure]:
    """Failing and erroring test cases. `source` is XML text (str/bytes starting with `<`) or a file path."""
    xml = _load(source)
    failures: list[Failure] = []
    for suite in xml:
        for case in suite:
            for result in case.result:
                if isinstance(result, (JFailure, Error)):
                    failures.append(_to_failure(case, result, root))
    return failures


def _load(source: str | bytes | os.PathLike[str]) -> JUnitXml:
    try:
        if isinstance(source, bytes) or (isinstance(source, str) and source.lstrip().startswith("<")):
            return JUnitXml.fromstring(source)
        path = Path(source)
        try:
            is_file = path.is_file()
        except OSError:  # a name too long for the file system: certainly not our file
            is_file = False
        if not is_file:
            raise ParseError(f"JUnit XML file not found: {path}")
        return JUnitXml.fromfile(str(path))
    except (XMLSyntaxError, JUnitXmlError, ValueError) as exc:
        # ValueError: a str with an encoding declaration, or text that is not XML at all.
        raise ParseError(f"not JUnit XML: {exc}") from None


def _to_failure(case, result, root: str | None) -> Failure:
    name = case.name or "?"
    classname = case.classname or ""
    file_attr = case._elem.get("file")  # xunit1 only; junitparser has no attribute for it
    line_attr = case._elem.get("line")
    body = (result.text or "").splitlines()
    message = result.message
    # A first pass with a placeholder id finds the frames; the test file among them gives xunit2 its id.
    draft = parse_report("", body, root)
    test_file = file_attr or _file_from_frames(classname, draft) or _file_from_classname(classname, name)
    test_id = _test_id(test_file, classname, name)
    failure = parse_report(test_id, body, root)
    if failure.file is None and file_attr:
        # No traceback to read: the case's own location (pytest writes the 0-based line of the def).
        line = int(line_attr) + 1 if line_attr and line_attr.isdigit() else None
        failure = replace(failure, file=relativize(file_attr, root), line=line)
    if failure.message is None and message:
        message = relativize_text(message, root)
        actual, expected = comparison(message, failure.assertion)
        failure = replace(failure, message=message, actual=actual, expected=expected)
    if failure.error_type is None:
        failure = replace(failure, error_type=result.type or error_type_from_message(message))
    return failure


def _file_from_frames(classname: str, draft: Failure) -> str | None:
    """The frame whose path, as a dotted module, prefixes the classname is the test file."""
    for frame in draft.traceback:
        dotted = frame.path.replace("\\", "/").removesuffix(".py").replace("/", ".")
        if dotted and (classname == dotted or classname.startswith(dotted + ".")):
            return frame.path
    return None


def _file_from_classname(classname: str, name: str) -> str:
    """Last resort (xunit2, no traceback): module parts run until the first capitalised one (a class).
    A collection error has no classname; its name is the dotted module."""
    parts = (classname or name).split(".")
    module = []
    for part in parts:
        if part[:1].isupper():
            break
        module.append(part)
    return "/".join(module or parts) + ".py"


def _test_id(test_file: str, classname: str, name: str) -> str:
    """`file::Class::name`; a collection error (no classname) is the module path alone."""
    if not classname:
        return test_file
    module = test_file.replace("\\", "/").removesuffix(".py").replace("/", ".")
    classes = classname[len(module) + 1:] if classname.startswith(module + ".") else ""
    return "::".join([test_file, *[c for c in classes.split(".") if c], name])
