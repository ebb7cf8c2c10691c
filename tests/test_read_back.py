"""Printed values read back (contract §3, issue 29.5): the text ``remora eval`` prints for a value
of any atom type, read as a program, is the same value — printed, it is the same text; through
the Python API, it is the same array, bit for bit.  ``inf``, ``-inf`` and ``nan`` are the
prelude's names (decisions.md D58), ordinary names a program may rebind.  A ``Float32`` or
``Int32`` value prints as its numbers, which read back as ``Float``/``Int``: in the 32-bit type
through ``float->float32``/``int->int32`` (the printed ``Float32`` is the shortest decimal whose
``float32`` is the value, D56).
"""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import remora
from remora.interfaces.cli import main
from conftest import eval_value, eval_error, subprocess_env

INF = "(/ 1.0 0.0)"  # (what the printed names were built from before the prelude named them)
FLOATS = f"[1.5 -0.0 0.0 {INF} (neg {INF}) (- {INF} {INF}) 1e300 5e-324 0.1 1e-05 123456789.125 -2.5e-10]"

#: (expression making a value, how its printed text is read back as the same type)
CASES = {
    "Int": ("[0 -9223372036854775808 9223372036854775807 -1 42]", "{}"),
    "Float": (FLOATS, "{}"),
    "Float scalar nan": (f"(- {INF} {INF})", "{}"),
    "Float matrix": (f"[[{INF} -0.0] [(- {INF} {INF}) (neg {INF})]]", "{}"),
    "Bool": ("[[#t #f] [#f #f]]", "{}"),
    "Int32": ("(int->int32 [0 -2147483648 2147483647 -7])", "(int->int32 {})"),
    "Float32": (f"(float->float32 {FLOATS})", "(float->float32 {})"),
}


def printed(capsys, program: str) -> str:
    code = main(["eval", "-e", program])
    out, err = capsys.readouterr()
    assert (code, err) == (0, ""), err
    return out.rstrip("\n")


def same_bits(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("case", sorted(CASES))
def test_what_remora_eval_prints_reads_back_as_the_same_text(capsys, case):
    expr, read_as = CASES[case]
    text = printed(capsys, expr)
    assert printed(capsys, read_as.format(text)) == text


@pytest.mark.parametrize("case", sorted(CASES))
def test_what_remora_eval_prints_reads_back_through_the_api_as_the_same_array(capsys, case):
    expr, read_as = CASES[case]
    text = printed(capsys, expr)
    original, again = remora.evaluate(expr), remora.evaluate(read_as.format(text))
    # (nan's sign bit is not printed: compare nan as nan, everything else bit for bit)
    nans = np.isnan(original) if original.dtype.kind == "f" else np.zeros(original.shape, bool)
    assert np.array_equal(np.isnan(again) if again.dtype.kind == "f" else nans, nans)
    assert same_bits(np.where(nans, 0, original).astype(original.dtype), np.where(nans, 0, again).astype(again.dtype))


def test_inf_minus_inf_and_nan_read_back_on_both_engines():
    assert eval_value("(sort [3.0 nan 1.0])") == "[1.0 3.0 nan]"
    assert eval_value("[inf -inf nan -0.0]") == "[inf -inf nan -0.0]"
    assert eval_value("(+ 1.0 inf)") == "inf"
    assert eval_value("(< -inf -1e300)") == "#t"
    assert eval_value("(= nan nan)") == "#f"


def test_inf_and_nan_are_ordinary_names_a_program_may_rebind():
    assert eval_value("(define inf 3) (+ inf 1)") == "4"
    assert eval_value("(define (f (nan [Int])) (* 2 nan)) (f 5)") == "10"
    assert eval_value("((λ ((-inf [Bool])) -inf) #t)") == "#t"


def test_inf_is_a_float_so_a_float32_context_converts_it():
    err = eval_error("((λ ((x [Float32 2])) x) [1.5 inf])")
    assert "float->float32" in err.message
    assert eval_value("((λ ((x [Float32 2])) x) (float->float32 [1.5 inf]))") == "[1.5 inf]"


def test_remora_eval_prints_what_it_reads_end_to_end():
    """One process: the printed text of a value with every special Float, read back by the command."""
    run = [sys.executable, "-m", "remora", "eval", "-e"]
    first = subprocess.run(run + [FLOATS], capture_output=True, text=True, env=subprocess_env(), timeout=120)
    again = subprocess.run(run + [first.stdout], capture_output=True, text=True, env=subprocess_env(), timeout=120)
    assert (first.returncode, again.returncode, again.stderr) == (0, 0, "")
    assert again.stdout == first.stdout and "inf -inf nan" in first.stdout


_FLOAT64 = st.floats(allow_nan=True, allow_infinity=True)


def _literal(x: float) -> str:
    return "nan" if math.isnan(x) else repr(x)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_FLOAT64, min_size=1, max_size=6), st.booleans())
def test_any_floats_print_and_read_back(capsys, xs, narrow):
    wrap = "(float->float32 {})" if narrow else "{}"
    if narrow:  # (values a float32 holds: the literal is then exactly the value)
        with np.errstate(over="ignore"):
            xs = [float(np.float32(x)) if abs(x) <= np.finfo(np.float32).max else x for x in xs]
    source = wrap.format("[" + " ".join(_literal(x) for x in xs) + "]")
    text = printed(capsys, source)
    assert printed(capsys, wrap.format(text)) == text
    value, again = remora.evaluate(source), remora.evaluate(wrap.format(text))
    assert np.array_equal(value, again, equal_nan=True) and value.dtype == again.dtype
    assert np.array_equal(np.signbit(value[~np.isnan(value)]), np.signbit(again[~np.isnan(again)]))
