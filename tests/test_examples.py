"""The example programs in examples/: each runs on both engines and prints its .out file.

For every ``examples/NAME.rem``:

- it starts with a header comment block that says what it computes and how to run it;
- run through both engines (``eval_values``: the engines agree, and every value has the
  shape and atom type its static type promises), with ``NAME.in`` as standard input when
  there is one, it prints exactly the lines of ``NAME.out``;
- ``remora check --explicit`` prints it with every inferred instantiation written out,
  and checking that explicit text gives the same types as checking the example.

The check commands run in-process through ``remora.interfaces.cli.main`` (what ``python -m remora``
calls); two examples also run as real ``python -m remora eval`` subprocesses.
"""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import eval_values, subprocess_env
from remora.interfaces.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
PROGRAMS = sorted(EXAMPLES.glob("*.rem"))
NAMES = [p.stem for p in PROGRAMS]

REQUIRED = [
    "paper", "matmul", "softmax", "l1-distances", "nbody", "heat", "life", "mandelbrot",
    "histogram", "ragged", "triangular", "read-nums", "dot",
    "newton", "gcd", "collatz", "median", "kmeans", "safe-division", "image-filter", "softmax-float32",
    "for-matmul", "for-l1", "for-stencil", "for-attention", "for-tril",
]


def _stdin(name: str) -> str:
    path = EXAMPLES / f"{name}.in"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def _inputs(name: str) -> list[str]:
    """The NAME=PATH inputs of an example that reads data files (``NAME.args``, one a line)."""
    path = EXAMPLES / f"{name}.args"
    return path.read_text(encoding="utf-8").split() if path.exists() else []


def _expected(name: str) -> list[str]:
    return (EXAMPLES / f"{name}.out").read_text(encoding="utf-8").splitlines()


def _cli(*argv: str) -> tuple[int, str, str]:
    """Run the remora command in-process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_there_are_enough_examples():
    assert len(PROGRAMS) >= 14
    missing = [n for n in REQUIRED if n not in NAMES]
    assert not missing, f"missing examples: {missing}"


@pytest.mark.parametrize("name", NAMES)
def test_every_example_has_an_output_file(name):
    assert (EXAMPLES / f"{name}.out").exists()


@pytest.mark.parametrize("name", NAMES)
def test_header_comment(name):
    lines = (EXAMPLES / f"{name}.rem").read_text(encoding="utf-8").splitlines()
    header = []
    for line in lines:
        if not line.startswith(";"):
            break
        header.append(line)
    assert len(header) >= 3, f"{name}.rem has no header comment block"
    text = "\n".join(header)
    assert f"{name}.rem" in text, "the header names the program"
    assert "Computes" in text, "the header says what the program computes"
    run = " ".join([f"remora eval examples/{name}.rem"] + _inputs(name))
    if (EXAMPLES / f"{name}.in").exists():
        run += f" < examples/{name}.in"
    assert run in text, f"the header says how to run it: {run!r}"


@pytest.mark.parametrize("name", NAMES)
def test_output_on_both_engines(name, monkeypatch):
    if _inputs(name):  # data files on the command line: the command, on each engine
        monkeypatch.chdir(ROOT)
        for engine in ("plans", "frames", "reference"):
            code, out, err = _cli("eval", "--engine", engine, f"examples/{name}.rem", *_inputs(name))
            assert code == 0, err
            assert out.splitlines() == _expected(name), engine
        return
    source = (EXAMPLES / f"{name}.rem").read_text(encoding="utf-8")
    assert eval_values(source, _stdin(name)) == _expected(name)


@pytest.mark.parametrize("name", NAMES)
def test_explicit_form_rechecks_to_the_same_types(name, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    path = str(EXAMPLES / f"{name}.rem")
    inputs = _inputs(name)
    code, types, err = _cli("check", path, *inputs)
    assert code == 0, err
    code, explicit, err = _cli("check", "--explicit", path, *inputs)
    assert code == 0, err
    assert len(explicit.splitlines()) == len(types.splitlines())
    again = tmp_path / f"{name}-explicit.rem"
    again.write_text(explicit, encoding="utf-8")
    code, retyped, err = _cli("check", str(again), *inputs)
    assert code == 0, f"the explicit text of {name}.rem does not check:\n{err}\n{explicit}"
    assert retyped.splitlines() == types.splitlines()


@pytest.mark.parametrize("name", ["paper", "read-nums"])
def test_command_line_prints_the_out_file(name):
    env = subprocess_env()
    proc = subprocess.run(
        [sys.executable, "-m", "remora", "eval", f"examples/{name}.rem"],
        input=_stdin(name), capture_output=True, text=True, cwd=ROOT, env=env, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert proc.stdout == (EXAMPLES / f"{name}.out").read_text(encoding="utf-8")


# Found while writing the examples (regressions).

BOXES = "(define rows (iota/v [1 2 3]))\n"   # a vector of 3 boxes


@pytest.mark.parametrize("program, expected", [
    ("(fold (λ ((b [(Sigma ((k Dim)) [Int k])]) (acc [Int])) (unbox (k xs b) (+ acc (sum xs)))) 0 rows)", "4"),
    ("(fold (λ ((b [(Sigma ((k Dim)) [Int k])]) (acc [Int])) acc) 0 rows)", "0"),
    ("(scan (λ ((acc [Int]) (b [(Sigma ((k Dim)) [Int k])])) acc) 0 rows)", "[0 0 0]"),
    ("(reduce (λ ((a [(Sigma ((k Dim)) [Int k])]) (b [(Sigma ((k Dim)) [Int k])])) b) rows)", "(box 3 [0 1 2])"),
])
def test_fold_over_boxes(program, expected):
    assert eval_values(BOXES + program) == [expected]


@pytest.mark.parametrize("program, expected", [
    ("(iterate reverse 1 [[1 2] [3 4]])", "[[3 4] [1 2]]"),
    ("(define (f (g [(-> ([Int 2 2]) [Int 2 2])])) (g [[1 2] [3 4]]))\n(f reverse)", "[[3 4] [1 2]]"),
])
def test_function_argument_prefers_no_frame(program, expected):
    assert eval_values(program) == [expected]
