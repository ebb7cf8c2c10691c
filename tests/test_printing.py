"""Printing for people and for programs (issue 27): at a terminal the command line lays values
out as the REPL does — summarised beyond 1,000 atoms, rows wrapped between atoms to the
terminal's width, ``--print=full``, ``--precision N`` — and shows a progress line on standard
error while long work runs; written to a pipe, a value is contract §3's one line, whole, byte
for byte what it was.  The command runs on a real pseudo-terminal here."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import struct
import subprocess
import sys
import termios

import numpy as np
import pytest
import remora
from conftest import subprocess_env

from remora.interfaces.layout import EXACT, Display, float_texts, for_stream, show
from remora.interfaces.progress import running
from remora.statics.indices import concrete_shape
from remora.statics.types import BASE_TYPES, TArr

MILLION = "((i-app iota/s (Shp 1000000)))"
LOOP = "(while (λ ((x [Int])) (> x 0)) (λ ((x [Int])) (- x 1)) 20000)"


def at_terminal(*argv: str, columns: int = 80, env: dict | None = None) -> tuple[int, str]:
    """``python -m remora ARGV`` with standard output and error on a pseudo-terminal of
    ``columns`` columns: (exit status, what the terminal received)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "remora", *argv], stdin=subprocess.DEVNULL, stdout=slave,
                            stderr=slave, env={**subprocess_env(), **(env or {})})
    os.close(slave)
    received = b""
    while True:
        try:
            data = os.read(master, 1 << 16)
        except OSError:  # (EIO: the child closed the terminal)
            break
        if not data:
            break
        received += data
    proc.wait(timeout=120)
    os.close(master)
    return proc.returncode, received.decode("utf-8").replace("\r\n", "\n")


def piped(*argv: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "remora", *argv], capture_output=True, text=True, timeout=120,
                          env={**subprocess_env(), **(env or {})})


def test_a_million_atoms_at_a_terminal_are_summarised_and_whole_in_a_pipe():
    code, shown = at_terminal("eval", "-e", MILLION)
    assert code == 0
    assert shown == "[0 1 2 … 999997 999998 999999]\n"
    assert len(shown.splitlines()) <= 100
    r = piped("eval", "--print=full", "--precision", "2", "-e", MILLION)  # (both are for people)
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout == "[" + " ".join(map(str, range(1_000_000))) + "]\n"  # contract §3, byte for byte


def test_rows_wrap_between_atoms_to_the_terminal_width():
    code, shown = at_terminal("eval", "--print=full", "-e", "((i-app iota/s (Shp 3 30)))", columns=40)
    assert code == 0
    lines = shown.rstrip("\n").split("\n")
    assert all(len(line) <= 40 for line in lines) and len(lines) > 3
    assert lines[0].startswith("[[ 0  1  2") and lines[1].startswith("  12 13")  # (continued under its first atom)
    atoms = " ".join(lines).replace("[", " ").replace("]", " ").split()
    assert [int(a) for a in atoms] == list(range(90))  # no atom cut, none lost
    code, summary = at_terminal("eval", "-e", "((i-app iota/s (Shp 2000)))", columns=40)
    assert summary == "[0 1 2 … 1997 1998 1999]\n"


def test_print_full_and_precision_at_a_terminal():
    code, shown = at_terminal("eval", "--print=full", "-e", "((i-app iota/s (Shp 1500)))", columns=100)
    assert code == 0 and "…" not in shown and shown.count("\n") > 1
    code, shown = at_terminal("eval", "--precision", "3", "-e", "(/ [1.0 2.0 -0.5] 3.0)")
    assert shown == "[0.333 0.667 -0.167]\n"
    assert piped("eval", "--precision", "3", "-e", "(/ [1.0 2.0 -0.5] 3.0)").stdout == (
        "[0.3333333333333333 0.6666666666666666 -0.16666666666666666]\n")


def test_a_progress_line_at_a_terminal_only_while_work_runs():
    code, shown = at_terminal("eval", "-e", LOOP, env={"REMORA_PROGRESS_DELAY": "0"})
    assert code == 0
    assert shown.startswith("\rremora: running <expr>:1:1 00:0")
    assert shown.split("\r")[-1] == "0\n"  # (the line erased, then the value)
    r = piped("eval", "-e", LOOP, env={"REMORA_PROGRESS_DELAY": "0"})
    assert (r.returncode, r.stdout, r.stderr) == (0, "0\n", "")  # never in a pipe
    code, quick = at_terminal("eval", "-e", "(+ 1 2)")  # (default delay: short work shows nothing)
    assert quick == "3\n"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_line_is_erased_when_the_work_is_done(monkeypatch):
    import threading

    monkeypatch.setenv("REMORA_PROGRESS_DELAY", "0")
    stream = _Terminal()
    drawn = threading.Event()
    write = stream.write

    def watched(text: str) -> int:
        if "running" in text:
            drawn.set()
        return write(text)

    stream.write = watched  # type: ignore[method-assign]
    with running("p.rem:3:1", stream):
        assert drawn.wait(30)
    text = stream.getvalue()
    assert "remora: running p.rem:3:1 00:00" in text
    assert text.endswith("\r")  # (tqdm's leave=False: the line is blanked, the cursor back at its start)
    quiet = io.StringIO()
    with running("p.rem:3:1", quiet):
        pass
    assert quiet.getvalue() == ""


def _type(a: np.ndarray) -> TArr:
    name = {"i": "Int", "f": "Float", "b": "Bool"}[a.dtype.kind]
    return TArr(BASE_TYPES[name], concrete_shape(a.shape))


def test_float_precision_as_numpy_prints_it():
    assert float_texts([1 / 3, 1.0, 0.1, -0.0, float("nan"), float("inf")], 3) == [
        "0.333", "1.0", "0.1", "-0.0", "nan", "inf"]
    assert float_texts([1e-5, 1.0, 2.5e10], 3) == ["1.0e-05", "1.0e+00", "2.5e+10"]  # (magnitudes far apart)
    assert float_texts([1.2345e9, 1.0], 2) == ["1.23e+09", "1.00e+00"]  # (one number of digits: aligned)
    m = np.array([[1 / 3, 10.0], [-2.5, 0.125]])
    assert show(m, _type(m), Display(precision=2)) == "[[ 0.33 10.0 ]\n [-2.5   0.12]]"
    assert np.allclose(remora.evaluate(show(m, _type(m), Display(precision=2))), m, atol=0.01)  # (reads back)


def test_displays_for_streams():
    assert for_stream(io.StringIO()) is EXACT
    assert for_stream(io.StringIO(), full=True, precision=3) is EXACT  # (a pipe gets contract §3 whatever was asked)
    people = for_stream(_Terminal(), precision=3)
    assert people.rows and people.limit == 1000 and people.precision == 3 and people.width
    assert for_stream(_Terminal(), full=True).limit is None
    a = np.arange(12).reshape(3, 4)
    assert show(a, _type(a), EXACT) == "[[0 1 2 3] [4 5 6 7] [8 9 10 11]]"


@pytest.mark.parametrize("width", [5, 12, 30, 41, 80])
def test_a_wrapped_row_is_greedy_and_never_passes_the_width(width):
    """Both ways of wrapping (atoms of one width, counted; of several widths, one at a time)
    put on each line as many atoms as fit."""
    from remora.interfaces.layout import _wrapped

    for items in (["%3d" % i for i in range(40)], [str(i) for i in range(40)]):
        lines = _wrapped(items, 2, width).split("\n")
        assert " ".join(_wrapped(items, 2, width).split()) == " ".join(i.strip() for i in items)
        used = 0
        for i, line in enumerate(lines):
            count = len(line.split())
            assert 2 * (i == 0) + len(line) <= max(width, 2 + max(map(len, items)))  # (line 0 starts after `[`s)
            used += count
            if i + 1 < len(lines):  # (the next atom would not have fit on this line)
                assert 2 * (i == 0) + len(line) + 1 + len(items[used]) > width
