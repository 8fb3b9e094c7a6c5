"""Declared dependencies: parsed from pyproject.toml and requirements files, baked into a cached image with
real pip and real Docker, importable in the sandbox with the network off."""
from __future__ import annotations

import time

import pytest
from docker.errors import ImageNotFound

from bot.errors import UserError
from bot.fix.environment import (STAGE_LABEL, DependencyInstallFailed, Requirements, declared_requirements,
                                 env_image_tag, prepare_environment, python_path)
from bot.fix.types import Checkout
from sandbox import open_sandbox

from .fix_examples import EXAMPLES

pytestmark = pytest.mark.timeout(600)

# Small, pure Python, and not in the Debian base image (checked below): the import proves the build worked.
TEST_REQUIREMENT = "tabulate==0.9.0"


def checkout(files: dict[str, str]) -> Checkout:
    return Checkout("/nowhere", {path: text.encode() for path, text in files.items()})


def lines(files: dict[str, str]) -> tuple[str, ...]:
    return declared_requirements(checkout(files)).lines


# --- parsing -------------------------------------------------------------------------------------------------

def test_nothing_declared():
    reqs = declared_requirements(checkout({"calc.py": "x = 1\n", "tests/test_calc.py": ""}))
    assert reqs == Requirements((), ()) and len(reqs.digest) == 64


def test_pyproject_dependencies_and_test_groups():
    pyproject = """
[project]
name = "demo"
dependencies = ["requests>=2.31", "attrs; python_version >= '3.8'"]
[project.optional-dependencies]
test = ["pytest-mock"]
testing = ["freezegun==1.5.1"]
docs = ["sphinx"]
[dependency-groups]
dev = ["hypothesis>=6", {include-group = "lint"}]
lint = ["ruff"]
"""
    reqs = declared_requirements(checkout({"pyproject.toml": pyproject}))
    assert set(reqs.lines) == {"requests>=2.31", 'attrs; python_version >= "3.8"', "pytest-mock",
                               "freezegun==1.5.1", "hypothesis>=6"}
    assert reqs.sources == ("pyproject.toml",)


def test_requirements_files_includes_comments_and_the_project_itself():
    files = {
        "requirements.txt": "# runtime\n\n-r requirements/base.txt\n-e .\n.\nattrs==23.2.0  # pinned\n",
        "requirements/base.txt": "six>=1.16\n  \n--requirement ../requirements.txt\n",  # a cycle: read once
        "requirements/dev.txt": "-r base.txt\npytest-mock \\\n  >=3.0\n",
        "requirements-test.txt": "Freezegun==1.5.1\n#done\n",
        "docs/requirements.txt": "sphinx\n",  # not at the root: not a source
    }
    reqs = declared_requirements(checkout(files))
    assert reqs.lines == ("six>=1.16", "attrs==23.2.0", "freezegun==1.5.1", "pytest-mock>=3.0")
    assert set(reqs.sources) == {"requirements.txt", "requirements/base.txt", "requirements/dev.txt",
                                 "requirements-test.txt"}


def test_project_extras_named_in_a_requirements_file_are_read_from_pyproject():
    files = {"requirements-dev.txt": "-e .[docs]\n",
             "pyproject.toml": '[project]\nname = "x"\n[project.optional-dependencies]\ndocs = ["sphinx"]\n'}
    assert lines(files) == ("sphinx",)


def test_a_group_that_names_the_project_itself_expands_its_extras():
    pyproject = """
[project]
name = "My_Demo"
[project.optional-dependencies]
dev = ["my-demo[lint,docs]", "ipdb"]
lint = ["ruff"]
docs = ["sphinx"]
all = ["everything"]
"""
    assert lines({"pyproject.toml": pyproject}) == ("ipdb", "sphinx", "ruff")


def test_digest_ignores_order_spelling_and_files():
    a = declared_requirements(checkout({"requirements.txt": "More_Itertools==10.5.0\nsix\n"}))
    b = declared_requirements(checkout({"pyproject.toml": '[project]\ndependencies = ["six", "more-itertools'
                                                          '==10.5.0"]\n'}))
    c = declared_requirements(checkout({"requirements.txt": "more-itertools==10.4.0\nsix\n"}))
    assert a.digest == b.digest != c.digest


@pytest.mark.parametrize("line, message", [
    ("-e git+https://example.org/x.git#egg=x", r"requirements\.txt line 2: the option '-e'"),
    ("./vendor/pkg", r"requirements\.txt line 2: '\./vendor/pkg' is not a requirement specifier"),
    ("/abs/pkg.whl", r"requirements\.txt line 2: .* is not a requirement specifier"),
    ("pkg @ https://example.org/pkg-1.0.whl", r"requirements\.txt line 2: .* points at a URL"),
    ("https://example.org/pkg-1.0.whl", r"requirements\.txt line 2: .* is not a requirement specifier"),
    ("--index-url https://example.org/simple", r"requirements\.txt line 2: the option '--index-url'"),
    ("-c constraints.txt", r"requirements\.txt line 2: the option '-c'"),
    ("-r ../outside.txt", r"requirements\.txt line 2: -r \.\./outside\.txt points outside the repository"),
    ("-r /etc/passwd", r"requirements\.txt line 2: -r /etc/passwd points outside the repository"),
    ("-r missing.txt", r"requirements\.txt line 2: -r missing\.txt: no such file"),
    ("requests >>> 2", r"requirements\.txt line 2: 'requests >>> 2' is not a requirement specifier"),
])
def test_bad_requirement_lines_are_user_errors_naming_file_and_line(line, message):
    with pytest.raises(UserError, match=message) as caught:
        lines({"requirements.txt": f"six\n{line}\n"})
    assert "\n" not in str(caught.value)


def test_includes_outside_the_repository_are_refused_from_subdirectories():
    with pytest.raises(UserError, match=r"requirements/dev\.txt line 1: -r \.\./\.\./x\.txt points outside"):
        lines({"requirements/dev.txt": "-r ../../x.txt\n"})


@pytest.mark.parametrize("pyproject, message", [
    ('[project\nname = "x"\n', r"pyproject\.toml is not valid TOML"),
    ('[project]\ndependencies = "requests"\n', r"pyproject\.toml: \[project\]\.dependencies must be a list"),
    ('[project]\ndependencies = ["requests >>> 2"]\n', r"pyproject\.toml \[project\]\.dependencies: .* is not"),
    ('[project]\ndependencies = ["x @ file:///tmp/x"]\n', r"pyproject\.toml \[project\]\.dependencies: .* URL"),
    ("project = 3\n", r"pyproject\.toml: \[project\], .* must be tables"),
])
def test_malformed_pyproject_is_a_user_error(pyproject, message):
    with pytest.raises(UserError, match=message) as caught:
        lines({"pyproject.toml": pyproject})
    assert caught.type is UserError and "\n" not in str(caught.value)


def test_python_path_follows_the_layout():
    assert python_path(checkout({"src/pkg/__init__.py": "", "tests/test_x.py": ""})) == ("src",)
    assert python_path(checkout({"src/mod.py": ""})) == ("src",)
    assert python_path(checkout({"pkg/__init__.py": "", "src/notes.txt": ""})) == ("",)
    assert python_path(checkout({"calc.py": ""})) == ("",)


def test_examples_declare_what_their_readmes_say():
    def declared(name: str) -> tuple[str, ...]:
        root = EXAMPLES / name
        files = {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}
        return declared_requirements(Checkout(str(root), files)).lines

    assert declared("third-party-dep") == ("inflection==0.5.1",)
    assert all(declared(p.name) == () for p in EXAMPLES.iterdir() if p.name != "third-party-dep")


def test_image_tag_depends_on_base_and_requirements():
    a = Requirements(("six",), ("requirements.txt",))
    b = Requirements(("attrs",), ("requirements.txt",))
    assert env_image_tag("sha256:1", a) == env_image_tag("sha256:1", a)
    assert len({env_image_tag("sha256:1", a), env_image_tag("sha256:2", a), env_image_tag("sha256:1", b)}) == 3
    assert env_image_tag("sha256:1", a).startswith("fixbot-env:") and len(env_image_tag("sha256:1", a)) == 23


# --- real pip, real Docker -----------------------------------------------------------------------------------

def test_no_requirements_use_the_base_image_without_a_build(docker_client, sandbox_image):
    log: list[str] = []
    env = prepare_environment(checkout({"calc.py": ""}), base_image=sandbox_image, client=docker_client,
                              log=log.append)
    assert (env.image, env.built, env.pythonpath, env.requirements.lines) == (sandbox_image, False, ("",), ())
    assert len(log) == 1


@pytest.fixture
def fresh_env_image(docker_client, sandbox_image):
    """The tag the test requirement builds, absent before the test and removed after it (it is test-only)."""
    reqs = declared_requirements(checkout({"requirements.txt": TEST_REQUIREMENT}))
    tag = env_image_tag(docker_client.images.get(sandbox_image).id, reqs)

    def remove() -> None:
        try:
            docker_client.images.remove(tag, force=True)
        except ImageNotFound:
            pass

    remove()
    yield tag
    remove()


def test_dependencies_are_built_into_a_cached_image_and_import_offline(docker_client, sandbox_image,
                                                                       fresh_env_image):
    project = checkout({"requirements.txt": f"{TEST_REQUIREMENT}\n", "src/pkg/__init__.py": ""})
    probe = ["python3", "-c", "import tabulate; print(tabulate.__version__)"]
    with open_sandbox("docker", image=sandbox_image, pool_size=1) as sb:
        assert "ModuleNotFoundError" in sb.run({}, probe).stderr, "the base image must not have it already"

    log: list[str] = []
    env = prepare_environment(project, base_image=sandbox_image, client=docker_client, log=log.append)
    assert (env.image, env.built, env.pythonpath) == (fresh_env_image, True, ("src",))
    assert env.requirements.lines == (TEST_REQUIREMENT,) and env.requirements.sources == ("requirements.txt",)
    assert any("pip wheel" in line for line in log) and any("docker build" in line for line in log)
    image = docker_client.images.get(env.image)
    assert image.labels["fixbot.env"] == env.requirements.digest
    assert not any("fixbot-wheels" in str(layer.get("CreatedBy")) and "COPY" in str(layer.get("CreatedBy"))
                   for layer in image.history()), "the wheels must not be a layer of the final image"
    stage = {"label": f"{STAGE_LABEL}={env.image.partition(':')[2]}"}
    assert docker_client.images.list(all=True, filters=stage) == [], "the install stage's image is pruned"

    with open_sandbox("docker", image=env.image, pool_size=1) as sb:
        result = sb.run({}, probe)
        offline = sb.run({}, ["python3", "-c", "import socket; socket.create_connection(('pypi.org', 443), 3)"])
    assert result.ok and result.stdout.strip() == "0.9.0", result.stderr
    assert not offline.ok, "the sandbox must have no network"

    start = time.monotonic()
    again = prepare_environment(project, base_image=sandbox_image, client=docker_client, log=log.append)
    assert (again.image, again.built) == (env.image, False)
    assert time.monotonic() - start < 3 and again.setup_s < 3
    assert "reusing" in log[-1]


def test_a_requirement_pip_cannot_find_is_a_readable_failure(docker_client, sandbox_image):
    project = checkout({"requirements-test.txt": "fixbot-no-such-package-xyz==1.0\n"})
    with pytest.raises(DependencyInstallFailed) as caught:
        prepare_environment(project, base_image=sandbox_image, client=docker_client, log=lambda line: None)
    message = str(caught.value)
    assert isinstance(caught.value, UserError)
    assert message.startswith("installing the dependencies declared in requirements-test.txt failed: pip wheel")
    assert "No matching distribution found for fixbot-no-such-package-xyz==1.0" in message
    assert len(message.splitlines()) <= 16
    tag = env_image_tag(docker_client.images.get(sandbox_image).id, declared_requirements(project))
    with pytest.raises(ImageNotFound):
        docker_client.images.get(tag)


def test_a_failing_docker_build_is_a_readable_failure(docker_client, sandbox_image, tmp_path):
    from bot.fix.environment import _build

    reqs = Requirements(("six",), ("requirements.txt",))
    with pytest.raises(DependencyInstallFailed) as caught:  # no wheels directory: COPY fails
        _build(docker_client, sandbox_image, "fixbot-env:test-no-wheels", reqs, tmp_path)
    message = str(caught.value)
    assert message.startswith("installing the dependencies declared in requirements.txt failed: docker build")
    assert "wheels" in message and len(message.splitlines()) <= 16
    assert docker_client.images.list(filters={"label": f"{STAGE_LABEL}=test-no-wheels"}) == []
