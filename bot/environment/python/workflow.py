"""What one GitHub Actions job sets up for its tests: its actions/setup-python steps' `python-version`, and the
environment variables its test step runs with, with `${{ matrix.* }}` and `${{ env.* }}` resolved for the matrix
combination that the job's name shows (anything else, a secret among them, is never resolved)."""
from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence

import yaml

_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
_CONTEXT_PATH = re.compile(r"(matrix|env)((?:\.[A-Za-z_][\w-]*|\[\s*'[^']*'\s*\])*)")
_PATH_PART = re.compile(r"\.([A-Za-z_][\w-]*)|\[\s*'([^']*)'\s*\]")
_MISSING = object()
_TEST_RUN = re.compile(r"\b(pytest|py\.test|unittest|tox|nox)\b")
_NOT_THE_TESTS = ("GITHUB_", "RUNNER_", "ACTIONS_", "FIXBOT_")  # the runner's and fixbot's own


class _Float(str):
    """A YAML float kept as written: `python-version: 3.10` means 3.10, though YAML (and GitHub) read 3.1."""


def _float_as_written(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> _Float:
    return _Float(loader.construct_scalar(node))


class _Loader(yaml.SafeLoader):
    yaml_constructors = {**yaml.SafeLoader.yaml_constructors, "tag:yaml.org,2002:float": _float_as_written}


def _shown(value: object) -> tuple[str, ...] | None:
    """How GitHub writes a matrix value in a job's name; two forms for an unquoted float ("3.10" and GitHub's
    number, 3.1); None for a list or mapping."""
    if isinstance(value, bool):
        return ("true" if value else "false",)
    if value is None:
        return ("",)
    if isinstance(value, (list, dict)):
        return None
    if isinstance(value, _Float):
        try:
            number = repr(float(value)).removesuffix(".0")
        except ValueError:  # .inf, .nan
            return (str(value),)
        return tuple(dict.fromkeys((str(value), number)))
    return (str(value),)


def _lookup(expression: str, contexts: dict[str, dict]) -> object:
    match = _CONTEXT_PATH.fullmatch(expression)
    if not match:
        return _MISSING  # functions, operators, other contexts: not ours to evaluate
    value: object = contexts.get(match[1], {})
    for attribute, item in _PATH_PART.findall(match[2]):
        key = attribute or item
        if not isinstance(value, dict) or key not in value:
            return _MISSING
        value = value[key]
    return value


def _pattern(template: str, matrix: dict | None) -> str:
    """A regex for the text `template` becomes: matrix values put in, any other expression a wildcard."""
    parts = []
    for index, piece in enumerate(_EXPRESSION.split(template)):
        if index % 2 == 0:
            parts.append(re.escape(piece))
            continue
        found = _lookup(piece, {"matrix": matrix}) if matrix is not None else _MISSING
        forms = None if found is _MISSING else _shown(found)
        parts.append("(?:" + "|".join(map(re.escape, forms)) + ")" if forms else ".*?")
    return "".join(parts)


def _name_pattern(job_id: str, job: dict, matrix: dict | None) -> re.Pattern:
    """GitHub's name for one run of the job: its `name:` with expressions put in, or its id; a matrix job whose
    name has no matrix expression gets the combination's values in parentheses: "test (3.9, ubuntu-latest)"."""
    template = str(job["name"]) if job.get("name") is not None else job_id
    pattern = _pattern(template, matrix)
    if matrix and not any(piece.startswith("matrix") for piece in _EXPRESSION.findall(template)):
        values = []
        for value in matrix.values():
            forms = _shown(value)
            values.append("(?:" + "|".join(map(re.escape, forms)) + ")" if forms else ".*?")
        pattern += re.escape(" (") + re.escape(", ").join(values) + re.escape(")")
    return re.compile(pattern)


def _matches(combination: dict, entry: dict) -> bool:
    return all(key in combination and combination[key] == value for key, value in entry.items())


def _expand(matrix: object) -> list[dict] | None:
    """The matrix's combinations, as GitHub makes them (product, exclude, then include); None when the matrix is
    computed (`${{ fromJSON(...) }}`) and cannot be known from the file."""
    if not isinstance(matrix, dict):
        return None
    axes = {key: value for key, value in matrix.items() if key not in ("include", "exclude")}
    include, exclude = matrix.get("include") or [], matrix.get("exclude") or []
    if not all(isinstance(value, list) for value in (*axes.values(), include, exclude)):
        return None
    combinations = [dict(zip(axes, values)) for values in itertools.product(*axes.values())] if axes else []
    combinations = [c for c in combinations if not any(isinstance(e, dict) and _matches(c, e) for e in exclude)]
    originals = [dict(c) for c in combinations]
    added = []
    for entry in (e for e in include if isinstance(e, dict)):
        # an include entry extends every combination whose original values it does not contradict; else it is
        # a combination of its own
        hit = False
        for combination, original in zip(combinations, originals):
            if all(original[k] == v for k, v in entry.items() if k in original):
                combination.update({k: v for k, v in entry.items() if k not in original})
                hit = True
        if not hit:
            added.append(dict(entry))
    return combinations + added


def _text(value: object) -> str | None:
    forms = _shown(value)
    return forms[0] if forms else None


def _resolve(value: object, contexts: dict[str, dict]) -> list[str]:
    """A `python-version` value as versions: a list, a multi-line string, an expression; unresolved parts drop."""
    if isinstance(value, list):
        return [version for item in value for version in _resolve(item, contexts)]
    text = _text(value)
    if text is None:
        return []
    whole = _EXPRESSION.fullmatch(text.strip())
    if whole:  # may stand for a list: `python-version: ${{ matrix.pythons }}`
        found = _lookup(whole[1], contexts)
        if found is _MISSING:
            return []
        values = found if isinstance(found, list) else [found]
        return [line.strip() for item in values for line in (_text(item) or "").splitlines() if line.strip()]
    unresolved = False

    def put(match: re.Match) -> str:
        nonlocal unresolved
        found = _lookup(match[1], contexts)
        unresolved |= found is _MISSING or _text(found) is None
        return "" if unresolved else _text(found) or ""

    text = _EXPRESSION.sub(put, text)
    return [] if unresolved else [line.strip() for line in text.splitlines() if line.strip()]


def _env(*mappings: object, matrix: dict) -> dict:
    env: dict = {}
    for mapping in mappings:
        if isinstance(mapping, dict):
            for key, value in mapping.items():
                resolved = _resolve(value, {"matrix": matrix, "env": env})
                if len(resolved) == 1:  # else unknown here (a function, a secret): `env.X` stays unresolved
                    env[str(key)] = resolved[0]
                else:
                    env.pop(str(key), None)
    return env


def _setup_python_versions(workflow: dict, job: dict, matrix: dict) -> list[str]:
    versions = []
    steps = job.get("steps")
    for step in steps if isinstance(steps, list) else []:
        if not isinstance(step, dict) or not str(step.get("uses", "")).lower().startswith("actions/setup-python"):
            continue
        given = step.get("with")
        inputs = given if isinstance(given, dict) else {}
        if "python-version" not in inputs:  # python-version-file: the caller reads that file
            continue
        env = _env(workflow.get("env"), job.get("env"), step.get("env"), matrix=matrix)
        versions += _resolve(inputs["python-version"], {"matrix": matrix, "env": env})
    return versions


def _load(workflow_text: str) -> dict:
    try:
        workflow = yaml.load(workflow_text, Loader=_Loader)  # noqa: S506 (a SafeLoader)
    except yaml.YAMLError:
        return {}
    return workflow if isinstance(workflow, dict) else {}


def _matched(workflow: dict, job_name: str) -> tuple[dict, list[dict]] | None:
    """The job called `job_name` (a job's `name:` with its matrix values put in, GitHub's "id (values...)" for a
    matrix job without one, or the job's id: every combination's) and the matrix combinations it names."""
    jobs = workflow.get("jobs")
    name = job_name.strip()
    for job_id, job in (jobs.items() if isinstance(jobs, dict) else ()):
        if not isinstance(job, dict):
            continue
        strategy = job.get("strategy")
        combinations = _expand(strategy["matrix"]) if isinstance(strategy, dict) and "matrix" in strategy else [{}]
        matched = [c for c in combinations or [] if _name_pattern(str(job_id), job, c).fullmatch(name)]
        if not matched and name in (str(job_id), str(job.get("name"))):
            matched = combinations or [{}]  # the job as a whole; a computed matrix resolves nothing
        if matched:
            return job, matched
    return None


def job_python_versions(workflow_text: str, job_name: str) -> tuple[str, ...]:
    """The python-version values, as written, of the setup-python steps of the job called `job_name`. () for an
    unknown job or one without setup-python's python-version."""
    workflow = _load(workflow_text)
    found = _matched(workflow, job_name)
    if found is None:
        return ()
    job, matched = found
    return tuple(dict.fromkeys(v for matrix in matched for v in _setup_python_versions(workflow, job, matrix)))


def _runs_tests(step: object) -> bool:
    return isinstance(step, dict) and bool(_TEST_RUN.search(str(step.get("run", ""))))


def job_test_env(workflow_text: str, job_name: str) -> dict[str, str]:
    """The variables the job's test step (the first `run:` calling pytest, unittest or tox) runs with: the
    workflow's, the job's and the step's `env:`, each value that resolves the same for every matrix combination
    the name matches. GitHub's and the runner's own names are left out."""
    workflow = _load(workflow_text)
    found = _matched(workflow, job_name)
    if found is None:
        return {}
    job, matched = found
    steps = job.get("steps")
    step: dict = next((s for s in steps if _runs_tests(s)), {}) if isinstance(steps, list) else {}
    envs = [_env(workflow.get("env"), job.get("env"), step.get("env"), matrix=matrix) for matrix in matched]
    common = shared_values(envs)
    return {k: v for k, v in common.items() if not k.startswith(_NOT_THE_TESTS) and k not in ("PATH", "HOME")}


def shared_values(envs: Sequence[Mapping[str, str]]) -> dict[str, str]:
    """The variables every one of `envs` sets to the same value ({} for none)."""
    return {k: v for k, v in envs[0].items() if all(e.get(k) == v for e in envs[1:])} if envs else {}


def pythons_of_test_jobs(workflow_text: str) -> tuple[str, ...]:
    """The python-version values of the workflow's jobs that run the tests (a `run:` step calling pytest,
    unittest or tox), every matrix combination's, as written."""
    workflow = _load(workflow_text)
    jobs = workflow.get("jobs")
    found: list[str] = []
    for job in (jobs.values() if isinstance(jobs, dict) else ()):
        steps = job.get("steps") if isinstance(job, dict) else None
        if not isinstance(steps, list) or not any(_runs_tests(s) for s in steps):
            continue
        strategy = job.get("strategy")
        combinations = _expand(strategy["matrix"]) if isinstance(strategy, dict) and "matrix" in strategy else [{}]
        found += [v for matrix in combinations or [{}] for v in _setup_python_versions(workflow, job, matrix)]
    return tuple(dict.fromkeys(found))
