"""The suite's own guards (issue 29.7): a parametrised test with no cases fails the run instead
of being skipped (pyproject.toml's ``empty_parameter_set_mark``, checked by conftest.py)."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT

EMPTY = '''
import pytest

@pytest.mark.parametrize("x", [])
def test_over_nothing(x):
    assert x
'''


def _pytest(tmp_path, *options: str) -> subprocess.CompletedProcess:
    (tmp_path / "test_empty.py").write_text(EMPTY, encoding="utf-8")
    (tmp_path / "conftest.py").write_text((ROOT / "tests" / "conftest.py").read_text(encoding="utf-8"), encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", str(ROOT / "pyproject.toml"),
                           "--rootdir", str(tmp_path), *options, str(tmp_path / "test_empty.py")],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)


def test_a_parametrised_test_with_no_cases_fails_the_run(tmp_path):
    r = _pytest(tmp_path)
    assert r.returncode != 0 and "skipped" not in r.stdout, r.stdout
    assert "Empty parameter set" in r.stdout, r.stdout


def test_a_run_that_lost_the_setting_is_refused(tmp_path):
    r = _pytest(tmp_path, "-o", "empty_parameter_set_mark=skip")
    assert r.returncode != 0 and "fail_at_collect" in r.stderr + r.stdout, r.stdout + r.stderr
