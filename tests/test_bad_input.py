"""Malformed and ill-typed programs (tests/bad_input): the exact first line of every error report.

Each ``tests/bad_input/NAME.rem`` holds one mistake; ``NAME.err`` is the exact first line of standard
error of ``python -m remora eval tests/bad_input/NAME.rem`` run from the repository root (so the
report names the file as ``tests/bad_input/NAME.rem``), ``NAME.out`` the exact standard output when
values are printed before a run-time error, ``NAME.in`` the standard input.  The exit status is 1.
See ``tests/bad_input/README.md``; the programs in ``KNOWN_BUGS.md`` are checked separately.

Run as a script to print (or, with ``--write``, record) the current first lines::

    python tests/test_bad_input.py [--write] NAME ...
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import subprocess_env

ROOT = Path(__file__).resolve().parents[1]
DIR = ROOT / "tests" / "bad_input"
REL = "tests/bad_input"
NAMES = sorted(p.stem for p in DIR.glob("*.rem"))
ERROR_LINE = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+): error: (?P<msg>.+)$")

# Programs whose current report is wrong (tests/bad_input/KNOWN_BUGS.md): what a fix must establish.
KNOWN_BUGS: dict = {}  # none at present (see KNOWN_BUGS.md)
# Reports that once depended on PYTHONHASHSEED (set iteration order); these seeds gave different texts.
HASH_SEEDS = ("0", "2", "4")
SEED_SENSITIVE = ["infer-ambiguous", "type-frame-cells-variables"]
# A few programs also run as real subprocesses (exit status, stdin, output ordering as a user sees them).
SUBPROCESS = ["read-unclosed-paren", "type-frames-incompatible", "run-div-zero", "run-read-nums-bad"]


def _stdin(name: str) -> str:
    path = DIR / f"{name}.in"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def _expected_out(name: str) -> str:
    path = DIR / f"{name}.out"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def run_cli(name: str, *extra: str) -> tuple[int, str, str]:
    """``remora eval [extra] tests/bad_input/NAME.rem`` in-process, from the repository root."""
    from remora.interfaces.cli import main

    out, err = io.StringIO(), io.StringIO()
    old_cwd, old_stdin = os.getcwd(), sys.stdin
    os.chdir(ROOT)
    sys.stdin = io.StringIO(_stdin(name))
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["eval", *extra, f"{REL}/{name}.rem"])
    finally:
        os.chdir(old_cwd)
        sys.stdin = old_stdin
    return code, out.getvalue(), err.getvalue()


def _first(stderr: str) -> str:
    return stderr.split("\n")[0]


def test_corpus_is_large_and_complete() -> None:
    assert len(NAMES) >= 70
    for name in NAMES:
        assert (DIR / f"{name}.err").exists(), f"{name}.rem has no {name}.err"
    for path in DIR.iterdir():
        assert path.suffix in (".rem", ".err", ".out", ".in", ".md"), path
        assert path.suffix == ".md" or (DIR / f"{path.stem}.rem").exists(), f"{path.name} has no program"
    documented = set(re.findall(r"^- `([^`]+)`", (DIR / "KNOWN_BUGS.md").read_text(encoding="utf-8"), re.M))
    assert documented == set(KNOWN_BUGS), "KNOWN_BUGS.md and KNOWN_BUGS in this file list different programs"
    assert set(KNOWN_BUGS) <= set(NAMES)


@pytest.mark.parametrize("name", [n for n in NAMES if n not in KNOWN_BUGS])
def test_first_line_of_the_report(name: str) -> None:
    code, out, err = run_cli(name)
    expected = (DIR / f"{name}.err").read_text(encoding="utf-8").rstrip("\n")
    assert _first(err) == expected
    assert code == 1
    m = ERROR_LINE.match(_first(err))
    assert m and m["file"] == f"{REL}/{name}.rem" and int(m["line"]) >= 1 and int(m["col"]) >= 1
    assert out == _expected_out(name), "the values printed before the error differ"
    assert "Traceback" not in err
    lines = err.rstrip("\n").split("\n")
    assert len(lines) >= 3 and "^" in lines[2], "the report shows the source line and a caret"


# The tests of the known bugs exist only while there are some: over no programs they would pass
# having checked nothing (and an empty parameter set fails the run, pyproject.toml).  With none,
# every program is matched exactly above, and test_corpus_is_large_and_complete keeps this table
# and KNOWN_BUGS.md the same.
if KNOWN_BUGS:

    @pytest.mark.parametrize("name", sorted(KNOWN_BUGS))
    def test_known_bug_still_reports_an_error(name: str) -> None:
        """The recorded (buggy) behaviour: still exit 1 with one report and no traceback."""
        code, out, err = run_cli(name)
        assert code == 1
        assert out == _expected_out(name)
        assert "Traceback" not in err

    @pytest.mark.xfail(reason="BUG: see tests/bad_input/KNOWN_BUGS.md", strict=True)
    @pytest.mark.parametrize("name", sorted(KNOWN_BUGS))
    def test_known_bug_is_fixed(name: str) -> None:
        _, _, err = run_cli(name)
        what, holds = KNOWN_BUGS[name]
        assert holds(_first(err)), f"{name}: expected {what}; got {_first(err)!r}"


def _subprocess(name: str, *, hash_seed: str | None = None) -> subprocess.CompletedProcess:
    env = subprocess_env()
    if hash_seed is not None:
        env["PYTHONHASHSEED"] = hash_seed
    return subprocess.run(
        [sys.executable, "-m", "remora", "eval", f"{REL}/{name}.rem"],
        input=_stdin(name), capture_output=True, text=True, cwd=ROOT, env=env, timeout=60,
    )


_AFTER_OTHERS = """\
import contextlib, io, sys
from remora.interfaces.cli import main
for other in ("infer-ambiguous", "type-cell-counterexample"):  # z3 queries made earlier in the process
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        main(["eval", f"tests/bad_input/{other}.rem"])
sys.exit(main(["eval", "tests/bad_input/type-frame-cells-variables.rem"]))
"""


def test_history_independent() -> None:
    alone = _first(_subprocess("type-frame-cells-variables").stderr)
    assert alone == (DIR / "type-frame-cells-variables.err").read_text(encoding="utf-8").rstrip("\n")
    env = subprocess_env()
    after = subprocess.run([sys.executable, "-c", _AFTER_OTHERS], capture_output=True, text=True, cwd=ROOT,
                           env=env, timeout=60)
    assert _first(after.stderr) == alone


@pytest.mark.parametrize("name", SEED_SENSITIVE)
def test_report_does_not_depend_on_hash_seed(name: str) -> None:
    expected = (DIR / f"{name}.err").read_text(encoding="utf-8").rstrip("\n")
    for seed in HASH_SEEDS:
        assert _first(_subprocess(name, hash_seed=seed).stderr) == expected, f"PYTHONHASHSEED={seed}"


@pytest.mark.parametrize("name", [n for n in NAMES if n.startswith("run-") and n not in KNOWN_BUGS])
def test_reference_engine_reports_the_same_place(name: str) -> None:
    code, out, err = run_cli(name, "--engine=reference")
    expected = (DIR / f"{name}.err").read_text(encoding="utf-8").rstrip("\n")
    assert code == 1
    assert out == _expected_out(name)
    # Same file, line and column; the wording may name the primitive rather than "this application".
    assert _first(err).split(": error: ")[0] == expected.split(": error: ")[0]


@pytest.mark.parametrize("name", SUBPROCESS)
def test_as_a_subprocess(name: str) -> None:
    r = _subprocess(name)
    assert r.returncode == 1
    assert _first(r.stderr) == (DIR / f"{name}.err").read_text(encoding="utf-8").rstrip("\n")
    assert r.stdout == _expected_out(name)
    assert "Traceback" not in r.stderr


def test_usage_errors_exit_2() -> None:
    from remora.interfaces.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(["eval", f"{REL}/no-such-program.rem"]) == 2
    assert _first(err.getvalue()).startswith(f"remora: cannot read {REL}/no-such-program.rem")
    with contextlib.redirect_stderr(io.StringIO()), pytest.raises(SystemExit) as info:
        main(["eval"])
    assert info.value.code == 2


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    write = "--write" in sys.argv[1:]
    for name in [a for a in sys.argv[1:] if a != "--write"] or NAMES:
        code, out, err = run_cli(name)
        print(f"{name} (exit {code}): {_first(err)}")
        if out:
            print(f"    stdout: {out!r}")
        if write:
            (DIR / f"{name}.err").write_text(_first(err) + "\n", encoding="utf-8")
            out_path = DIR / f"{name}.out"
            if out:
                out_path.write_text(out, encoding="utf-8")
            elif out_path.exists():
                out_path.unlink()
