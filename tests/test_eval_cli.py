"""`python -m remora eval` (contract §3): output, standard input, engines, --trace, --erased, errors.

Every command runs as a real subprocess.  To keep the file fast, all of them are
started together, in parallel, the first time a test asks for a result.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import subprocess_env

ENV = subprocess_env()
ERROR_LINE = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): error: (?P<msg>.+)$")
TRACE_KINDS = ("lift", "map", "δ", "β", "collapse", "unbox", "iβ")

PROGRAM = """\
; a program: defines print nothing, each expression prints one line
(define x 3)
(define (sq (n (Arr Int (Shp)))) (* n n))
(+ x 1)
(sq [1 2 3])   ; a comment after a form
(define mtx (array (3 2) 0 1 2 3 4 5))
((t-app (i-app head 1 (Shp)) Int) mtx)
(/ 1.0 0.0)
(iota/v [1 2])
(array (0 3) Int)
[#t #f]
"""
PROGRAM_OUT = ["4", "[1 4 9]", "[0 2 4]", "inf", "[(box 1 [0]) (box 2 [0 1])]", "(array (0 3) Int)", "[#t #f]"]

DEFINES_ONLY = "(define a 1)\n(define b (+ a 1))\n"

READ_PROGRAM = """\
(define nums (read-nums))
(unbox (n xs nums) ((t-app (i-app reduce n (Shp)) Int) + ((t-app (i-app append 1 n (Shp)) Int) [0] xs)))
nums
"""

TRACE_PROGRAM = """\
((λ ((x (Arr Int (Shp)))) (+ x 1)) [1 2])
(unbox (n xs (iota/v 2)) ((t-app (i-app length n (Shp)) Int) xs))
"""

ERASED_PROGRAM = """\
(define y 2)
((λ ((x (Arr Int (Shp)))) (+ x y)) [1 2])
((t-app (Tλ ((t Atom)) (λ ((v (Arr t (Shp 2)))) ((t-app (i-app head 1 (Shp)) t) v))) Int) [5 6])
"""

# (name, program, stdin, (line, column) of the failing form)
RUNTIME_ERRORS = {
    "div0": ("(/ 1 0)", "", (1, 1)),
    "mod0": ("(mod 1 0)", "", (1, 1)),
    "expt": ("(expt 2 -1)", "", (1, 1)),
    "readnums": ("(read-nums)", "1 2 x 4\n", (1, 1)),
    "reshape": ("((t-app (i-app reshape 1 (Shp 0)) Int) [2] (array (0) Int))", "", (1, 1)),
    "iota_limit": ("(iota/v 100000000000)", "", (1, 1)),
    "floor_nan": ("(floor (/ 0.0 0.0))", "", (1, 1)),
    "nested": ("(+ 1\n   (/ 1 0))", "", (2, 4)),
}

# (the in-process tests already run every error on both engines; here: the command line's report)
REFERENCE_ERRORS = ["div0", "readnums", "reshape", "nested"]
EXPR_ERRORS = ["mod0", "floor_nan", "nested"]

# A file whose third line fails after two values were printed.
PARTIAL = """\
(+ 1 2)
(define z 5)
[z z]
  (mod z 0)
(+ 100 1)
"""


def _cases(tmp: Path) -> dict[str, tuple[list[str], str]]:
    def file(name: str, text: str) -> str:
        path = tmp / name
        path.write_text(text, encoding="utf-8")
        return str(path)

    prog = file("prog.rem", PROGRAM)
    cases = {
        "prog": (["eval", prog], ""),
        "prog_ref": (["eval", "--engine=reference", prog], ""),
        "prog_ref2": (["eval", "--engine", "reference", prog], ""),
        "prog_frames": (["eval", "--engine=frames", prog], ""),
        "defines": (["eval", file("defs.rem", DEFINES_ONLY)], ""),
        "expr": (["eval", "-e", "(+ [[1 2 3] [4 5 6]] [10 20])"], ""),
        "expr_many": (["eval", "-e", "(define k 2) (* k 3) [k k]"], ""),
        "read": (["eval", file("read.rem", READ_PROGRAM)], "1 2\n3 4\n"),
        "read_ref": (["eval", "--engine=reference", file("read2.rem", READ_PROGRAM)], "1 2\n3 4\n"),
        "read_expr": (["eval", "-e", "(read-nums)"], " 7\n-8 "),
        "read_empty": (["eval", "-e", "(read-nums)"], ""),
        "trace": (["eval", "--trace", file("trace.rem", TRACE_PROGRAM)], ""),
        "trace_err": (["eval", "--trace", "-e", "(+ 5 (/ 1 0))"], ""),
        "erased": (["eval", "--erased", file("erased.rem", ERASED_PROGRAM)], ""),
        "partial": (["eval", file("partial.rem", PARTIAL)], ""),
        "missing": (["eval", str(tmp / "no-such-file.rem")], ""),
        "partial_ref": (["eval", "--engine=reference", file("partial2.rem", PARTIAL)], ""),
    }
    for name, (src, stdin, _) in RUNTIME_ERRORS.items():
        cases[f"err_{name}"] = (["eval", file(f"err_{name}.rem", src + "\n")], stdin)
    for name in REFERENCE_ERRORS:
        src, stdin, _ = RUNTIME_ERRORS[name]
        cases[f"err_{name}_ref"] = (["eval", "--engine=reference", file(f"err_{name}_ref.rem", src + "\n")], stdin)
    for name in EXPR_ERRORS:
        src, stdin, _ = RUNTIME_ERRORS[name]
        cases[f"err_{name}_expr"] = (["eval", "-e", src], stdin)
    return cases


def _run(args: list[str], stdin: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "remora", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
    )


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict[str, subprocess.CompletedProcess]:
    tmp = tmp_path_factory.mktemp("eval_cli")
    cases = _cases(tmp)
    with ThreadPoolExecutor(max_workers=min(16, (os.cpu_count() or 2) * 2)) as pool:
        futures = {name: pool.submit(_run, args, stdin) for name, (args, stdin) in cases.items()}
        out = {name: f.result() for name, f in futures.items()}
    out["_tmp"] = tmp  # type: ignore[assignment]
    return out


def lines(text: str) -> list[str]:
    return text.splitlines()


def assert_no_traceback(r: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout, r.stderr
    assert "internal error" not in r.stderr, r.stderr


# ---------------------------------------------------------------------------
# Output


def test_one_line_per_expression(results):
    r = results["prog"]
    assert r.returncode == 0, r.stderr
    assert lines(r.stdout) == PROGRAM_OUT
    assert r.stderr == ""


def test_defines_print_nothing(results):
    r = results["defines"]
    assert r.returncode == 0, r.stderr
    assert r.stdout == "" and r.stderr == ""


def test_expression_on_the_command_line(results):
    r = results["expr"]
    assert r.returncode == 0, r.stderr
    assert lines(r.stdout) == ["[[11 12 13] [24 25 26]]"]


def test_several_forms_on_the_command_line(results):
    r = results["expr_many"]
    assert r.returncode == 0, r.stderr
    assert lines(r.stdout) == ["6", "[2 2]"]


@pytest.mark.parametrize("case", ["prog_ref", "prog_ref2", "prog_frames"])
def test_engines_print_the_same(results, case):
    r = results[case]
    assert r.returncode == 0, r.stderr
    assert r.stdout == results["prog"].stdout


# ---------------------------------------------------------------------------
# Standard input is the program's


@pytest.mark.parametrize("case", ["read", "read_ref"])
def test_read_nums_reads_the_programs_stdin(results, case):
    r = results[case]
    assert r.returncode == 0, r.stderr
    assert lines(r.stdout) == ["10", "(box 4 [1 2 3 4])"]


def test_read_nums_on_the_command_line(results):
    r = results["read_expr"]
    assert r.returncode == 0, r.stderr
    assert lines(r.stdout) == ["(box 2 [7 -8])"]


def test_read_nums_with_empty_stdin(results):
    r = results["read_empty"]
    assert r.returncode == 0, r.stderr
    assert lines(r.stdout) == ["(box 0 (array (0) Int))"]


# ---------------------------------------------------------------------------
# --trace and --erased


def test_trace_prints_reduction_steps_to_stderr(results):
    r = results["trace"]
    assert r.returncode == 0, r.stderr
    assert lines(r.stdout) == ["[2 3]", "2"]
    steps = [line for line in lines(r.stderr) if line.strip()]
    assert steps, "no trace on stderr"
    for line in steps:
        assert line.split()[0] in TRACE_KINDS, f"not a reduction step: {line!r}"
    kinds = {line.split()[0] for line in steps}
    assert {"lift", "map", "β", "δ", "collapse", "unbox", "iβ"} <= kinds, kinds


def test_trace_steps_follow_the_paper(results):
    steps = [line.split()[0] for line in lines(results["trace"].stderr) if line.strip()]
    # the first expression: lift the scalar function to the frame (2), map, then β and δ per cell, collapse
    first = steps[: steps.index("collapse") + 1]
    assert first[:2] == ["lift", "map"]
    assert first.count("β") == 2 and first.count("δ") == 2


def test_trace_with_a_runtime_error(results):
    r = results["trace_err"]
    assert r.returncode == 1
    assert_no_traceback(r)
    errors = [m for m in map(ERROR_LINE.match, lines(r.stderr)) if m]
    assert len(errors) == 1
    assert (errors[0]["file"], errors[0]["line"], errors[0]["col"]) == ("<expr>", "1", "6")


def test_erased_prints_the_erased_program(results):
    r = results["erased"]
    assert r.returncode == 0, r.stderr
    out = lines(r.stdout)
    assert len(out) == 3, out  # one line per form, the define included
    assert out[0].startswith("(define y")
    text = r.stdout
    # types are gone: no Arr, no t-app, no Tλ; λ parameters have no types
    assert "Arr" not in text and "t-app" not in text and "Tλ" not in text
    assert "(λ (x)" in out[1] and "(λ (v)" in out[2]
    # applications carry cell and result shapes (Fig. 11/13): the argument [1 2] with cells (Shp), result (Shp 2)
    assert "(Shp 2)" in out[1]
    # Tλ became Iλ and t-app became i-app (Fig. 13)
    assert "Iλ" in out[2] and "i-app" in out[2]
    # nothing was evaluated
    assert "[2 3]" not in text and "\n5\n" not in text


# ---------------------------------------------------------------------------
# Runtime errors


def _check_runtime_error(r: subprocess.CompletedProcess, file: str, where: tuple[int, int]) -> re.Match:
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    assert_no_traceback(r)
    err_lines = lines(r.stderr)
    m = ERROR_LINE.match(err_lines[0])
    assert m, f"first stderr line is not FILE:LINE:COL: error: …: {r.stderr!r}"
    assert m["file"] == file
    assert (int(m["line"]), int(m["col"])) == where
    # then the source line, then a caret under the culprit (the failing form starts with "(")
    assert len(err_lines) >= 3, r.stderr
    source, caret = err_lines[1], err_lines[2]
    assert caret.strip() and set(caret.strip()) == {"^"}, caret
    assert source[caret.index("^")] == "(", (source, caret)
    return m


@pytest.mark.parametrize(
    "name, variant",
    [(n, "") for n in RUNTIME_ERRORS] + [(n, "_ref") for n in REFERENCE_ERRORS] + [(n, "_expr") for n in EXPR_ERRORS],
)
def test_runtime_errors_exit_1_with_a_located_message(results, name, variant):
    r = results[f"err_{name}{variant}"]
    src, _, where = RUNTIME_ERRORS[name]
    file = "<expr>" if variant == "_expr" else str(results["_tmp"] / f"err_{name}{variant}.rem")
    _check_runtime_error(r, file, where)
    assert r.stdout == ""


@pytest.mark.parametrize("case", ["partial", "partial_ref"])
def test_values_printed_before_a_runtime_error_stay_printed(results, case):
    r = results[case]
    file = str(results["_tmp"] / ("partial.rem" if case == "partial" else "partial2.rem"))
    m = _check_runtime_error(r, file, (4, 3))
    assert "mod" in m["msg"]
    assert lines(r.stdout) == ["3", "[5 5]"]


@pytest.mark.parametrize(
    "name, words",
    [
        ("div0", "division by zero"),
        ("mod0", "mod"),
        ("expt", "expt"),
        ("readnums", "read-nums"),
        ("reshape", "reshape"),
        ("iota_limit", "iota/v"),
        ("floor_nan", "nan"),
    ],
)
def test_runtime_error_messages_name_the_problem(results, name, words):
    r = results[f"err_{name}"]
    assert words in lines(r.stderr)[0]


def test_unreadable_file_is_an_io_error(results):
    r = results["missing"]
    assert r.returncode == 2
    assert_no_traceback(r)
    assert r.stdout == "" and "no-such-file.rem" in r.stderr
