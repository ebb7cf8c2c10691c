"""The interactive session (contract §3): `python -m remora repl`.

Two ways in:

* through a pipe — no terminal, so no prompts: standard output carries only values
  (and the output of ``:``-commands), standard error only error reports.  Every piped
  case is started at once by a module fixture (starting the interpreter costs most of a
  second) and each test looks at its own result;
* through a pseudo-terminal (``pty.fork``) — prompts, continuation prompts, line
  editing, Ctrl-C and Ctrl-D, read with a deadline so a hang fails quickly.
"""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import subprocess_env

ROOT = Path(__file__).resolve().parents[1]
ENV = {**subprocess_env(), "PYTHONIOENCODING": "utf-8"}
ERROR_LINE = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): error: (?P<msg>.+)$")
TIMEOUT = 60


def _example() -> Path | None:
    """An example program to `:load` (softmax.rem if it is there, else the smallest one)."""
    examples = sorted((ROOT / "examples").glob("*.rem"))
    if not examples:
        return None
    for path in examples:
        if path.name == "softmax.rem":
            return path
    return min(examples, key=lambda p: p.stat().st_size)


LOADED_PROGRAM = """\
; a small program for :load
(define (triple (x [Int])) (* x 3))
(define base [1 2 3])
(triple base)
"""

BAD_PROGRAM = """\
(define ok 1)

  (+ ok 2.5)
"""

RUNTIME_PROGRAM = """\
(define first (/ 1 0))
(define later 2)
"""

# ---------------------------------------------------------------------------
# Piped sessions


@dataclass
class Result:
    rc: int  # (for a case run in a group: the group's)
    out: str
    err: str
    first_line: int = 1  # the line of the session's input where the case starts

    @property
    def out_lines(self) -> list[str]:
        return self.out.splitlines()

    @property
    def err_lines(self) -> list[str]:
        return self.err.splitlines()

    def errors(self) -> list[re.Match]:
        """The `FILE:LINE:COL: error:` lines of standard error, parsed."""
        return [m for m in map(ERROR_LINE.match, self.err_lines) if m]


# name: (extra argv after `repl`, standard input, merge stderr into stdout)
PIPE_CASES: dict[str, tuple[list[str], str, bool]] = {
    "multiline_define": (
        [],
        "(define (f (x [Int]))\n"
        "  (+ x\n"
        "     1))\n"
        "(f [1 2 3])\n"
        "(f 10)\n",
        False,
    ),
    "values": (
        [],
        "(+ 1 2)\n"
        "[1.5 2.5]\n"
        "\n"
        "; a comment prints nothing\n"
        "(+ 1 1) (* 2 3)\n"
        "#t\n"
        "[[1 2 3] [4 5 6]]\n"
        "(array (0 3) Int)\n"
        "(iota/v 3)\n"
        "(sum [1 2 3 4])\n"
        "(define y 7)\n"
        "y\n",
        False,
    ),
    "type_cmd": (
        [],
        ":type [1 2 3]\n"
        ":type (+ [[1 2 3] [4 5 6]] [10 20])\n"
        ":type (/ 1 0)\n"
        "(define v [1.0 2.0])\n"
        ":type v\n"
        ":type (+ 1\n"
        "         2)\n",
        False,
    ),
    "shape_cmd": (
        [],
        ":shape [[1 2 3] [4 5 6]]\n"
        ":shape 5\n"
        ":shape (iota/v 3)\n",
        False,
    ),
    "explicit_cmd": (
        [],
        ":explicit (head [[1 2] [3 4]])\n"
        ":explicit (sum [1 2 3])\n",
        False,
    ),
    "help_cmd": ([], ":help\n", False),
    "errors": (
        [],
        "(+ 1 2.5)\n"
        "(+ 1 1)\n"
        "(/ 1 0)\n"
        "(+ 2 2)\n"
        ")\n"
        "(+ 3 3)\n",
        False,
    ),
    "errors_merged": (
        [],
        "(+ 10 1)\n"
        "(+ 1 2.5)\n"
        "(+ 20 2)\n"
        "(/ 1 0)\n"
        "(+ 30 3)\n",
        True,
    ),
    "multiline_error": (
        [],
        "(+ 1\n"
        "   2.5)\n"
        "(+ 1 1)\n",
        False,
    ),
    "unbound": ([], "(+ nope 1)\n(+ 1 1)\n", False),
    "trace_cmd": ([], ":trace (+ [1 2] 3)\n", False),
    "trace_definition": ([], "(define (g (x [Int])) (* x 2))\n:trace (g [1 2])\n", False),
    "unknown_cmd": ([], ":bogus\n(+ 1 1)\n", False),
    "quit": ([], "(+ 1 1)\n:quit\n(+ 5 5)\n", False),
    "quit_short": ([], "(+ 1 1)\n:q\n(+ 5 5)\n", False),
    "eof": ([], "(+ 1 1)\n", False),
    "empty_input": ([], "", False),
    "eof_in_open_bracket": ([], "(+ 1 1)\n(+ 1\n", False),
    "define_runtime_error": ([], "(define bad (/ 1 0))\nbad\n(+ 1 1)\n", False),
    "redefine_runtime_error": (
        [],
        "(define a 1)\n(define a (int->float (/ 1 0)))\n:type a\na\n(+ 1 1)\n",
        False,
    ),
    "no_prelude": (["--no-prelude"], "(sum [1 2])\n(+ 1 2)\n", False),
    "prelude": ([], "(sum [1 2])\n(mean [1.0 2.0])\n(dot [1 2] [3 4])\n", False),
    "command_without_argument": ([], ":type\n(+ 1 1)\n", False),
    "load_tmp": ([], ":load {tmp}/prog.rem\n(triple 5)\nbase\n", False),
    "load_bad": ([], ":load {tmp}/bad.rem\n(+ 1 1)\n", False),
    "load_bad_then_use": ([], ":load {tmp}/bad.rem\nok\n(+ 1 1)\n", False),
    "load_runtime_error_then_use": ([], ":load {tmp}/runtime.rem\nlater\n(+ 1 1)\n", False),
    "load_missing": ([], ":load {tmp}/does-not-exist.rem\n(+ 1 1)\n", False),
    # errors name the line of the input stream (a form's own line), not line 1 of each input
    "stream_lines": (
        [],
        "(+ 1 1)\n"
        "\n"
        "; a comment\n"
        "(+ 1 2.5)\n"
        "(define y\n"
        "  (+ 1 2.5))\n"
        ":type (+ 1\n"
        "  2.5)\n"
        "(+ 2 2) (+ 1 2.5)\n",
        False,
    ),
    # the exit status: 1 if any input failed, 0 otherwise
    "status_clean": ([], "(+ 1 1)\n:type 1\n:help\n(define z 2)\nz\n", False),
    "status_error_then_quit": ([], "(/ 1 0)\n(+ 1 1)\n:quit\n", False),
    "status_unknown_command": ([], ":bogus\n(+ 1 1)\n", False),
    # what cannot be read is an error, and the session goes on
    "load_dev_zero": ([], ":load /dev/zero\n(+ 1 1)\n", False),
    "load_not_utf8": ([], ":load {tmp}/latin1.rem\n(+ 1 1)\n", False),
    "input_not_utf8": ([], b"(+ 1 \xff)\n(+ 1 1)\n", False),
}

EXAMPLE = _example()
if EXAMPLE is not None:
    PIPE_CASES["load_example"] = ([], f":load {EXAMPLE.relative_to(ROOT).as_posix()}\n(+ 1 1)\n", False)


# Cases that leave the session as they found it (balanced input, no :quit, no known crash) share
# one process per group, to keep the number of interpreters started down.  After each case the
# group's input has a separator: a number (its value marks the end of the case on standard
# output) and an unbound name (its error report marks the end on standard error).
GROUPS: dict[str, list[str]] = {
    "clean": [
        "multiline_define", "values", "type_cmd", "shape_cmd", "explicit_cmd", "help_cmd",
        "trace_cmd", "trace_definition", "prelude", "load_tmp", "load_example",
    ],
    "errors": [
        "errors", "multiline_error", "unbound", "unknown_cmd", "command_without_argument",
        "load_bad", "load_missing",
    ],
}
SEPARATOR_BASE = 987650


def _separator(i: int) -> str:
    return f"{SEPARATOR_BASE + i}\nzz-separator-{i}\n"


def _split_out(out: str, count: int) -> list[str]:
    chunks, current = [], []
    for line in out.splitlines(keepends=True):
        if line.rstrip("\n") == str(SEPARATOR_BASE + len(chunks)):
            chunks.append("".join(current))
            current = []
        else:
            current.append(line)
    chunks.append("".join(current))
    assert len(chunks) == count + 1 and chunks[-1] == "", f"separators missing from output: {out!r}"
    return chunks[:-1]


def _split_err(err: str, count: int) -> list[str]:
    chunks, current, skipping = [], [], False
    for line in err.splitlines(keepends=True):
        if skipping and line.startswith(" "):
            continue  # the separator report's source line, caret and notes
        skipping = False
        if f"`zz-separator-{len(chunks)}`" in line:
            chunks.append("".join(current))
            current, skipping = [], True
        else:
            current.append(line)
    chunks.append("".join(current))
    assert len(chunks) == count + 1 and chunks[-1] == "", f"separators missing from errors: {err!r}"
    return chunks[:-1]


@pytest.fixture(scope="module")
def piped(tmp_path_factory) -> dict[str, Result]:
    """Run every piped case (concurrently) and collect its exit code and output."""
    tmp = tmp_path_factory.mktemp("repl")
    (tmp / "prog.rem").write_text(LOADED_PROGRAM, encoding="utf-8")
    (tmp / "bad.rem").write_text(BAD_PROGRAM, encoding="utf-8")
    (tmp / "runtime.rem").write_text(RUNTIME_PROGRAM, encoding="utf-8")
    (tmp / "latin1.rem").write_bytes("(+ 1 1) ; café\n".encode("latin-1"))
    env = {**ENV, "HOME": str(tmp), "REMORA_HISTORY": str(tmp / "history")}

    def start(argv: list[str], merge: bool = False, stdin=subprocess.PIPE) -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, "-m", "remora", *argv],
            cwd=ROOT,
            env=env,
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if merge else subprocess.PIPE,
        )

    def text_of(name: str) -> str | bytes:
        text = PIPE_CASES[name][1]
        return text if isinstance(text, bytes) else text.replace("{tmp}", tmp.as_posix())

    runs: dict[str, tuple[subprocess.Popen, str | bytes | None, list[str] | None]] = {}
    grouped = set()
    first_lines: dict[str, int] = {}
    for group, names in GROUPS.items():
        names = [n for n in names if n in PIPE_CASES]
        grouped.update(names)
        text = ""
        for i, n in enumerate(names):
            first_lines[n] = text.count("\n") + 1
            text += text_of(n) + _separator(i)
        runs[group] = (start(["repl"]), text, names)
    for name, (argv, _, merge) in PIPE_CASES.items():
        if name not in grouped:
            runs[name] = (start(["repl", *argv], merge), text_of(name), None)
    if EXAMPLE is not None:
        runs["eval_example"] = (start(["eval", str(EXAMPLE.relative_to(ROOT))], stdin=subprocess.DEVNULL), None, None)

    results: dict = {"tmp": tmp}
    for name, (proc, text, members) in runs.items():
        try:
            data = text.encode("utf-8") if isinstance(text, str) else text
            out_b, err_b = proc.communicate(data, timeout=TIMEOUT)
            rc = proc.returncode
        except subprocess.TimeoutExpired:
            proc.kill()
            out_b, err_b = proc.communicate()
            rc = -999
        out, err = out_b.decode("utf-8", "replace"), (err_b or b"").decode("utf-8", "replace")
        if members is None:
            results[name] = Result(rc, out, err)
            continue
        assert "Traceback" not in err and "internal error" not in err, f"group {name} crashed: {err}"
        outs, errs = _split_out(out, len(members)), _split_err(err, len(members))
        for member, o, e in zip(members, outs, errs):
            results[member] = Result(rc, o, e, first_lines[member])
    return results


@pytest.mark.parametrize("name", sorted(PIPE_CASES))
def test_no_traceback_ever(piped, name):
    r = piped[name]
    assert r.rc != -999, f"{name} hung"
    assert "Traceback" not in r.out + r.err
    assert "internal error" not in r.out + r.err, r.err


def test_no_prompts_without_terminal(piped):
    for name in PIPE_CASES:
        r = piped[name]
        assert "remora>" not in r.out and "remora>" not in r.err, name
        assert "...     " not in r.out, name
    assert piped["eof"].out == "2\n"


def test_multiline_define_then_use(piped):
    r = piped["multiline_define"]
    assert r.out_lines == ["[2 3 4]", "11"]
    assert r.err == ""


def test_values_print_one_per_expression(piped):
    r = piped["values"]
    assert r.out_lines == [
        "3",
        "[1.5 2.5]",
        "2",
        "6",
        "#t",
        "[[1 2 3] [4 5 6]]",
        "(array (0 3) Int)",
        "(box 3 [0 1 2])",
        "10",
        "7",
    ]
    assert r.err == ""


def test_type_command(piped):
    r = piped["type_cmd"]
    assert r.out_lines == [
        "(Arr Int (Shp 3))",
        "(Arr Int (Shp 2 3))",
        "(Arr Int (Shp))",  # checked, not evaluated: no division by zero
        "(Arr Float (Shp 2))",
        "(Arr Int (Shp))",  # a :command's argument may span lines too
    ]
    assert r.err == ""


def test_shape_command(piped):
    r = piped["shape_cmd"]
    # a box is a scalar: its own shape is (Shp), whatever it holds
    assert r.out_lines == ["(Shp 2 3)", "(Shp)", "(Shp)"]
    assert r.err == ""


def test_explicit_command_shows_inferred_applications(piped):
    r = piped["explicit_cmd"]
    head_line, sum_line = r.out_lines
    assert "(i-app head 1 (Shp 2))" in head_line
    assert "t-app" in head_line
    assert "(i-app sum 3)" in sum_line
    assert "t-app" in sum_line
    assert r.err == ""


def test_help_command(piped):
    r = piped["help_cmd"]
    for command in (":type", ":shape", ":explicit", ":trace", ":load", ":help", ":quit"):
        assert command in r.out
    assert r.err == ""


def _assert_caret(err_lines: list[str], index: int, source_line: str, col: int, width: int | None = None) -> None:
    """After the error line at ``index``: the source line, then a caret under column ``col``."""
    assert err_lines[index + 1] == "    " + source_line
    caret = err_lines[index + 2]
    assert caret.startswith("    " + " " * (col - 1) + "^"), caret
    if width is not None:
        assert caret.strip() == "^" * width


def test_errors_are_reported_and_the_session_continues(piped):
    r = piped["errors"]
    assert r.out_lines == ["2", "4", "6"]
    errors = r.errors()
    first = r.first_line  # (lines 1, 3 and 5 of the case: each error names its line in the input)
    assert [(m["file"], int(m["line"]), m["col"]) for m in errors] == [
        ("<repl>", first, "6"),
        ("<repl>", first + 2, "1"),
        ("<repl>", first + 4, "1"),
    ]
    type_error, runtime_error, syntax_error = (m["msg"] for m in errors)
    assert "int->float" in type_error or "2.0" in type_error
    assert "division by zero" in runtime_error
    assert ")" in syntax_error
    lines = r.err_lines
    starts = [i for i, line in enumerate(lines) if ERROR_LINE.match(line)]
    _assert_caret(lines, starts[0], "(+ 1 2.5)", 6, 3)
    _assert_caret(lines, starts[1], "(/ 1 0)", 1)
    _assert_caret(lines, starts[2], ")", 1, 1)


def test_error_report_comes_between_the_values_around_it(piped):
    r = piped["errors_merged"]
    lines = r.out_lines
    assert lines[0] == "11"
    assert ERROR_LINE.match(lines[1])
    i = lines.index("22")
    assert i > 1
    j = next(k for k in range(i + 1, len(lines)) if ERROR_LINE.match(lines[k]))
    assert "division by zero" in lines[j]
    assert lines[-1] == "33"
    assert r.rc == 1  # (an input failed)


def test_error_location_within_a_multiline_input(piped):
    r = piped["multiline_error"]
    (m,) = r.errors()
    assert (m["file"], int(m["line"]), m["col"]) == ("<repl>", r.first_line + 1, "4")
    assert r.out_lines == ["2"]


def test_unbound_variable(piped):
    r = piped["unbound"]
    (m,) = r.errors()
    assert (int(m["line"]), m["col"]) == (r.first_line, "4")
    assert "unbound" in m["msg"] and "nope" in m["msg"]
    assert r.out_lines == ["2"]


def test_trace_prints_reduction_steps(piped):
    r = piped["trace_cmd"]
    lines = r.out_lines
    assert lines[-1] == "[4 5]"
    kinds = [line.split()[0] for line in lines[:-1]]
    for step in ("lift", "map", "δ", "collapse"):
        assert step in kinds, lines
    assert r.err == ""


def test_trace_sees_session_definitions(piped):
    r = piped["trace_definition"]
    assert r.out_lines[-1] == "[2 4]"
    assert any(line.startswith("δ") for line in r.out_lines)
    assert r.err == ""


def test_unknown_command(piped):
    r = piped["unknown_cmd"]
    assert "unknown command" in r.err and ":bogus" in r.err
    assert r.out_lines == ["2"]


@pytest.mark.parametrize("name", ["quit", "quit_short"])
def test_quit(piped, name):
    r = piped[name]
    assert r.out_lines == ["2"]  # nothing after :quit runs
    assert r.err == ""
    assert r.rc == 0


def test_end_of_input_exits_zero(piped):
    assert piped["eof"].rc == 0
    assert piped["eof"].err == ""
    assert piped["empty_input"].rc == 0
    assert piped["empty_input"].out == piped["empty_input"].err == ""


def test_end_of_input_inside_open_bracket(piped):
    r = piped["eof_in_open_bracket"]
    assert r.out_lines == ["2"]
    (m,) = r.errors()
    assert m["file"] == "<repl>"
    assert "unclosed" in m["msg"]


def test_runtime_error_in_define_leaves_name_undefined(piped):
    r = piped["define_runtime_error"]
    assert "internal error" not in r.err
    msgs = [m["msg"] for m in r.errors()]
    assert len(msgs) == 2
    assert "division by zero" in msgs[0]
    assert "unbound" in msgs[1] and "bad" in msgs[1]
    assert r.out_lines == ["2"]
    assert r.rc == 1


def test_runtime_error_in_redefinition_keeps_old_definition(piped):
    r = piped["redefine_runtime_error"]
    assert r.out_lines == ["(Arr Int (Shp))", "1", "2"]
    (m,) = r.errors()
    assert "division by zero" in m["msg"]


def test_no_prelude(piped):
    r = piped["no_prelude"]
    (m,) = r.errors()
    assert "unbound" in m["msg"] and "sum" in m["msg"]
    assert r.out_lines == ["3"]
    assert r.rc == 1


def test_prelude_is_loaded_by_default(piped):
    r = piped["prelude"]
    assert r.out_lines == ["3", "1.5", "11"]
    assert r.err == ""


def test_command_without_argument_is_a_located_error(piped):
    r = piped["command_without_argument"]
    (m,) = r.errors()
    assert m["file"] == "<repl>"
    assert int(m["line"]) >= 1 and int(m["col"]) >= 1


def test_command_without_argument_continues(piped):
    r = piped["command_without_argument"]
    assert r.out_lines == ["2"]


def test_load_file_keeps_definitions(piped):
    r = piped["load_tmp"]
    assert r.out_lines == ["[3 6 9]", "15", "[1 2 3]"]
    assert r.err == ""


def test_load_file_with_error_reports_its_path(piped):
    r = piped["load_bad"]
    (m,) = r.errors()
    path = (piped["tmp"] / "bad.rem").as_posix()
    assert (m["file"], m["line"], m["col"]) == (path, "3", "9")
    assert r.err_lines[r.err_lines.index(m.group(0)) + 1] == "      (+ ok 2.5)"
    assert r.out_lines == ["2"]


@pytest.mark.parametrize("name", ["load_bad_then_use", "load_runtime_error_then_use"])
def test_failed_load_leaves_no_half_defined_names(piped, name):
    r = piped[name]
    assert "internal error" not in r.err
    # the name is either defined (with its value) or unbound -- never a crash
    assert r.out_lines[-1] == "2"
    assert r.rc == 1


def test_load_missing_file(piped):
    r = piped["load_missing"]
    assert "does-not-exist.rem" in r.err
    assert "Traceback" not in r.err
    assert r.out_lines == ["2"]


@pytest.mark.skipif(EXAMPLE is None, reason="no example programs in examples/")
def test_load_example_prints_what_eval_prints(piped):
    r, expected = piped["load_example"], piped["eval_example"]
    assert expected.rc == 0, expected.err
    assert r.err == ""
    assert r.out == expected.out + "2\n"


# ---------------------------------------------------------------------------
# Sessions on a pseudo-terminal

PTY_DEADLINE = 20.0

try:
    import pty
    import termios  # noqa: F401  (a pty needs a POSIX terminal layer)
except ImportError:  # pragma: no cover - Windows
    pty = None  # type: ignore[assignment]


class PtyRepl:
    """`remora repl` on a pseudo-terminal: send keystrokes, read until a marker appears."""

    def __init__(self, tmp_path: Path, argv: tuple[str, ...] = (), terminal: dict[str, str] | None = None):
        if pty is None:
            pytest.skip("pty is not available on this platform")
        self.history = tmp_path / "history"
        env = {
            **ENV,
            "TERM": "dumb",
            "HOME": str(tmp_path),
            "REMORA_HISTORY": str(self.history),
            "INPUTRC": os.devnull,
            **(terminal or {}),
        }
        try:
            pid, fd = pty.fork()
        except OSError as exc:
            pytest.skip(f"cannot open a pseudo-terminal: {exc}")
        if pid == 0:  # the child: become `python -m remora repl`
            try:
                # Ctrl-C as at a terminal, even when the tests run in the background (where SIGINT is ignored).
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                os.chdir(ROOT)
                os.execve(sys.executable, [sys.executable, "-m", "remora", "repl", *argv], env)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        if terminal:  # a screen of a known size (prompt_toolkit lays its menus out on it)
            import fcntl
            import struct
            import termios

            fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
        self.buffer = b""
        self.transcript = b""
        self.status: int | None = None

    def _fill(self, deadline: float) -> bool:
        """Read what is available before ``deadline``; False at end of output."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return True
        ready, _, _ = select.select([self.fd], [], [], min(remaining, 0.5))
        if not ready:
            return True
        try:
            data = os.read(self.fd, 4096)
        except OSError:  # EIO: the child closed the terminal
            return False
        if not data:
            return False
        self.buffer += data
        self.transcript += data
        return True

    def expect(self, marker: str, timeout: float = PTY_DEADLINE) -> str:
        """Everything up to and including ``marker`` (consumed); fails after ``timeout`` seconds."""
        want = marker.encode("utf-8")
        deadline = time.monotonic() + timeout
        while want not in self.buffer:
            if time.monotonic() >= deadline:
                pytest.fail(f"timed out waiting for {marker!r}; transcript: {self.transcript!r}")
            if not self._fill(deadline):
                if want in self.buffer:
                    break
                pytest.fail(f"session ended before {marker!r}; transcript: {self.transcript!r}")
        i = self.buffer.index(want) + len(want)
        out, self.buffer = self.buffer[:i], self.buffer[i:]
        return out.decode("utf-8", "replace").replace("\r\n", "\n")

    def send(self, text: str) -> None:
        os.write(self.fd, text.encode("utf-8"))

    def line(self, text: str) -> None:
        self.send(text + "\n")

    def interrupt(self, then: str = "^C") -> str:
        """Ctrl-C, repeated until the session reacts (a ^C that arrives before readline waits for
        input can be held back by Python's readline until the next key)."""
        deadline = time.monotonic() + PTY_DEADLINE
        while True:
            time.sleep(0.2)
            self.send("\x03")
            try_until = min(time.monotonic() + 2.0, deadline)
            while then.encode() not in self.buffer and time.monotonic() < try_until:
                if not self._fill(try_until):
                    break
            if then.encode() in self.buffer:
                return self.expect(then)
            if time.monotonic() >= deadline:
                pytest.fail(f"Ctrl-C had no effect; transcript: {self.transcript!r}")

    def wait(self, timeout: float = PTY_DEADLINE) -> int:
        """The exit status of the session (it must end by itself within ``timeout``)."""
        deadline = time.monotonic() + timeout
        while True:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid == self.pid:
                self.status = status
                return os.waitstatus_to_exitcode(status)
            if time.monotonic() >= deadline:
                pytest.fail(f"session did not exit; transcript: {self.transcript!r}")
            self._fill(time.monotonic() + 0.1)

    def close(self) -> None:
        if self.status is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
                if pid == 0:
                    os.kill(self.pid, signal.SIGKILL)
                    os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass
        try:
            os.close(self.fd)
        except OSError:
            pass


@pytest.fixture
def term(tmp_path):
    sessions: list[PtyRepl] = []

    def start(*argv: str) -> PtyRepl:
        s = PtyRepl(tmp_path, argv)
        sessions.append(s)
        return s

    yield start
    for s in sessions:
        s.close()


PROMPT, CONTINUE = "remora> ", "...     "


def test_pty_prompt_and_value(term):
    s = term()
    s.expect(PROMPT)
    s.line("(+ 40 2)")
    out = s.expect(PROMPT)
    assert "42\n" in out
    assert "Traceback" not in s.transcript.decode("utf-8", "replace")


def test_pty_continuation_prompt_and_multiline_define(term):
    s = term()
    s.expect(PROMPT)
    s.line("(define (f (x [Int]))")
    out = s.expect(CONTINUE)
    assert PROMPT not in out
    s.line("  (* x")
    s.expect(CONTINUE)
    s.line("     10))")
    out = s.expect(PROMPT)
    assert CONTINUE not in out
    s.line("(f [1 2 3])")
    assert "[10 20 30]\n" in s.expect(PROMPT)


def test_pty_type_command(term):
    s = term()
    s.expect(PROMPT)
    s.line(":type [[1 2 3] [4 5 6]]")
    assert "(Arr Int (Shp 2 3))\n" in s.expect(PROMPT)


def test_pty_error_then_value(term):
    s = term()
    s.expect(PROMPT)
    s.line("(+ 1 2.5)")
    out = s.expect(PROMPT)
    assert "<repl>:1:6: error:" in out
    assert "    (+ 1 2.5)\n" in out and "         ^^^" in out
    s.line("(/ 1 0)")
    assert "<repl>:1:1: error:" in s.expect(PROMPT)
    s.line("(+ 20 3)")
    out = s.expect(PROMPT)
    assert "23\n" in out
    assert "error" not in out
    assert "Traceback" not in s.transcript.decode("utf-8", "replace")


def test_pty_ctrl_c_abandons_partial_input(term):
    s = term()
    s.expect(PROMPT)
    s.line("(+ 100")
    s.expect(CONTINUE)
    s.interrupt("^C")
    s.expect(PROMPT)
    s.line("(+ 20 3)")
    out = s.expect(PROMPT)
    # had "(+ 100" been kept, the input would still be open (a continuation prompt, no value)
    assert "23\n" in out
    assert CONTINUE not in out
    assert "123" not in out
    s.send("\x04")
    assert s.wait() == 0


def test_pty_ctrl_d_at_empty_prompt_exits_zero(term, tmp_path):
    s = term()
    s.expect(PROMPT)
    s.line("(+ 1 1)")
    assert "2\n" in s.expect(PROMPT)
    time.sleep(0.2)
    s.send("\x04")
    assert s.wait() == 0
    # the history went where REMORA_HISTORY said, not into the real home directory
    assert s.history.exists()
    assert "(+ 1 1)" in s.history.read_text(encoding="utf-8", errors="replace")


def test_pty_quit_command(term):
    s = term()
    s.expect(PROMPT)
    s.line(":quit")
    assert s.wait() == 0


def test_pty_no_prelude(term):
    s = term("--no-prelude")
    s.expect(PROMPT)
    s.line("(sum [1 2])")
    out = s.expect(PROMPT)
    assert "<repl>:1:2: error:" in out and "sum" in out
    s.send("\x04")
    assert s.wait() == 1  # (an input failed)


def test_errors_name_the_line_of_the_input_stream(piped):
    r = piped["stream_lines"]
    assert [(m["file"], m["line"], m["col"]) for m in r.errors()] == [
        ("<repl>", "4", "6"),  # after a blank line and a comment
        ("<repl>", "6", "8"),  # the second line of a two-line define
        ("<repl>", "8", "3"),  # the second line of a :type argument
        ("<repl>", "9", "14"),  # the second form of a line
    ]
    _assert_caret(r.err_lines, 3, "  (+ 1 2.5))", 8, 3)
    assert r.out_lines == ["2", "4"]
    assert r.rc == 1


@pytest.mark.parametrize("name, status", [
    ("status_clean", 0), ("eof", 0), ("status_error_then_quit", 1), ("status_unknown_command", 1),
])
def test_exit_status_says_whether_an_input_failed(piped, name, status):
    r = piped[name]
    assert r.rc == status, r.err
    assert r.out_lines[-1] == "2"


def test_load_of_an_endless_file_is_refused_at_once(piped):
    r = piped["load_dev_zero"]
    assert r.err.startswith("cannot read /dev/zero: larger than "), r.err
    assert r.out_lines == ["2"]
    assert r.rc == 1


def test_load_of_a_file_that_is_not_utf8(piped):
    r = piped["load_not_utf8"]
    assert "latin1.rem" in r.err and "not UTF-8" in r.err, r.err
    assert r.out_lines == ["2"]
    assert r.rc == 1


def test_input_that_is_not_utf8_is_a_located_error(piped):
    r = piped["input_not_utf8"]
    (m,) = r.errors()
    assert (m["file"], m["line"], m["col"]) == ("<repl>", "1", "6")
    assert r.out_lines == ["2"]
    assert r.rc == 1


def test_internal_error_is_reported_and_the_session_goes_on(monkeypatch):
    """A bug in remora (here: an evaluation that raises) is said plainly, and the session goes on."""
    import io

    from remora.interfaces.repl import Repl

    out, err = io.StringIO(), io.StringIO()
    repl = Repl(io.StringIO("(+ 1 1)\n(+ 2 2)\n(+ 3 3)\n"), out, err, interactive=False)
    evaluate, calls = repl.session.evaluate, []

    def failing_once(form):
        calls.append(form)
        if len(calls) == 2:
            raise MemoryError("out of memory")
        return evaluate(form)

    monkeypatch.setattr(repl.session, "evaluate", failing_once)
    assert repl.run() == 1
    assert out.getvalue() == "2\n6\n"
    assert err.getvalue().startswith("remora: internal error: MemoryError: out of memory"), err.getvalue()
    assert "Traceback" not in err.getvalue()


def test_input_longer_than_the_limit_is_skipped(monkeypatch):
    """An endless line (``remora repl < /dev/zero``) must not fill memory: an input over the
    limit is an error, skipped, and the session goes on (the limit is lowered here)."""
    import io

    from remora.interfaces import repl as repl_module

    monkeypatch.setattr(repl_module, "MAX_SOURCE_BYTES", 100)
    text = "(+ 1 1)\n" + "x" * 500 + "\n(+ 2 2)\n" + "(+ 1\n" * 30 + ")" * 30 + "\n(+ 3 3)\n"
    out, err = io.StringIO(), io.StringIO()
    assert repl_module.Repl(io.StringIO(text), out, err, interactive=False).run() == 1
    assert out.getvalue() == "2\n4\n6\n"
    skipped = "characters, the limit for an input; it was skipped"
    # the 20 lines that made the open input too long went with it; the rest is read afresh
    assert err.getvalue().splitlines()[:3] == [
        f"<repl>:2:1: error: this input line is longer than 100 {skipped}",
        f"<repl>:4:1: error: this input is longer than 100 {skipped}",
        "<repl>:34:10: error: unexpected `)` with no open bracket to close",
    ]


# ---------------------------------------------------------------------------
# A full terminal: prompt_toolkit's editing, completion, history; values laid out for reading

#: what a terminal would not show: colours, cursor movements, modes
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\x1b[()][A-Z0-9]|\x1b[=>]|\x07|\x08")


class Screen(PtyRepl):
    """`remora repl` on an xterm-like pseudo-terminal, read as text without escape sequences."""

    def text_until(self, marker: str, timeout: float = PTY_DEADLINE) -> str:
        """What the session showed up to ``marker`` (escape sequences and carriage returns left
        out); the bytes read are consumed."""
        deadline = time.monotonic() + timeout
        while True:
            text = ANSI.sub("", self.buffer.decode("utf-8", "replace")).replace("\r", "")
            if marker in text:
                self.buffer = b""
                return text
            if time.monotonic() >= deadline:
                pytest.fail(f"timed out waiting for {marker!r}; screen: {text!r}")
            if not self._fill(deadline):
                pytest.fail(f"session ended before {marker!r}; screen: {text!r}")

    def enter(self, text: str, then: str) -> str:
        """Type ``text`` and Enter; what was shown up to ``then`` and the next prompt."""
        self.send(text + "\r")
        out = self.text_until(then + "\nremora>")
        return out


@pytest.fixture
def screen(tmp_path):
    sessions: list[Screen] = []

    def start(*argv: str) -> Screen:
        s = Screen(tmp_path, argv, terminal={"TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1", "COLUMNS": "200"})
        sessions.append(s)
        s.text_until("remora>")
        return s

    yield start
    for s in sessions:
        s.close()


def test_terminal_underscore_is_the_last_value_and_define_prints_its_type(screen):
    s = screen()
    s.enter("(+ 40 2)", "42")
    s.enter("(* _ 10)", "420")
    s.enter("(define (inc (x [Int])) (+ x 1))", "inc : (Arr (-> ((Arr Int (Shp))) (Arr Int (Shp))) (Shp))")
    s.enter("(inc _)", "421")
    s.enter("(define twice-last (* 2 _))", "twice-last : (Arr Int (Shp))")
    s.enter("(+ 1 1)", "2")
    s.enter("twice-last", "842")  # a definition keeps the `_` it saw
    assert "Traceback" not in s.transcript.decode("utf-8", "replace")


def test_terminal_prints_rows_and_summaries(screen):
    s = screen()
    s.enter("[[1 2 3] [40 50 60]]", "[[ 1  2  3]\n [40 50 60]]")
    s.enter("[[1.5 -0.25] [10.0 2.0]]", "[[ 1.5  -0.25]\n [10.0   2.0 ]]")
    s.enter("((i-app iota/s (Shp 2 2 2)))", "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]")
    s.enter("((i-app iota/s (Shp 2000)))", "[0 1 2 … 1997 1998 1999]")
    s.enter("((i-app iota/s (Shp 500 4)))", "[[   0    1    2    3]\n [   4    5    6    7]\n [   8    9   10   11]\n …\n"
            " [1988 1989 1990 1991]\n [1992 1993 1994 1995]\n [1996 1997 1998 1999]]")
    s.enter(":set print full", "")
    out = s.enter("((i-app iota/s (Shp 2000)))", "1997 1998 1999]")
    rows = out.split("\n")[1:-1]  # (the input echoed, the value, the next prompt)
    assert rows[0].startswith("[   0    1    2") and "…" not in out
    assert len(rows) > 1 and all(len(row) <= 200 for row in rows)  # wrapped between atoms to the screen
    assert [int(t) for t in " ".join(rows).strip("[]").split()] == list(range(2000))
    s.enter(":set print line", "")
    s.enter("[[1 2 3] [40 50 60]]", "[[1 2 3] [40 50 60]]")


def test_terminal_tab_completes_names_and_commands_with_their_types(screen):
    s = screen()
    s.enter("(define my-unique-name 41)", "my-unique-name : (Arr Int (Shp))")
    s.send("(+ my-uni\t")
    s.text_until("(+ my-unique-name")  # (completion runs in the background: wait for it)
    s.send(" 1)\r")
    s.text_until("42\nremora>")
    s.send("(iota/\t")  # several candidates: a menu, each with its type
    menu = s.text_until("iota/w")
    assert "iota/v" in menu and "(Arr (-> ((Arr Int (Shp))) (Arr (Sigma ((k Dim))" in menu
    s.send("\x03")
    s.text_until("remora>")
    s.send(":ty\t")
    s.text_until(":type")
    s.send(" [1 2]\r")
    s.text_until("(Arr Int (Shp 2))\nremora>")


def test_terminal_multiline_input_is_one_history_entry(screen, tmp_path):
    s = screen()
    s.send("(+ 1\r")
    s.text_until("(+ 1\n...")  # brackets open: Enter went to a new line of the same input
    s.send("2)\r")
    s.text_until("3\nremora>")
    s.send("\x1b[A")  # Up: the whole input comes back, both lines
    s.text_until("...     2)")
    s.send("\r")
    s.text_until("3\nremora>")
    s.send("\x04")
    assert s.wait() == 0
    entries = [e for e in s.history.read_text(encoding="utf-8").split("\n\n") if e.strip()]
    assert [[line for line in e.splitlines() if line.startswith("+")] for e in entries] == [["+(+ 1", "+2)"]]


def test_terminal_ctrl_r_searches_the_history_and_enter_ends_the_search(screen):
    """Issue 27: Ctrl-R then Enter used to leave the prompt in `I-search backward:` (our Enter
    binding took the search's keys); now Enter ends the search with the input found, as in
    IPython, and Enter again runs it."""
    s = screen()
    s.enter("(+ 100 1)", "101")
    s.enter("(* 7 6)", "42")
    s.send("\x12")  # Ctrl-R
    s.send("100")
    s.text_until("(+ 100 1)")
    s.send("\r")  # the search ends; the input found is in the buffer
    s.send("\r")  # and runs
    s.text_until("101\nremora>")
    s.send("\x12")
    s.send("7 6")
    s.text_until("(* 7 6)")
    s.send("\x07")  # Ctrl-G abandons the search
    s.send("(- 10 3)\r")
    s.text_until("7\nremora>")


def test_terminal_up_with_a_prefix_recalls_the_inputs_that_start_with_it(screen):
    s = screen()
    s.enter("(+ 100 1)", "101")
    s.enter("(* 7 6)", "42")
    s.enter("(+ 2 2)", "4")
    s.send("(+ 1")
    s.text_until("(+ 1")
    s.send("\x1b[A")  # Up: the last input starting with `(+ 1`, not the last input
    s.send("\r")
    s.text_until("101\nremora>")


def test_time_doc_and_backend_commands(piped_session):
    out, err = piped_session(
        "; twice: doubles its argument\n(define (twice (x [Int])) (* 2 x))\n:doc twice\n:doc sum\n:doc +\n"
        ":doc define\n:doc nothing\n:time (twice 21)\n:backend\n:set precision 2\n(/ 1.0 3.0)\n")
    lines = out.splitlines()
    assert lines[:3] == ["twice : (Arr (-> ((Arr Int (Shp))) (Arr Int (Shp))) (Shp))", "", "twice: doubles its argument"]
    assert "sum : (Arr (Pi ((n Dim))" in out and "sum: the sum of a vector's items" in out
    assert "+ : (Arr (-> ((Arr x (Shp)) (Arr x (Shp))) (Arr x (Shp))) (Shp))" in out and "Addition" in out
    assert "define — a keyword: (define x e)" in out
    assert "`nothing` is not a primitive, a definition or a keyword" in err
    i = lines.index("42")
    assert re.fullmatch(r"Wall time: [0-9.]+ (ns|µs|ms|s)", lines[i + 1])
    assert lines[i + 2:] == ["numpy", "0.33"]


def test_backend_command_keeps_definitions_and_inputs(piped_session):
    pytest.importorskip("jax")
    out, err = piped_session(
        "(define (f (x [Int])) (* 2 x))\n(define v [1 2 3])\n(f v)\n:backend jax\n:backend\n(f _)\n"
        "(define w (+ v 1))\n:backend numpy\n(f w)\n:backend jax\n(+ w v)\n:backend nope\n")
    assert out.splitlines() == ["[2 4 6]", "jax", "[4 8 12]", "[4 6 8]", "[3 5 7]"]
    assert "unknown backend 'nope'" in err


@pytest.fixture
def piped_session():
    """A session in this process, its input piped: (standard output, standard error)."""
    import io

    from remora.interfaces.repl import Repl

    def run(text: str) -> tuple[str, str]:
        out, err = io.StringIO(), io.StringIO()
        Repl(io.StringIO(text), out, err, interactive=False).run()
        return out.getvalue(), err.getvalue()

    return run


def test_repl_backend_option_names_a_backend(capsys):
    from remora.interfaces.cli import main

    assert main(["repl", "--backend", "nope"]) == 2
    assert "unknown backend 'nope'" in capsys.readouterr().err
