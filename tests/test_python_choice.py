"""Which Python a repository's tests run on: every source (explicit, CI job, .python-version, requires-python,
python_requires, poetry, tox), every mapping rule, and the real projects of the realbugs corpus cloned from their
bundles (a workflow's jobs: test_python_choice_workflows.py)."""
from __future__ import annotations

import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.checkout.repository import Checkout, load_checkout
from bot.environment.python.choice import NoSuitablePython, PythonChoice, choose_python
from bot.errors import UserError

AVAILABLE = ("3.9", "3.11", "3.13")


def checkout(files: dict[str, str]) -> Checkout:
    return Checkout("/nowhere", {path: text.encode() for path, text in files.items()})


def choose(files: dict[str, str], **kwargs) -> PythonChoice:
    kwargs.setdefault("available", AVAILABLE)
    return choose_python(checkout(files), **kwargs)


def pyproject_requires(spec: str) -> dict[str, str]:
    return {"pyproject.toml": f'[project]\nname = "demo"\nrequires-python = "{spec}"\n'}


def poetry(spec: str) -> dict[str, str]:
    return {"pyproject.toml": f'[tool.poetry.dependencies]\npython = "{spec}"\nrequests = "^2.31"\n'}


def tox_ini(envlist: str, key: str = "envlist") -> dict[str, str]:
    return {"tox.ini": f"[tox]\n{key} = {envlist}\n\n[testenv]\ndeps = pytest\ncommands = pytest\n"}


SETUP_PY_LITERAL = """\
from setuptools import setup

setup(name="demo", version="1.0", python_requires=">=3.12", packages=["demo"])
"""
SETUP_PY_NAME = """\
import setuptools

PYTHON_REQUIRES = ">=3.6, <3.10"
setuptools.setup(name="demo", python_requires=PYTHON_REQUIRES)
"""
SETUP_PY_COMPUTED = """\
from setuptools import setup
import sys
setup(name="demo", python_requires=">=" + ".".join(map(str, sys.version_info[:2])))
"""
SETUP_PY_PYTHON2 = """\
from setuptools import setup
print "building demo"
setup(name="demo", python_requires=">=3.12")
"""
SETUP_CFG = "[metadata]\nname = demo\n\n[options]\npackages = demo\npython_requires = >=3.12\n"
LEGACY_TOX = '[tool.tox]\nlegacy_tox_ini = """\n[tox]\nenvlist = py37, lint\n\n[testenv]\ncommands = pytest\n"""\n'

# --- which source wins ------------------------------------------------------------------------------------------

SOURCES = [
    # id, files, choose_python keywords, (version, source, wanted)
    ("nothing: the default", {}, {}, ("3.11", "default", "3.11")),
    ("another default", {}, {"default": "3.13"}, ("3.13", "default", "3.13")),
    ("explicit beats everything", {**tox_ini("py37"), ".python-version": "3.9\n"},
     {"explicit": "3.13", "ci_versions": ["3.9"]}, ("3.13", "--python", "3.13")),
    ("explicit with a patch release", {}, {"explicit": "3.9.18"}, ("3.9", "--python", "3.9.18")),
    ("ci job beats .python-version", {".python-version": "3.13\n"}, {"ci_versions": ["3.9"]},
     ("3.9", "CI job python-version (3.9)", "3.9")),
    ("ci job saying nothing usable falls through", {".python-version": "3.13\n"},
     {"ci_versions": ["${{ fromJSON(needs.plan.outputs.python) }}"]}, ("3.13", ".python-version (3.13)", "3.13")),
    (".python-version beats requires-python", {".python-version": "3.9\n", **pyproject_requires(">=3.12")}, {},
     ("3.9", ".python-version (3.9)", "3.9")),
    (".python-version: a patch release, a comment first", {".python-version": "# pinned\n3.8.10\n"}, {},
     ("3.9", ".python-version (3.8.10): 3.8 is not available, the nearest newer", "3.8.10")),
    (".python-version: the first line only", {".python-version": "3.13\n3.9\n"}, {},
     ("3.13", ".python-version (3.13)", "3.13")),
    (".python-version: pypy is not CPython", {".python-version": "pypy3.9-7.3.16\n", **tox_ini("py313")}, {},
     ("3.13", "tox.ini envlist (py313)", "py313")),
    (".python-version: system", {".python-version": "system\n"}, {}, ("3.11", "default", "3.11")),
    ("requires-python beats setup.cfg and tox",
     {**pyproject_requires(">=3.12"), "setup.cfg": SETUP_CFG.replace("3.12", "3.6"), **tox_ini("py37")}, {},
     ("3.13", "requires-python >=3.12 (pyproject.toml)", ">=3.12")),
    ("setup.cfg [options] python_requires", {"setup.cfg": SETUP_CFG, **tox_ini("py37")}, {},
     ("3.13", "python_requires >=3.12 (setup.cfg)", ">=3.12")),
    ("setup.py: a literal keyword", {"setup.py": SETUP_PY_LITERAL}, {},
     ("3.13", "python_requires >=3.12 (setup.py)", ">=3.12")),
    ("setup.py: a module-level name", {"setup.py": SETUP_PY_NAME}, {},
     ("3.9", "python_requires >=3.6, <3.10 (setup.py)", ">=3.6, <3.10")),
    ("setup.py: computed, never executed", {"setup.py": SETUP_PY_COMPUTED, **tox_ini("py313")}, {},
     ("3.13", "tox.ini envlist (py313)", "py313")),
    ("setup.py: Python 2 syntax is skipped", {"setup.py": SETUP_PY_PYTHON2}, {}, ("3.11", "default", "3.11")),
    ("poetry beats tox", {**poetry("^3.12"), **tox_ini("py37")}, {},
     ("3.13", "poetry python ^3.12 (pyproject.toml)", "^3.12")),
    ("poetry: any python says nothing", {**poetry("*"), **tox_ini("py313")}, {},
     ("3.13", "tox.ini envlist (py313)", "py313")),
    ("tox.ini envlist", tox_ini("py27, py36, py37"), {},
     ("3.9", "tox.ini envlist (py27, py36, py37): 3.7 is not available, the nearest newer", "py27, py36, py37")),
    ("tox.ini env_list", tox_ini("py311, lint", key="env_list"), {},
     ("3.11", "tox.ini envlist (py311)", "py311, lint")),
    ("setup.cfg [tox:tox]", {"setup.cfg": "[tox:tox]\nenvlist = py38,docs\n"}, {},
     ("3.9", "setup.cfg [tox:tox] envlist (py38): 3.8 is not available, the nearest newer", "py38, docs")),
    ("pyproject legacy_tox_ini", {"pyproject.toml": LEGACY_TOX}, {},
     ("3.9", "pyproject.toml [tool.tox] legacy_tox_ini envlist (py37): 3.7 is not available, the nearest newer",
      "py37, lint")),
    ("pyproject [tool.tox] env_list", {"pyproject.toml": '[tool.tox]\nenv_list = ["3.13", "3.12", "type"]\n'}, {},
     ("3.13", "pyproject.toml [tool.tox] envlist (3.13, 3.12)", "3.13, 3.12, type")),
    ("tox.toml env_list", {"tox.toml": 'env_list = ["py310", "lint"]\n'}, {},
     ("3.11", "tox.toml envlist (py310): 3.10 is not available, the nearest newer", "py310, lint")),
    ("tox without Python environments", tox_ini("flake8, docs, py"), {}, ("3.11", "default", "3.11")),
]


@pytest.mark.parametrize("files, kwargs, expected", [case[1:] for case in SOURCES], ids=[c[0] for c in SOURCES])
def test_sources(files, kwargs, expected):
    choice = choose(files, **kwargs)
    assert (choice.version, choice.source, choice.wanted) == expected


# --- a specifier to a version ------------------------------------------------------------------------------------

SPECIFIERS = [
    # requires-python, available, default, chosen
    (">=3.8", AVAILABLE, "3.11", "3.11"),  # the default satisfies
    (">=3.12", AVAILABLE, "3.11", "3.13"),  # the lowest above the lower bound
    (">=3.6,<3.10", AVAILABLE, "3.11", "3.9"),
    (">=3.7,<3.10", ("3.7", "3.8", "3.9", "3.11"), "3.11", "3.7"),  # a lower bound: the lowest satisfying
    ("<3.10", ("3.7", "3.8", "3.9", "3.11"), "3.11", "3.9"),  # no lower bound: the highest satisfying
    ("!=3.11.*", AVAILABLE, "3.11", "3.13"),
    ("~=3.9", AVAILABLE, "3.11", "3.11"),
    ("==3.9.*", AVAILABLE, "3.11", "3.9"),
    ("==3.9.1", AVAILABLE, "3.11", "3.9"),  # "3.9" stands for its patch releases
    (">3.9", AVAILABLE, "3.9", "3.9"),  # as pip sees it: 3.9.18 > 3.9
    (">=2.7, !=3.0.*, !=3.1.*, !=3.2.*", AVAILABLE, "3.11", "3.11"),
    (">=3.10", ("3.9", "3.10", "3.11"), "3.9", "3.10"),  # versions, not strings: "3.10" < "3.9" as text
    (">=3.9,<3.11", ("3.9", "3.10", "3.11"), "3.11", "3.9"),
]


@pytest.mark.parametrize("spec, available, default, chosen", SPECIFIERS)
def test_specifier_mapping(spec, available, default, chosen):
    choice = choose(pyproject_requires(spec), available=available, default=default)
    assert choice == PythonChoice(version=chosen, source=f"requires-python {spec} (pyproject.toml)", wanted=spec)


POETRY = [
    ("^3.8", "3.11"),  # >=3.8,<4.0: the default
    ("^3.12", "3.13"),
    ("~3.9", "3.9"),  # >=3.9,<3.10
    ("~3.13.1", "3.13"),
    (">=3.8,<3.10", "3.9"),
    (">=3.8 <3.10", "3.9"),
    ("3.9", "3.9"),  # a bare version is its minor line
    ("3.13.*", "3.13"),
    (">=2.7,<2.8 || >=3.12", "3.13"),
]


@pytest.mark.parametrize("spec, chosen", POETRY)
def test_poetry_constraints(spec, chosen):
    choice = choose(poetry(spec))
    assert (choice.version, choice.source) == (chosen, f"poetry python {spec} (pyproject.toml)")


@pytest.mark.parametrize("files, needs", [
    (pyproject_requires(">=3.14"), "Python >=3.14 (requires-python in pyproject.toml)"),
    ({"setup.cfg": SETUP_CFG.replace(">=3.12", "<3.8")}, "Python <3.8 (python_requires in setup.cfg)"),
    ({"setup.py": SETUP_PY_LITERAL.replace(">=3.12", "==3.10.*")}, "Python ==3.10.* (python_requires in setup.py)"),
    (poetry("~3.7"), "Python ~3.7 (poetry python in pyproject.toml)"),
])
def test_no_available_version_satisfies(files, needs):
    with pytest.raises(NoSuitablePython) as raised:
        choose(files)
    assert str(raised.value) == f"the project needs {needs}; available: 3.9, 3.11, 3.13"


def test_an_invalid_specifier_is_a_user_error():
    with pytest.raises(UserError, match=r"^setup.cfg: python_requires '=>3.6' is not a valid version specifier$"):
        choose({"setup.cfg": SETUP_CFG.replace(">=3.12", "=>3.6")})


def test_invalid_toml_is_a_user_error():
    with pytest.raises(UserError, match=r"^pyproject.toml is not valid TOML"):
        choose({"pyproject.toml": "[project\n"})


# --- a list of versions to a version ------------------------------------------------------------------------

LISTS = [
    # the failing job's python-version values, available, chosen, the note in `source` (after the colon)
    (["3.9", "3.11"], AVAILABLE, "3.11", None),  # the highest listed that is available
    (["3.11", "3.9"], AVAILABLE, "3.11", None),
    (["3.7"], AVAILABLE, "3.9", "3.7 is not available, the nearest newer"),  # not 3.11: nearness matters
    (["3.6", "3.7", "3.8"], AVAILABLE, "3.9", "3.8 is not available, the nearest newer"),
    (["3.10"], AVAILABLE, "3.11", "3.10 is not available, the nearest newer"),  # 3.10 > 3.9 as versions
    (["3.9", "3.10"], ("3.8", "3.9", "3.11"), "3.9", None),
    (["3.14"], AVAILABLE, "3.13", "all newer than what is available, the highest available"),
    (["2.7"], AVAILABLE, "3.9", "Python 2 only, the lowest available"),
    (["2.6", "2.7"], ("3.11", "3.13"), "3.11", "Python 2 only, the lowest available"),
    (["3.x"], AVAILABLE, "3.11", None),  # any 3: the default
    (["3"], AVAILABLE, "3.11", None),
    (["2.x"], AVAILABLE, "3.9", "no Python 2 is available, the lowest available"),
    (["3.12-dev"], AVAILABLE, "3.13", "3.12 is not available, the nearest newer"),
    (["3.13t"], AVAILABLE, "3.13", None),
    ([" 3.8.10 "], AVAILABLE, "3.9", "3.8 is not available, the nearest newer"),
    (["pypy-3.10", "3.9"], AVAILABLE, "3.9", None),
    (["pypy3.10"], AVAILABLE, "3.11", "3.10 is not available, the nearest newer"),
]


@pytest.mark.parametrize("versions, available, chosen, note", LISTS)
def test_list_mapping(versions, available, chosen, note):
    default = "3.11" if "3.11" in available else available[-1]
    choice = choose({}, ci_versions=versions, available=available, default=default)
    names = ", ".join(v.strip() for v in versions)
    expected = f"CI job python-version ({names})" + (f": {note}" if note else "")
    assert (choice.version, choice.source, choice.wanted) == (chosen, expected, ", ".join(versions))


ENVLISTS = [
    # envlist as written, the Python entries tox makes of it, chosen
    ("py27", "py27", "3.9"),
    ("py{37,38}-django{2,3}", "py37-django2, py37-django3, py38-django2, py38-django3", "3.9"),
    ("py3{8-10}, lint", "py38, py39, py310", "3.9"),  # an exact match beats a newer one
    ("py310,py311\n  py312", "py310, py311, py312", "3.11"),
    ("py3, lint", "py3", "3.11"),
    ("{py27,pypy3.10}-tests", "py27-tests, pypy3.10-tests", "3.11"),
    ("py{27,34,35,36,37,38,py,py3}", "py27, py34, py35, py36, py37, py38, pypy3", "3.9"),
    ("3.12, 3.13, type", "3.12, 3.13", "3.13"),
]


@pytest.mark.parametrize("envlist, names, chosen", ENVLISTS)
def test_tox_envlist(envlist, names, chosen):
    choice = choose(tox_ini(envlist))
    assert choice.version == chosen
    assert choice.source.startswith(f"tox.ini envlist ({names})")


@given(listed=st.lists(st.tuples(st.sampled_from([2, 3]), st.integers(0, 15)), min_size=1, max_size=5),
       available=st.sets(st.integers(6, 15), min_size=1, max_size=6))
def test_list_mapping_properties(listed, available):
    available_texts = [f"3.{minor}" for minor in sorted(available)]
    choice = choose_python(checkout({}), available=available_texts, default=available_texts[0],
                           ci_versions=[f"{major}.{minor}" for major, minor in listed])
    chosen = (3, int(choice.version.split(".")[1]))
    exact = [v for v in listed if v[0] == 3 and v[1] in available]
    newer = [(3, m) for m in sorted(available) if (3, m) > max(listed)]
    assert choice.version in available_texts
    if exact:
        assert chosen == max(exact)
    elif newer:
        assert chosen == newer[0]
    else:
        assert chosen == (3, max(available))


# --- explicit, default, available -----------------------------------------------------------------------------

@pytest.mark.parametrize("explicit", ["3.10", "2.7", "3", "pypy3.9", "latest"])
def test_explicit_is_strict(explicit):
    with pytest.raises(NoSuitablePython) as raised:
        choose(tox_ini("py39"), explicit=explicit)
    assert str(raised.value) == f"--python {explicit}: not an available Python (available: 3.9, 3.11, 3.13)"


def test_the_default_must_be_available():
    with pytest.raises(NoSuitablePython, match=r"^the default Python 3.12 is not available \(available: 3.9, "):
        choose({}, default="3.12")
    with pytest.raises(NoSuitablePython, match="no Python versions are available"):
        choose({}, available=())


def test_available_is_returned_as_written_and_compared_as_versions():
    # "3.10" sorts before "3.9" as text and equals 3.1 as a float
    choice = choose(tox_ini("py38"), available=("3.10", "3.9", "3.1"), default="3.10")
    assert choice.version == "3.9"
    assert choose(pyproject_requires(">=3.10"), available=("3.10", "3.9"), default="3.9").version == "3.10"


# --- the realbugs corpus: real projects from their bundles --------------------------------------------------

REALBUGS = [
    # project, tag, chosen, source; available 3.9, 3.11, 3.13
    # py{27,...,38,py,py3}: 3.8 is the newest tested, 3.9 the nearest (its code imports collections.Mapping)
    ("PySnooper", "bug-1", "3.9", "tox.ini envlist (py27, py34, py35, py36, py37, py38, pypy3): 3.8 is not "
                                  "available, the nearest newer"),
    ("PySnooper", "bug-2", "3.9", "tox.ini envlist (py27, py34, py35, py36, py37, py38, pypy3): 3.8 is not "
                                  "available, the nearest newer"),
    # no tox.ini, no python_requires: its Travis CI tested 2.7 to 3.8-dev
    ("PySnooper", "bug-3", "3.9", ".travis.yml python (2.7, 3.4, 3.5, 3.6, 3.7, 3.8-dev): 3.8 is not available, "
                                  "the nearest newer"),
    ("httpie", "bug-1", "3.9", "tox.ini envlist (py26, py27, py35): 3.5 is not available, the nearest newer"),
    ("httpie", "bug-4", "3.9", "tox.ini envlist (py26, py27, py34): 3.4 is not available, the nearest newer"),
    ("httpie", "bug-5", "3.9", ".travis.yml python (2.6, 2.7, 3.1, 3.2): 3.2 is not available, the nearest newer"),
    ("youtube-dl", "bug-1", "3.9", "tox.ini envlist (py26, py27, py33, py34, py35): 3.5 is not available, "
                                   "the nearest newer"),
    ("youtube-dl", "bug-43", "3.9", "tox.ini envlist (py26, py27, py33): 3.3 is not available, the nearest newer"),
]


@pytest.fixture(scope="module")
def clones(shared_data, tmp_path_factory):
    made: dict[str, object] = {}

    def clone(project: str, tag: str):
        if project not in made:
            target = tmp_path_factory.mktemp("realbugs") / project
            subprocess.run(["git", "clone", "-q", str(shared_data / "realbugs" / f"{project}.bundle"), str(target)],
                           check=True, capture_output=True)
            made[project] = target
        subprocess.run(["git", "-c", "advice.detachedHead=false", "checkout", "-q", tag], cwd=made[project],
                       check=True, capture_output=True)
        return made[project]

    return clone


@pytest.mark.parametrize("project, tag, chosen, source", REALBUGS)
def test_realbugs(clones, project, tag, chosen, source):
    choice = choose_python(load_checkout(clones(project, tag)), available=AVAILABLE)
    assert (choice.version, choice.source) == (chosen, source)


def test_travis_python_list_is_the_last_source_before_the_default():
    travis = "language: python\npython:\n  - 2.6\n  - 2.7\n  - 3.1\n  - '3.2'\n  - pypy\n"
    choice = choose_python(checkout({".travis.yml": travis}), available=("3.9", "3.11", "3.13"))
    assert (choice.version, choice.wanted) == ("3.9", "2.6, 2.7, 3.1, 3.2, pypy")
    assert choice.source.startswith(".travis.yml python")
    matrix = "language: python\njobs:\n  include:\n    - python: '3.12'\n    - python: '3.13'\n"
    assert choose_python(checkout({".travis.yml": matrix}), available=("3.9", "3.11", "3.13")).version == "3.13"
    # tox's envlist says more than Travis; a broken .travis.yml says nothing
    both = {".travis.yml": travis, "tox.ini": "[tox]\nenvlist = py313\n"}
    assert choose_python(checkout(both), available=("3.9", "3.11", "3.13")).version == "3.13"
    assert choose_python(checkout({".travis.yml": "python: [\n"}), available=("3.9", "3.11")).source == "default"


def test_a_floor_only_requires_python_yields_to_the_versions_the_ci_tested():
    """python_requires='>=2.6' says what the project still runs on; its tox envlist and Travis say what was
    tested: the nearest available to those wins, and the source says both."""
    setup = "from setuptools import setup\nsetup(name='x', python_requires='>=2.6')\n"
    tox = "[tox]\nenvlist = py27, py36, py37\n"
    choice = choose_python(checkout({"setup.py": setup, "tox.ini": tox}), available=("3.9", "3.11", "3.13"))
    assert choice.version == "3.9" and choice.source.startswith("tox.ini envlist (py27, py36, py37)")
    assert choice.source.endswith("python_requires >=2.6 is only a floor")
    travis = choose_python(checkout({"setup.py": setup, ".travis.yml": "python:\n  - 3.6\n"}),
                           available=("3.9", "3.11"))
    assert travis.version == "3.9" and travis.source.startswith(".travis.yml python")
    classifiers = setup.replace("python_requires='>=2.6'", "python_requires='>=3.5', classifiers=["
                                "'Programming Language :: Python :: 3.6', 'Programming Language :: Python :: 3.7'])")
    assert choose_python(checkout({"setup.py": classifiers}), available=("3.9", "3.11")).version == "3.9"
    # an upper bound is authoritative, and a tested version it excludes is passed over
    bounded = setup.replace(">=2.6", ">=3.10,<3.12")
    assert choose_python(checkout({"setup.py": bounded, "tox.ini": tox}), available=("3.9", "3.11")).version == "3.11"
    # nothing else names a version: the floor decides as before (the default, which it allows)
    assert choose_python(checkout({"setup.py": setup}), available=("3.9", "3.11")).version == "3.11"


def test_the_test_jobs_of_a_github_workflow_name_the_pythons_the_ci_tested():
    workflow = ("name: CI\non: [push]\njobs:\n  build:\n    runs-on: ubuntu-latest\n    strategy:\n      matrix:\n"
                "        python-version: [3.6, 3.7, 3.8]\n    steps:\n      - uses: actions/setup-python@v2\n"
                "        with:\n          python-version: ${{ matrix.python-version }}\n"
                "      - run: python -m unittest\n  lint:\n    runs-on: ubuntu-latest\n    steps:\n"
                "      - uses: actions/setup-python@v2\n        with:\n          python-version: '3.12'\n"
                "      - run: flake8\n")
    setup = "from setuptools import setup\nsetup(name='x', python_requires='>=3.6')\n"
    choice = choose_python(checkout({"setup.py": setup, ".github/workflows/test.yml": workflow}),
                           available=("3.9", "3.11", "3.13"))
    assert choice.version == "3.9" and choice.source.startswith(".github/workflows/test.yml python-version")
