"""The wheel remora builds is remora: every module, and the prelude as package data (issue 29.1,
decisions.md D57).  An editable install reads the prelude from the checkout, so only a built
wheel shows whether an installed remora can find it.

One wheel is built per run (``pip wheel --no-deps``: without build isolation where this
environment's setuptools can build wheels itself, else in pip's isolated build environment, from
the package index as ``pip install`` does).  ``.ci/run`` goes further: it installs the wheel, with
the jax extra, in a fresh virtual environment and runs an example there.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT, subprocess_env


def _can_build_without_isolation() -> bool:
    """Whether setuptools here has ``bdist_wheel`` (its own from 70.1, else the ``wheel`` package)."""
    return (importlib.util.find_spec("setuptools.command.bdist_wheel") is not None
            or importlib.util.find_spec("wheel") is not None)


#: what a build reads: a copy of these, so that no build/ folder left in the checkout by an
#: earlier build (setuptools reuses it) can lend the wheel files the project no longer ships
BUILT_FROM = ("pyproject.toml", "README.md", "remora", "prelude")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("dist")
    for name in BUILT_FROM:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(ROOT / name, source / name)
    isolation = ["--no-build-isolation"] if _can_build_without_isolation() else []
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", *isolation, "-w", str(out), str(source)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    (built,) = out.glob("remora-*.whl")
    return built


def test_the_wheel_holds_every_module_of_remora(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "remora").rglob("*.py")}
    assert modules - names == set(), "pyproject.toml's package list misses these"
    assert "remora/py.typed" in names


def test_the_wheel_holds_the_prelude_as_package_data(wheel):
    archive = zipfile.ZipFile(wheel)
    shipped = {n.removeprefix("remora/prelude/") for n in archive.namelist() if n.startswith("remora/prelude/")}
    files = sorted(p.name for p in (ROOT / "prelude").glob("*.rem"))
    assert files and set(files) <= shipped
    for name in files:
        assert archive.read(f"remora/prelude/{name}") == (ROOT / "prelude" / name).read_bytes()


def test_remora_unpacked_from_the_wheel_runs_on_its_own_prelude(wheel, tmp_path):
    """The wheel's files alone (first on the path, run from a folder outside the checkout): the
    prelude is the wheel's copy, and a program using it runs."""
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    env = {**subprocess_env(), "PYTHONPATH": str(site), "REMORA_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("REMORA_PRELUDE", None)
    where = subprocess.run([sys.executable, "-c", "from remora.interfaces.prelude_cache import prelude_files as f; "
                            "print(*f(), sep='\\n')"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert where.returncode == 0, where.stderr
    assert [Path(p).parent for p in where.stdout.split()] == [site / "remora" / "prelude"]
    r = subprocess.run([sys.executable, "-m", "remora", "eval", "-e", "(mean (sum [[1.0 2.0 3.0] [4.0 5.0 6.0]]))"],
                       capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert (r.returncode, r.stdout, r.stderr) == (0, "10.5\n", "")
