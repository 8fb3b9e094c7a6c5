"""bot/environment/install/plan.py: which pip commands rebuild a repository's test environment, read from
repositories made here (and from three real projects of the realbugs corpus); the relocated requirements files are
checked with the real pip (offline, --dry-run)."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bot.checkout.repository import Checkout, load_checkout
from bot.environment.install.plan import BUILD_DIR, InstallPlan, install_plan
from bot.errors import UserError

BASE = {"pkg/__init__.py": "def answer():\n    return 42\n",
        "tests/test_pkg.py": "from pkg import answer\n\n\ndef test_answer():\n    assert answer() == 42\n"}


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def make_repo(root: Path, files: dict[str, str]) -> Checkout:
    """A real repository on disk (committed with git), read the way `fixbot fix` reads it."""
    root.mkdir(parents=True, exist_ok=True)
    for path, text in {**BASE, **files}.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(textwrap.dedent(text))
    git("init", "-q", cwd=root)
    git("add", ".", cwd=root)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init", cwd=root)
    return load_checkout(root)


def steps(plan: InstallPlan) -> list[tuple]:
    """Each step as (argv, {file: text}) (what and source are checked separately)."""
    return [(step.argv, dict(step.files)) for step in plan.steps]


PIP = ("pip", "install")
TESTS_REQUIRE = ("pip", "install", "-r", f"{BUILD_DIR}/tests-require-setup-py.txt")
TOX = ("pip", "install", "-r", f"{BUILD_DIR}/tox-deps.txt")

CASES = {
    "setup.py literals": (
        {"setup.py": """\
            from setuptools import setup
            setup(name="pkg", install_requires=["requests>=2"], tests_require=["pytest", "mock>=3"],
                  extras_require={"test": ["pytest-cov"], "docs": ["sphinx"], ":sys_platform == 'win32'": ["colorama"]})
            """},
        [((*PIP, ".[test]"), {}), (TESTS_REQUIRE, {"tests-require-setup-py.txt": "pytest\nmock>=3\n"})],
        ("setup.py",)),
    "setup.py through module-level names": (
        {"setup.py": """\
            import setuptools
            TESTS = ("pytest",)
            EXTRAS = {"dev:python_version >= '3'": ["black"], "Testing": ["hypothesis"], "s3": ["boto3"]}
            if __name__ == "__main__":
                setuptools.setup(name="pkg", tests_require=TESTS, extras_require=EXTRAS)
            """},
        [((*PIP, ".[Testing,dev]"), {}), (TESTS_REQUIRE, {"tests-require-setup-py.txt": "pytest\n"})],
        ("setup.py",)),
    "setup.py computed values: the project without extras": (
        {"setup.py": """\
            from setuptools import setup
            def extras():
                return {"test": ["pytest"]}
            setup(name="pkg", extras_require=extras(), tests_require=["pytest"] + ["mock"])
            """},
        [((*PIP, "."), {})],
        ("setup.py",)),
    "setup.cfg only": (
        {"setup.cfg": """\
            [metadata]
            name = pkg
            [options]
            packages = find:
            install_requires =
                requests
            tests_require =
                pytest
                # a comment
                responses
            [options.extras_require]
            testing = pytest-cov
            docs = sphinx
            """},
        [((*PIP, ".[testing]"), {}),
         (("pip", "install", "-r", f"{BUILD_DIR}/tests-require-setup-cfg.txt"),
          {"tests-require-setup-cfg.txt": "pytest\nresponses\n"})],
        ("setup.cfg",)),
    "hatchling with optional-dependencies": (
        {"pyproject.toml": """\
            [build-system]
            requires = ["hatchling"]
            build-backend = "hatchling.build"
            [project]
            name = "pkg"
            version = "1.0"
            dependencies = ["attrs"]
            [project.optional-dependencies]
            docs = ["sphinx"]
            Dev = ["ruff"]
            test = ["pytest"]
            """},
        [((*PIP, ".[test,Dev]"), {})],
        ("pyproject.toml",)),
    "flit with optional-dependencies": (
        {"pyproject.toml": """\
            [build-system]
            requires = ["flit_core >=3.2,<4"]
            build-backend = "flit_core.buildapi"
            [project]
            name = "pkg"
            version = "1.0"
            description = "x"
            [project.optional-dependencies]
            testing = ["pytest"]
            """},
        [((*PIP, ".[testing]"), {})],
        ("pyproject.toml",)),
    "pyproject without extras": (
        {"pyproject.toml": '[project]\nname = "pkg"\nversion = "1"\ndependencies = ["attrs"]\n'},
        [((*PIP, "."), {})],
        ("pyproject.toml",)),
    "dependency groups without a project": (
        {"pyproject.toml": """\
            [dependency-groups]
            lint = ["ruff"]
            test = ["pytest"]
            dev = [{include-group = "test"}, "ipython"]
            """},
        [(("pip", "install", "--group", "test"), {}), (("pip", "install", "--group", "dev"), {})],
        ("pyproject.toml",)),
    "requirements files, one includes another": (
        {"requirements.txt": "requests  # runtime\n", "requirements-dev.txt": "-r requirements.txt\n-e .\npytest\n",
         "test-requirements.txt": "# nothing yet\n\n"},
        [(("pip", "install", "-r", "requirements-dev.txt"), {})],
        ("requirements-dev.txt", "requirements.txt")),  # sources: the installed files, then what they include
    "requirements/ folder: the test and dev files": (
        {"requirements/base.txt": "attrs\n", "requirements/docs.txt": "sphinx\n",
         "requirements/test.txt": "-r base.txt\npytest\n",
         "requirements/dev_py3.txt": "--requirement=test.txt\nipython\n",
         "requirements/tests-extra.txt": "hypothesis\n"},
        [(("pip", "install", "-r", "requirements/dev_py3.txt"), {}),
         (("pip", "install", "-r", "requirements/tests-extra.txt"), {})],
        ("requirements/dev_py3.txt", "requirements/tests-extra.txt", "requirements/test.txt",
         "requirements/base.txt")),
    "constraints and hashes pass through, one file per pip run": (
        {"requirements.txt": "--index-url https://pypi.example/simple\n-c constraints.txt\n"
                             "requests==2.31.0 \\\n    --hash=sha256:" + "a" * 64 + "\n",
         "requirements_dev.txt": "--extra-index-url=https://user:${TOKEN}@private.example/simple\n"
                                 "-i https://mirror.example/simple\n-f https://wheels.example/\n-f ./wheels\npytest\n",
         "constraints.txt": "requests<3\n"},
        [(("pip", "install", "-r", "requirements.txt"), {}), (("pip", "install", "-r", "requirements_dev.txt"), {})],
        ("requirements.txt", "requirements_dev.txt", "constraints.txt")),
    "tox deps with factors, substitutions and includes": (
        {"tox.ini": """\
            [tox]
            envlist = lint, py27, py{36,37}-django{22,30}

            [base]
            deps = attrs

            [testenv]
            deps =
                pytest  # the runner
                py27: mock
                !py27: trio
                py{27,37}-django22: Django>=2.2,<3
                django30: Django>=3.0,<3.1
                lint,py36: flake8
                -r{toxinidir}/requirements/base.txt
                -c {toxinidir}/constraints.txt
                {[base]deps}
                {env:EXTRA_DEP:six}
                {toxworkdir}/dist/other.whl
            extras = s3
            commands = pytest {posargs}
            """,
         "requirements/base.txt": "requests\n", "constraints.txt": "requests<3\n"},
        [(TOX, {"tox-deps.txt": "pytest\ntrio\nDjango>=2.2,<3\n-r ../requirements/base.txt\n"
                                "-c ../constraints.txt\nattrs\nsix\n"})],
        ("tox.ini", "requirements/base.txt", "constraints.txt")),
    "nothing declared": ({}, [], ()),
}


@pytest.mark.parametrize("files, expected, sources", CASES.values(), ids=CASES.keys())
def test_the_plan_installs_what_the_repository_declares(tmp_path, files, expected, sources):
    plan = install_plan(make_repo(tmp_path / "repo", files))
    assert steps(plan) == expected
    assert plan.sources == sources and not plan.custom
    assert all(step.source in sources and step.what for step in plan.steps)


def test_what_the_user_is_told_and_the_tox_environment_chosen(tmp_path):
    plan = install_plan(make_repo(tmp_path / "repo", {**CASES["setup.py literals"][0],
                                                      **CASES["tox deps with factors, substitutions and includes"][0]}))
    assert [step.what for step in plan.steps] == [
        "the project with its extras test, s3 (setup.py)", "tests_require of setup.py",
        "tox's deps for py37-django22 (tox.ini)"]
    assert plan.steps[0].argv == (*PIP, ".[test,s3]")  # tox's `extras` join the test extras
    assert plan.notes == ("tox.ini: deps left out (a tox substitution fixbot cannot make): "
                          "{toxworkdir}/dist/other.whl",)


def test_the_python_the_tests_run_on_picks_the_tox_environment(tmp_path):
    checkout = make_repo(tmp_path / "repo", CASES["tox deps with factors, substitutions and includes"][0])
    deps = {python: dict(install_plan(checkout, python=python).steps[0].files)["tox-deps.txt"].splitlines()[:3]
            for python in ("3.6", "3.7", "3.12", None)}
    assert deps == {"3.6": ["pytest", "trio", "flake8"], "3.7": ["pytest", "trio", "Django>=2.2,<3"],
                    "3.12": ["pytest", "trio", "Django>=2.2,<3"], None: ["pytest", "trio", "Django>=2.2,<3"]}
    assert install_plan(checkout, python="3.6").inputs_digest != install_plan(checkout).inputs_digest


def test_index_urls_are_reported_from_every_file_read(tmp_path):
    files = CASES["constraints and hashes pass through, one file per pip run"][0]
    plan = install_plan(make_repo(tmp_path / "repo", files))
    assert plan.index_urls == ("https://pypi.example/simple", "https://user:${TOKEN}@private.example/simple",
                               "https://mirror.example/simple", "https://wheels.example/")
    tox = install_plan(make_repo(tmp_path / "tox", {"tox.ini": "[testenv]\ndeps =\n  -r requirements/ci.txt\n",
                                                    "requirements/ci.txt": "-i https://ci.example/simple\npytest\n"}))
    assert tox.index_urls == ("https://ci.example/simple",)


@pytest.mark.parametrize("where, text", [
    ("setup.cfg", "[tox:tox]\nenvlist = py38\n[testenv]\ndeps =\n    pytest\n    py27: mock\n"),
    ("pyproject.toml", '[tool.tox]\nlegacy_tox_ini = """\n[tox]\nenvlist = py38\n[testenv]\ndeps =\n    pytest\n'
                       '    py27: mock\n"""\n'),
    ("pyproject.toml", '[tool.tox.env_run_base]\ndeps = ["pytest", "-r {tox_root}/req.txt"]\n'),
])
def test_tox_configuration_outside_tox_ini(tmp_path, where, text):
    plan = install_plan(make_repo(tmp_path / "repo", {where: text}))
    tox = [step for step in plan.steps if step.argv == TOX]
    expected = "pytest\n-r ../req.txt\n" if "req.txt" in text else "pytest\n"
    assert [dict(step.files) for step in tox] == [{"tox-deps.txt": expected}] and tox[0].source == where


def test_a_users_setup_commands_replace_inference(tmp_path):
    checkout = make_repo(tmp_path / "repo", CASES["setup.py literals"][0])
    plan = install_plan(checkout, setup=["pip install -e '.[test]'", "  ", "make deps && pip install tox"])
    assert [(step.argv, step.source) for step in plan.steps] == [
        (("sh", "-c", "pip install -e '.[test]'"), "setup"), (("sh", "-c", "make deps && pip install tox"), "setup")]
    assert plan.custom and plan.sources == ("setup",)
    other = install_plan(checkout, setup=["pip install -e '.[test]'"])
    assert len({plan.inputs_digest, other.inputs_digest, install_plan(checkout).inputs_digest}) == 3


ALL_KINDS = {
    "setup.py": "from setuptools import setup\nsetup(name='pkg', tests_require=['pytest'])\n",
    "setup.cfg": "[metadata]\nname = pkg\n",
    "pyproject.toml": "[build-system]\nrequires = ['setuptools']\nbuild-backend = 'setuptools.build_meta'\n",
    "requirements.txt": "-r requirements/common.txt\n-c constraints.txt\n",
    "requirements/common.txt": "attrs\n",
    "constraints.txt": "attrs<30\n",
    "requirements.in": "attrs\n",
    "tox.ini": "[testenv]\ndeps = -r{toxinidir}/ci/tox-reqs.txt\n",
    "ci/tox-reqs.txt": "pytest\n",
}


def test_the_digest_changes_with_every_declaration_and_nothing_else(tmp_path):
    checkout = make_repo(tmp_path / "repo", ALL_KINDS)
    base = install_plan(checkout).inputs_digest
    reordered = Checkout(root=checkout.root, files=dict(reversed(list(checkout.files.items()))))
    assert install_plan(reordered).inputs_digest == base
    changed = {path: install_plan(Checkout(root=checkout.root, files={**checkout.files, path: checkout.files[path]
                                                                      + b"\n# changed\n"})).inputs_digest
               for path in ALL_KINDS}
    assert base not in changed.values() and len(set(changed.values())) == len(ALL_KINDS), changed
    code = {**checkout.files, "pkg/__init__.py": b"def answer():\n    return 41\n", "README.md": b"hello\n"}
    assert install_plan(Checkout(root=checkout.root, files=code)).inputs_digest == base
    appeared = {**checkout.files, "requirements-test.txt": b"pytest\n"}  # a new file: a new step, a new digest
    assert install_plan(Checkout(root=checkout.root, files=appeared)).inputs_digest not in (base, *changed.values())


def test_a_pyproject_that_is_not_toml_is_one_clear_error(tmp_path):
    with pytest.raises(UserError, match=r"^pyproject.toml is not valid TOML: "):
        install_plan(make_repo(tmp_path / "repo", {"pyproject.toml": "[project\nname = 'x'\n"}))


def test_pip_reads_the_written_files_where_the_plan_puts_them(tmp_path):
    """The real pip (offline, --dry-run, everything already installed here): the includes of the files written
    under .fixbot-build/ are found, the dependency groups are read, the py27-only line is not asked for."""
    checkout = make_repo(tmp_path / "repo", {
        "pyproject.toml": '[dependency-groups]\ntest = ["pytest"]\n',
        "tox.ini": "[tox]\nenvlist = py27,py311\n[testenv]\ndeps =\n  -r{toxinidir}/requirements/base.txt\n"
                   "  -c {toxinidir}/constraints.txt\n  py27: no-such-package-for-fixbot\n",
        "requirements/base.txt": "packaging\n", "constraints.txt": "packaging>=20\n",
        "requirements-test.txt": "-r requirements/base.txt\npytest>=7\n"})
    plan = install_plan(checkout)
    assert [step.argv[2] for step in plan.steps] == ["--group", "-r", "-r"]
    for step in plan.steps:
        for name, text in step.files:
            (tmp_path / "repo" / BUILD_DIR / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / "repo" / BUILD_DIR / name).write_text(text)
        command = [sys.executable, "-m", "pip", "install", "--dry-run", "--no-index", "--disable-pip-version-check",
                   *step.argv[2:]]
        done = subprocess.run(command, cwd=tmp_path / "repo", capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, (step.argv, done.stdout + done.stderr)
        assert "Would install" not in done.stdout  # all satisfied by what is installed here


def test_pip_installs_the_project_with_its_install_requires_and_the_extras_asked_for(tmp_path):
    """The real pip (offline, --dry-run, the setuptools installed here): the project step of a setup.py-only
    project pulls in install_requires and the test extra."""
    checkout = make_repo(tmp_path / "repo", {"setup.py": """\
        from setuptools import setup
        REQUIRES = ["packaging>=20"]
        setup(name="pkg", version="1.0", packages=["pkg"], install_requires=REQUIRES,
              extras_require={"test": ["pytest"], "docs": ["no-such-package-for-fixbot"]})
        """})
    (step,) = install_plan(checkout).steps
    assert step.argv == (*PIP, ".[test]")
    report = tmp_path / "report.json"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-index", "--no-build-isolation",
                           "--disable-pip-version-check", "--report", str(report), *step.argv[2:]],
                          cwd=tmp_path / "repo", capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    (installed,) = json.loads(report.read_text())["install"]  # packaging and pytest are already here
    assert installed["metadata"]["name"] == "pkg" and installed["requested_extras"] == ["test"]
    assert {"packaging>=20", 'pytest; extra == "test"'} <= set(installed["metadata"]["requires_dist"])


def realbug(shared_data: Path, tmp_path: Path, name: str) -> Checkout:
    target = tmp_path / name
    git("clone", "-q", str(shared_data / "realbugs" / f"{name}.bundle"), str(target), cwd=tmp_path)
    git("checkout", "-q", "bug-1", cwd=target)
    return load_checkout(target)


def test_httpie_installs_itself_its_tests_require_its_dev_requirements_and_tox_deps(shared_data, tmp_path):
    plan = install_plan(realbug(shared_data, tmp_path, "httpie"))
    assert steps(plan) == [
        ((*PIP, "."), {}),  # install_requires (requests, Pygments) through pip; its extras are markers, not names
        (TESTS_REQUIRE, {"tests-require-setup-py.txt": "pytest-httpbin\npytest\nmock\n"}),
        (("pip", "install", "-r", "requirements-dev.txt"), {}),
        (TOX, {"tox-deps.txt": "mock\npytest\npytest-httpbin>=0.0.6\n"})]
    assert plan.sources == ("setup.py", "requirements-dev.txt", "tox.ini") and plan.index_urls == ()
    assert plan.steps[-1].what == "tox's deps for py35 (tox.ini)"


def test_pysnooper_installs_itself_with_its_tests_extra_and_tox_deps(shared_data, tmp_path):
    plan = install_plan(realbug(shared_data, tmp_path, "PySnooper"))
    # requirements.txt holds only comments: no step; python_toolbox comes from tox's deps (and the tests extra)
    assert steps(plan) == [((*PIP, ".[tests]"), {}), (TOX, {"tox-deps.txt": "pytest\npython_toolbox\n"})]
    assert plan.steps[-1].what == "tox's deps for py38 (tox.ini)"  # the newest Python 3 listed


def test_youtube_dl_installs_itself_and_tox_deps(shared_data, tmp_path):
    plan = install_plan(realbug(shared_data, tmp_path, "youtube-dl"))
    assert steps(plan) == [((*PIP, "."), {}), (TOX, {"tox-deps.txt": "nose\ncoverage\n"})]
    assert plan.sources == ("setup.py", "tox.ini") and plan.notes == ()


def test_a_project_that_may_not_build_falls_back_to_its_static_dependencies(tmp_path):
    # a uv-style application: [project] without [build-system], several top-level modules
    pyproject = ('[project]\nname = "app"\nversion = "0"\ndependencies = ["tabulate==0.9.0"]\n'
                 '[project.optional-dependencies]\ntest = ["six", "app[extra]"]\nextra = ["toml"]\n')
    plan = install_plan(make_repo(tmp_path, {"pyproject.toml": pyproject, "a.py": "", "b.py": ""}))
    fallback = plan.steps[0].fallback
    assert plan.steps[0].argv == ("pip", "install", ".[test]") and fallback is not None
    assert fallback.argv == ("pip", "install", "-r", f"{BUILD_DIR}/project-dependencies.txt")
    assert fallback.files == (("project-dependencies.txt", "tabulate==0.9.0\nsix\n"),)  # not app[extra] itself
    dynamic = '[project]\nname = "app"\nversion = "0"\ndynamic = ["dependencies"]\n'
    assert install_plan(make_repo(tmp_path / "d", {"pyproject.toml": dynamic})).steps[0].fallback is None


def test_of_several_tox_environments_for_one_python_the_plain_run_is_read():
    from bot.checkout.repository import Checkout
    from bot.environment.install.tox import read_tox

    ini = ("[tox]\nenvlist = py37-{cdh,core,postgres}\n\n[testenv]\ndeps =\n  mock\n  cdh: snakebite\n"
           "  cdh: hdfs\n  postgres: psycopg2\n")
    found = read_tox(Checkout("/x", {"tox.ini": ini.encode()}), python="3.7")
    assert found is not None and found.env == "py37-core" and found.deps == ("mock",)
    first = read_tox(Checkout("/x", {"tox.ini": ini.replace("cdh,core,postgres", "a,b").encode()}), python="3.7")
    assert first is not None and first.env == "py37-a"  # equals: the first listed


def test_an_extra_that_provides_what_the_tests_import_is_installed_whatever_its_name():
    from bot.checkout.repository import Checkout
    from bot.environment.install.plan import install_plan

    setup = ("from setuptools import setup\nsetup(name='blk', extras_require={'d': ['aiohttp>=3.3.2', "
             "'aiohttp-cors'], 'colorama': ['colorama>=0.4']})\n")
    test = "try:\n    from aiohttp.test_utils import AioHTTPTestCase\nexcept ImportError:\n    pass\n"
    plan = install_plan(Checkout("/x", {"setup.py": setup.encode(), "tests/test_blk.py": test.encode()}))
    assert plan.steps[0].argv == ("pip", "install", ".[d]") and "extras d" in plan.steps[0].what
    alone = install_plan(Checkout("/x", {"setup.py": setup.encode(), "tests/test_blk.py": b"import blk\n"}))
    assert alone.steps[0].argv == ("pip", "install", ".")
