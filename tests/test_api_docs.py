"""The Python API for its users (issue 27): every entry point documented — parameters, returns,
raises, examples — with examples that run (doctest), and typed: ``py.typed`` ships, so mypy reads
remora's own hints for a user's script (no ``import-untyped``) and finds nothing wrong in the API
modules themselves."""

from __future__ import annotations

import doctest
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import remora
from remora.interfaces import api
from remora.primitives import PRIMITIVES

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("module", [api, remora], ids=["api", "remora"])
def test_the_examples_run(module):
    before = dict(PRIMITIVES)
    try:
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    finally:
        for name in [n for n in PRIMITIVES if n not in before]:  # (the register example's)
            del PRIMITIVES[name]
        api._checked.cache_clear()
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("name", ["check", "evaluate", "function", "register", "Function"])
def test_every_entry_point_says_what_it_takes_returns_and_raises(name):
    doc = getattr(remora, name).__doc__
    parts = ("Attributes",) if name == "Function" else ("Parameters", "Examples", ">>> ")
    for part in parts:
        assert part in doc, f"remora.{name} has no {part}"
    if name != "Function":
        assert "Raises" in doc and ("Returns" in doc or name == "register")


def test_py_typed_ships_with_the_package():
    assert (ROOT / "remora" / "py.typed").exists()
    assert 'remora = ["py.typed"]' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


USER_SCRIPT = """\
import numpy as np
import remora

value = remora.evaluate("(+ x 1)", x=np.arange(3))
double = remora.function("(λ ((x [Float])) (* 2.0 x))")
result = double(np.ones(3))
kind: type = remora.check("(+ 1 2)").__class__
try:
    remora.evaluate("(+ 1 2.5)")
except remora.RemoraTypeError as err:
    where: tuple[int, int] = (err.line, err.column)
    text: str = err.message
remora.register("twice-it", "(-> ((Arr Float (Shp))) (Arr Float (Shp)))", lambda a: 2 * a)
"""


def test_mypy_reads_remora_as_an_installed_typed_package(tmp_path):
    """A user's script checked by mypy against remora as an installed package (a site-packages
    entry: here a fresh virtual environment whose ``.pth`` files point at this checkout and at the
    test environment's packages): no ``import-untyped``, no error."""
    mypy = pytest.importorskip("mypy")  # noqa: F841  (in the test extra)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = next(venv.glob("lib/python3*/site-packages"))
    (site / "remora.pth").write_text(str(ROOT) + "\n", encoding="utf-8")
    deps = [p for p in sys.path if p.endswith("site-packages")]
    (site / "deps.pth").write_text("\n".join(deps) + "\n", encoding="utf-8")
    (tmp_path / "user.py").write_text(USER_SCRIPT, encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--strict", "--python-executable",
                        str(venv / "bin" / "python"), "user.py"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert "import-untyped" not in r.stdout
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_accepts_the_api_modules():
    """mypy finds nothing wrong in the modules a user's calls go through (what they import is
    followed silently: the rest of the package is not held to this here)."""
    pytest.importorskip("mypy")
    files = ["remora/__init__.py", "remora/errors.py", "remora/records.py", "remora/interfaces/api.py"]
    r = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--follow-imports=silent", *files],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def test_help_is_the_full_docstring():
    text = textwrap.dedent(remora.function.__doc__)
    assert "backend : str, optional" in text and "Raises" in text and len(text.splitlines()) > 20
