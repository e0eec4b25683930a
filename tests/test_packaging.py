"""The distribution's metadata and packages, as the build backend reads pyproject.toml.

`pip install -e .` warned a new admin that `project.license` as a TOML table is deprecated
(setuptools stops accepting it in February 2027). The metadata is built here, as pip's build
step does, with every warning an error.
"""

import shutil
import subprocess
import sys
import tomllib
import zipfile

from packaging.licenses import canonicalize_license_expression
from setuptools import find_namespace_packages

from tests.conftest import REPO

PACKAGES = ("core", "service", "workers", "demo")  # the demo LMS: a program of its own
WHEEL = (
    "import sys\nfrom setuptools import build_meta\nprint(build_meta.build_wheel(sys.argv[1]))\n"
)
BUILD = (
    "import sys\n"
    "from setuptools import build_meta\n"
    "print(build_meta.prepare_metadata_for_build_wheel(sys.argv[1]))\n"
)


def test_the_license_is_an_spdx_expression():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert isinstance(project["license"], str), project["license"]
    assert canonicalize_license_expression(project["license"]) == project["license"]


def test_the_metadata_builds_without_a_warning(tmp_path):
    for name in ("pyproject.toml", "README.md"):  # a copy: the build writes an egg-info
        shutil.copy(REPO / name, tmp_path / name)
    for package in PACKAGES:
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").touch()
    (tmp_path / "meta").mkdir()
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", BUILD, str(tmp_path / "meta")],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    metadata = (tmp_path / "meta" / done.stdout.split()[-1] / "METADATA").read_text()
    assert "License-Expression: MIT" in metadata


def test_the_wheel_holds_the_program_and_no_test_helper():
    """tests/, testkit/ (the helpers tests and benchmarks share) and benchmarks/ stay home:
    the wheel's packages are the ones pyproject's `packages.find` finds, as setuptools does
    (namespace packages included: pyproject's default)."""
    find = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = find_namespace_packages(where=str(REPO), **find["packages"]["find"])
    assert {name.split(".")[0] for name in found} == set(PACKAGES)


def test_the_wheel_holds_the_templates_of_the_tool_and_of_the_demo_lms(tmp_path):
    """The demo LMS's pages are package data of its own top-level package (demo/): a wheel
    built from pyproject.toml, as `pip install` builds one, holds every template of both."""
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    for package in PACKAGES:
        shutil.copytree(
            REPO / package, source / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    done = subprocess.run(
        [sys.executable, "-c", WHEEL, str(tmp_path / "dist")],
        cwd=source, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    with zipfile.ZipFile(tmp_path / "dist" / done.stdout.split()[-1]) as wheel:
        held = set(wheel.namelist())
    templates = [
        path.relative_to(REPO).as_posix()
        for package in ("demo", "service/web")
        for path in sorted((REPO / package / "templates").rglob("*.html"))
    ]
    assert any(t.startswith("demo/templates/demo/") for t in templates)
    assert [t for t in templates if t not in held] == []
