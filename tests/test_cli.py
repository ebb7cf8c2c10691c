"""The command line (contract §3): `python -m remora check FILE` and `check -e EXPR`.

Starting the interpreter costs most of a second, so a few cases run as their own
``python -m remora`` process (all started at once by a module fixture) and the others
share one helper process that executes ``python -m remora`` through ``runpy`` once
per case, with its own argv, working directory, stdout and stderr, catching
SystemExit for the exit code and reporting any escaping exception as a traceback.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import subprocess_env

ENV = subprocess_env()
ERROR_LINE = re.compile(r"^(?P<file>.+):(?P<line>\d+):(?P<col>\d+): error: (?P<msg>.+)$")

PROGRAM = """\
; a small program
(define mtx (array (3 2) 0 1 2 3 4 5))
((t-app (i-app head 2 (Shp 2)) Num) mtx)
(define (add1 (x [Int])) (+ x 1))
(add1 mtx)
(+ 1.0 2.5)
"""

EXPECTED = [
    "mtx : (Arr Int (Shp 3 2))",
    "(Arr Int (Shp 2))",
    "add1 : (Arr (-> ((Arr Int (Shp))) (Arr Int (Shp))) (Shp))",
    "(Arr Int (Shp 3 2))",
    "(Arr Float (Shp))",
]

COUNTEREXAMPLE = "(Iλ ((n Dim)) (λ ((x (Arr Int (Shp n 3)))) ((λ ((y (Arr Int (Shp 3 n)))) y) x)))"

# name: (argv after `-m remora`, {file: text or bytes}); paths are relative to the case's own directory.
CASES: dict[str, tuple[list[str], dict[str, str | bytes]]] = {
    "program": (["check", "prog.rem"], {"prog.rem": PROGRAM}),
    "expr": (["check", "-e", "(+ [[1 2 3] [4 5 6]] [10 20])"], {}),
    "expr_forms": (["check", "-e", "(define x 1.5) (+ x x)"], {}),
    "empty": (["check", "empty.rem"], {"empty.rem": "; nothing here\n"}),
    "type_error": (["check", "bad.rem"], {"bad.rem": "(define x [1 2 3])\n\n  (+ x [1 2])\n"}),
    "nested_path": (["check", os.path.join("dir", "p.rem")], {os.path.join("dir", "p.rem"): "(1 2)\n"}),
    "expr_error": (["check", "-e", "(+ 1 2.5)"], {}),
    "syntax_error": (["check", "syn.rem"], {"syn.rem": "(define x 1)\n(λ (y) y)\n"}),
    "reader_error": (["check", "read.rem"], {"read.rem": '(define x 1)\n(f "str")\n'}),
    "counterexample": (["check", "-e", COUNTEREXAMPLE], {}),
    "missing": (["check", "does-not-exist.rem"], {}),
    "usage": (["check"], {}),
    "directory": (["check", "."], {}),
    "undecodable": (["check", "bin.rem"], {"bin.rem": b"\xff\xfe\x00("}),
    "bad_expr": (["check", "-e", "(define f (λ ((x Int)) x))"], {}),
    "partial": (["check", "partial.rem"], {"partial.rem": "(define x [1 2 3])\n(+ x 1.5)\n"}),
}


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str
    cwd: Path


# Cases run as their own `python -m remora` process; the others share one interpreter (RUNNER).
OWN_PROCESS = {"program", "type_error", "missing", "usage"}

RUNNER = textwrap.dedent(
    """
    import contextlib, io, json, os, runpy, sys, traceback
    out = []
    for case in json.load(sys.stdin):
        os.chdir(case["cwd"])
        stdout, stderr = io.StringIO(), io.StringIO()
        code = 0
        sys.argv = ["remora", *case["argv"]]
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                runpy.run_module("remora", run_name="__main__", alter_sys=True)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except BaseException:
                traceback.print_exc()
                code = 1
        out.append({"code": code, "stdout": stdout.getvalue(), "stderr": stderr.getvalue()})
    json.dump(out, sys.__stdout__)
    """
)


def _write_files(cwd: Path, files: dict[str, str | bytes]) -> None:
    for rel, text in files.items():
        path = cwd / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")


def _popen(argv: list[str], cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.PIPE,
        text=True,
        env=ENV,
        cwd=cwd,
    )


def run_in_one_process(cases: list[tuple[list[str], Path]]) -> list[dict]:
    """Run ``python -m remora ARGV`` (via runpy) for every case inside a single helper process."""
    proc = _popen(["-c", RUNNER], Path.cwd())
    payload = json.dumps([{"argv": argv, "cwd": str(cwd)} for argv, cwd in cases])
    stdout, stderr = proc.communicate(payload, timeout=120)
    assert proc.returncode == 0, stderr
    return json.loads(stdout)


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict[str, Result]:
    base = tmp_path_factory.mktemp("cli")
    own, shared = {}, []
    for name, (argv, files) in CASES.items():
        cwd = base / name
        cwd.mkdir()
        _write_files(cwd, files)
        if name in OWN_PROCESS:
            own[name] = (cwd, _popen(["-m", "remora", *argv], cwd))
        else:
            shared.append((name, argv, cwd))
    batch = _popen(["-c", RUNNER], base)
    batch_out, batch_err = batch.communicate(
        json.dumps([{"argv": argv, "cwd": str(cwd)} for _, argv, cwd in shared]), timeout=120
    )
    assert batch.returncode == 0, batch_err
    out = {}
    for (name, _, cwd), r in zip(shared, json.loads(batch_out)):
        out[name] = Result(r["code"], r["stdout"], r["stderr"], cwd)
    for name, (cwd, proc) in own.items():
        stdout, stderr = proc.communicate("", timeout=120)
        out[name] = Result(proc.returncode, stdout, stderr, cwd)
    return out


def parse_error(stderr: str):
    lines = stderr.rstrip("\n").split("\n")
    m = ERROR_LINE.match(lines[0])
    assert m, f"first stderr line is not FILE:LINE:COL: error: ...: {lines[0]!r}"
    return m, lines


def assert_caret(lines: list[str], source_line: str, col: int) -> None:
    """Line 2 of the report is the source line, line 3 a caret under column ``col``."""
    assert len(lines) >= 3, lines
    shown, caret = lines[1], lines[2]
    assert shown.endswith(source_line.rstrip())
    indent = len(shown) - len(source_line.rstrip())
    assert set(caret.strip()) == {"^"}
    assert caret.index("^") == indent + col - 1


# ---------------------------------------------------------------------------
# Success


def test_check_file_prints_one_line_per_form(results):
    r = results["program"]
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == EXPECTED
    assert r.stderr == ""


def test_check_expression(results):
    r = results["expr"]
    assert r.returncode == 0, r.stderr
    assert r.stdout == "(Arr Int (Shp 2 3))\n"
    assert r.stderr == ""


def test_check_expression_with_several_forms(results):
    r = results["expr_forms"]
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["x : (Arr Float (Shp))", "(Arr Float (Shp))"]


def test_check_empty_program(results):
    r = results["empty"]
    assert r.returncode == 0
    assert r.stdout == "" and r.stderr == ""


# ---------------------------------------------------------------------------
# Located errors: FILE:LINE:COL: error: MESSAGE, source line, caret; exit 1


def test_type_error_in_file(results):
    r = results["type_error"]
    assert r.returncode == 1
    m, lines = parse_error(r.stderr)
    assert m["file"] == "bad.rem"
    assert (int(m["line"]), int(m["col"])) == (3, 8)
    assert "(Shp 3)" in m["msg"] and "(Shp 2)" in m["msg"]
    assert_caret(lines, "  (+ x [1 2])", 8)
    assert lines[2].count("^") == len("[1 2]")
    assert "Traceback" not in r.stderr


def test_error_in_file_uses_the_path_as_given(results):
    r = results["nested_path"]
    assert r.returncode == 1
    m, lines = parse_error(r.stderr)
    assert m["file"] == os.path.join("dir", "p.rem")
    assert (int(m["line"]), int(m["col"])) == (1, 2)
    assert_caret(lines, "(1 2)", 2)


def test_error_in_expression(results):
    r = results["expr_error"]
    assert r.returncode == 1
    m, lines = parse_error(r.stderr)
    assert m["file"] == "<expr>"
    assert (int(m["line"]), int(m["col"])) == (1, 6)
    assert "int->float" in m["msg"]
    assert_caret(lines, "(+ 1 2.5)", 6)
    assert r.stdout == ""


def test_syntax_error_in_file(results):
    r = results["syntax_error"]
    assert r.returncode == 1
    m, lines = parse_error(r.stderr)
    assert m["file"] == "syn.rem"
    assert (int(m["line"]), int(m["col"])) == (2, 5)
    assert_caret(lines, "(λ (y) y)", 5)


def test_reader_error_in_file(results):
    r = results["reader_error"]
    assert r.returncode == 1
    m, lines = parse_error(r.stderr)
    assert (int(m["line"]), int(m["col"])) == (2, 4)
    assert_caret(lines, '(f "str")', 4)


def test_counterexample_in_cli_report(results):
    r = results["counterexample"]
    assert r.returncode == 1
    m, _ = parse_error(r.stderr)
    assert "when n = " in m["msg"]


def test_error_after_good_forms(results):
    r = results["partial"]
    assert r.returncode == 1
    m, _ = parse_error(r.stderr)
    assert (int(m["line"]), int(m["col"])) == (2, 6)
    assert "Traceback" not in r.stderr


# ---------------------------------------------------------------------------
# Usage and I/O errors: exit 2


def test_missing_file_exits_2(results):
    r = results["missing"]
    assert r.returncode == 2
    assert "does-not-exist.rem" in r.stderr
    assert "Traceback" not in r.stderr
    assert r.stdout == ""


def test_usage_error_exits_2(results):
    r = results["usage"]
    assert r.returncode == 2
    assert "usage" in r.stderr.lower()
    assert "Traceback" not in r.stderr


def test_directory_instead_of_file_exits_2(results):
    r = results["directory"]
    assert r.returncode == 2
    assert "Traceback" not in r.stderr


def test_undecodable_file_exits_2(results):
    r = results["undecodable"]
    assert r.returncode == 2
    assert "bin.rem" in r.stderr
    assert "Traceback" not in r.stderr


# ---------------------------------------------------------------------------
# No traceback, ever


def test_bad_expression_is_located_in_expr(results):
    r = results["bad_expr"]
    assert r.returncode == 1
    m, lines = parse_error(r.stderr)
    assert m["file"] == "<expr>"
    assert (int(m["line"]), int(m["col"])) == (1, 18)
    assert "Traceback" not in r.stderr

BAD_INPUTS = [
    "(",
    ")",
    "(a]",
    '"string"',
    "#x",
    "1.2.3",
    "a\\b",
    "#;(x)",
    "'x",
    "(" * 300 + ")" * 300,
    "[" * 5000,
    "99999999999999999999",
    "(array)",
    "(array (0 3) 1 2)",
    "(array (2) Int)",
    "(λ (x) x)",
    "(Iλ ((n Atom)) f)",
    "(f (define x 1))",
    "[]",
    "()",
    "(+ 1 2.5)",
    "(+ [1 2 3] [4 5])",
    "[1 2.5]",
    "(unbox (n x (iota/v 5)) x)",
    "(1 2)",
    "(λ ((x Int)) x)",
    "(i-app iota/s 3)",
    "(t-app head Int)",
    "(iota [[2 3] [4 5]] [1 2])",
    "(Tλ ((T Array)) (λ ((f (Arr (-> (T) T) (Shp 2))) (x T)) (f x)))",
    COUNTEREXAMPLE,
    "(Iλ ((s Shape) (t Shape)) (λ ((x (Arr Int s)) (y (Arr Int t))) (+ x y)))",
    "(box 2 [1 2 3] (Sigma ((n Dim)) (Arr Int (Shp n))))",
    "(array (0) (Arr Int (Shp)))",
    "Int",
    "(λ ((x (Arr Int (Shp " + "(+ " * 200 + "s" + ")" * 200 + ")))) x)",
    "(f\x00)",
    "(define (f (x [Int])) (g x))",
    "(λ ((x " + "(Arr (-> (" * 120 + "[Int]) [Int]) (Shp)) " * 120 + ")) x)",
    "(unbox (n m x (iota/v 5)) x)",
]

def test_no_traceback_for_bad_inputs(tmp_path):
    """Every bad program is a located error with exit 1, never a Python traceback."""
    paths = []
    for i, text in enumerate(BAD_INPUTS):
        path = tmp_path / f"bad{i}.rem"
        path.write_text(text, encoding="utf-8")
        paths.append(str(path))
    results = run_in_one_process([(["check", p], tmp_path) for p in paths])
    assert len(results) == len(BAD_INPUTS)
    failures = []
    for text, path, r in zip(BAD_INPUTS, paths, results):
        m = ERROR_LINE.match(r["stderr"].split("\n", 1)[0])
        if "Traceback" in r["stderr"] or r["code"] != 1 or not m or m["file"] != path:
            failures.append((text[:60], r["code"], r["stderr"][-400:]))
    assert not failures, failures


# ---------------------------------------------------------------------------
# Standard streams that are closed, full or gone; sources that never end; --version


LONG_RUN = "(iterate (λ ((x [Int])) (+ x 1)) 10000000 0)"  # minutes of work: it is always interrupted


def _close_fd(fd: int):
    return lambda: os.close(fd)


@pytest.fixture(scope="module")
def streams(tmp_path_factory) -> dict[str, Result]:
    """Each case its own ``python -m remora`` with its standard streams arranged (all at once)."""
    cwd = tmp_path_factory.mktemp("streams")
    full = os.open("/dev/full", os.O_WRONLY) if os.path.exists("/dev/full") else None
    gone_r, gone_w = os.pipe()  # a pipe nobody reads: writing to it fails with EPIPE
    os.close(gone_r)
    cases = {
        "stdin_closed": (["eval", "-e", "(read-nums)"], dict(preexec_fn=_close_fd(0))),
        "stdin_closed_reference": (["eval", "--engine=reference", "-e", "(read-nums)"], dict(preexec_fn=_close_fd(0))),
        "stdout_full": (["eval", "-e", "(+ 1 2)"], dict(stdout=full)),
        "check_stdout_full": (["check", "-e", "(+ 1 2)"], dict(stdout=full)),
        "help_stdout_full": (["--help"], dict(stdout=full)),
        "eval_help_stdout_full": (["eval", "--help"], dict(stdout=full)),
        "stdout_gone": (["eval", "-e", "(+ 1 2)"], dict(stdout=gone_w)),
        "stdout_closed": (["eval", "-e", "(+ 1 2)"], dict(preexec_fn=_close_fd(1))),
        "check_stdout_closed": (["check", "-e", "(+ 1 2)"], dict(preexec_fn=_close_fd(1))),
        "version_stdout_closed": (["--version"], dict(preexec_fn=_close_fd(1))),
        "nothing_to_print_stdout_closed": (["eval", "-e", "(define x 1)"], dict(preexec_fn=_close_fd(1))),
        "stderr_gone": (["eval", "-e", "(+ 1 2) (/ 1 0)"], dict(stderr=gone_w)),
        "stderr_closed": (["eval", "-e", "(+ 1 2) (/ 1 0)"], dict(preexec_fn=_close_fd(2))),
        "source_endless": (["eval", "/dev/zero"], {}),
        "version": (["--version"], {}),
    }
    if full is None:
        for name in ("stdout_full", "check_stdout_full", "help_stdout_full", "eval_help_stdout_full"):
            del cases[name]
    procs = {}
    for name, (argv, arranged) in cases.items():
        streams = {"stdin": subprocess.DEVNULL, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **arranged}
        procs[name] = subprocess.Popen([sys.executable, "-m", "remora", *argv], cwd=cwd, env=ENV, **streams)
    for fd in (full, gone_w):
        if fd is not None:
            os.close(fd)
    out = {}
    for name, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=120)
        out[name] = Result(proc.returncode, (stdout or b"").decode(), (stderr or b"").decode(), cwd)
    return out


@pytest.mark.parametrize("name", ["stdin_closed", "stdin_closed_reference"])
def test_read_nums_with_standard_input_closed(streams, name):
    r = streams[name]
    assert r.returncode == 1, r.stderr
    assert r.stderr.splitlines()[0] == "<expr>:1:1: error: read-nums: standard input is closed"


@pytest.mark.parametrize("name", ["stdout_full", "check_stdout_full", "help_stdout_full", "eval_help_stdout_full"])
def test_output_that_cannot_be_written_is_an_io_error(streams, name):
    if name not in streams:
        pytest.skip("no /dev/full on this system")
    r = streams[name]
    assert (r.returncode, r.stderr) == (2, "remora: cannot write to standard output: No space left on device\n")


@pytest.mark.parametrize("name", ["stdout_closed", "check_stdout_closed", "version_stdout_closed"])
def test_output_to_a_closed_standard_output_is_an_io_error(streams, name):
    """``remora eval f.rem >&-``: Python starts with no standard output, and printing would go
    nowhere without a word (issue 29.11); as for a full disk, exit 2 and say so."""
    r = streams[name]
    assert (r.returncode, r.stderr) == (2, "remora: cannot write to standard output: it is closed\n")


def test_a_program_that_prints_nothing_needs_no_standard_output(streams):
    r = streams["nothing_to_print_stdout_closed"]
    assert (r.returncode, r.stderr) == (0, "")


def test_output_nobody_reads_ends_quietly(streams):
    r = streams["stdout_gone"]
    assert (r.returncode, r.stderr) == (0, "")


def test_error_status_survives_a_standard_error_nobody_reads(streams):
    r = streams["stderr_gone"]
    assert r.returncode == 1
    assert r.stdout == "3\n"


def test_error_status_survives_a_closed_standard_error(streams):
    r = streams["stderr_closed"]
    assert r.returncode == 1
    assert r.stdout == "3\n"  # (the report is lost: it must not appear among the values)


def test_source_that_never_ends_is_refused_at_once(streams):
    r = streams["source_endless"]
    assert r.returncode == 2
    assert r.stderr == "remora: cannot read /dev/zero: larger than 33,554,432 bytes, the limit for a program\n"


def test_version(streams):
    from remora import __version__

    r = streams["version"]
    assert (r.returncode, r.stdout, r.stderr) == (0, f"remora {__version__}\n", "")
    assert re.fullmatch(r"remora \d+\.\d+\.\d+\n", r.stdout)


def test_source_size_limit(tmp_path):
    from remora.interfaces.streams import MAX_SOURCE_BYTES

    big = tmp_path / "big.rem"
    with open(big, "wb") as f:
        f.write(b"; " + b"x" * (MAX_SOURCE_BYTES - 3) + b"\n")  # exactly the limit: read (a comment)
    (r,) = run_in_one_process([(["check", str(big)], tmp_path)])
    assert (r["code"], r["stdout"], r["stderr"]) == (0, "", "")
    with open(big, "ab") as f:
        f.write(b"1")
    (r,) = run_in_one_process([(["check", str(big)], tmp_path)])
    assert r["code"] == 2 and "the limit for a program" in r["stderr"], r


# The command imports only the standard library before its entry point runs: Ctrl-C while NumPy,
# the checker or the prelude load is caught there like any other (contract §3: 130, one line).

STARTUP = textwrap.dedent(
    """
    import sys
    import remora, remora.interfaces.cli
    heavy = sorted(m for m in ("numpy", "z3", "sexpdata", "remora.interfaces.session", "remora.interfaces.api",
                               "prompt_toolkit", "pygments", "IPython", "pygls", "remora.interfaces.notebook")
                   if m in sys.modules)
    print(" ".join(heavy) or "none")
    """
)

INTERRUPTED_AT = textwrap.dedent(
    """
    import os, signal, sys
    from remora.interfaces.cli import entry
    delay, program = float(sys.argv[1]), sys.argv[2]
    sys.argv = ["remora", "eval", "-e", program]
    signal.signal(signal.SIGALRM, lambda *_: os.kill(os.getpid(), signal.SIGINT))
    signal.setitimer(signal.ITIMER_REAL, delay)
    entry()
    """
)


def test_the_command_module_imports_nothing_heavy():
    r = subprocess.run([sys.executable, "-c", STARTUP], capture_output=True, text=True, env=ENV, timeout=60)
    assert (r.returncode, r.stdout, r.stderr) == (0, "none\n", "")


@pytest.mark.parametrize("delay", [0.001, 0.01, 0.03, 0.1, 0.3])
def test_ctrl_c_at_any_moment_of_start_up_exits_130(delay):
    """Ctrl-C (a real SIGINT) while the entry point imports NumPy, loads the prelude, checks, runs."""
    import signal

    r = subprocess.run(
        [sys.executable, "-c", INTERRUPTED_AT, str(delay), LONG_RUN], capture_output=True, text=True, env=ENV,
        stdin=subprocess.DEVNULL, timeout=120,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # (as at a terminal)
    )
    assert (r.returncode, r.stderr) == (130, "remora: interrupted\n")


INTERRUPTED_IN_A_CALLBACK = textwrap.dedent(
    """
    import os, signal, sys, weakref
    from remora.interfaces.cli import entry
    sys.argv = ["remora", "eval", "-e", sys.argv[1]]

    class Target:
        pass

    class Finder:
        # the first import entry() makes drops an object whose weakref callback receives the
        # Ctrl-C: Python ignores an exception raised in a callback ("Exception ignored in")
        fired = False

        @classmethod
        def find_spec(cls, *args, **kwargs):
            if not cls.fired:
                cls.fired = True
                t = Target()
                cls.ref = weakref.ref(t, lambda _: os.kill(os.getpid(), signal.SIGINT))
                del t
            return None

    sys.meta_path.insert(0, Finder)
    entry()
    """
)


def test_ctrl_c_inside_a_callback_that_swallows_it_still_exits_130():
    """A Ctrl-C whose KeyboardInterrupt is raised inside a weakref callback (as the import
    system's module-lock callbacks are, during start-up) is delivered again, not dropped."""
    import signal

    r = subprocess.run(
        [sys.executable, "-c", INTERRUPTED_IN_A_CALLBACK, LONG_RUN], capture_output=True, text=True, env=ENV,
        stdin=subprocess.DEVNULL, timeout=120,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert (r.returncode, r.stderr, r.stdout) == (130, "remora: interrupted\n", "")


def test_lsp_without_pygls_says_what_to_install():
    """`remora lsp` needs the lsp extra: without pygls it says so and exits with 2 (no traceback)."""
    code = "import sys\nsys.modules['pygls'] = None\nsys.argv = ['remora', 'lsp']\nfrom remora.interfaces.cli import entry\nentry()\n"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 2
    assert r.stderr == "remora: `remora lsp` needs pygls, which is not installed: pip install 'remora[lsp]'\n"
