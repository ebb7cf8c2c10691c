"""The IR passes that make pointful programs (`for`, contract §12) run as their point-free
versions — remora/ir/passes/gathers.py, checks.py and broadcasts.py — each firing on programs
written differently and declining where its law does not hold, with the values unchanged.
Assertions are on the IR a plan keeps (``Program.ops()`` / ``eqns()``), never on a backend's
text."""

from __future__ import annotations

import numpy as np
import pytest

import remora
from remora import backends
from remora.ir.core import Abstract, Eqn, Sym
from remora.ir.passes import PIPELINE, broadcasts, checks, gathers
from remora.ir.passes.common import Context
from remora.plans import PLANS

NUMPY = backends.get("numpy")
GATHERS = {"take", "take_along_axis", "gather"}
RNG = np.random.default_rng(28)


def _planned(source: str, **inputs):
    """(the value, the IR of its plan): evaluated twice (traced, then replayed)."""
    PLANS.clear()
    first = remora.evaluate(source, **inputs)
    again = remora.evaluate(source, **inputs)
    assert np.array_equal(first, again)
    irs = [p.ir for _, kept in list(PLANS._plans.values()) if kept for p in kept if p.ir is not None]
    assert irs, "no plan was kept"
    return again, irs[-1]


def test_the_pipeline_runs_the_pointful_passes_after_folding():
    names = [run.__module__.rsplit(".", 1)[1] for run in PIPELINE]
    assert names.index("fold") < names.index("checks") < names.index("gathers") < names.index("broadcasts")
    assert names.index("broadcasts") < names.index("contraction")
    assert "views" in names[names.index("gathers"):]  # (what gathers makes is folded as views)


# --- gathers ---------------------------------------------------------------------------------

#: (Float: 1920 multiply-adds, past D27's threshold for the library's order of summing)
MATMULS = [
    "(for ((i 16) (j 10)) (sum (for ((k 12)) (* (index (index a i) k) (index (index b k) j)))))",
    "(for ((i 16) (j 10)) (sum (for ((k 12)) (* (index (index b k) j) (index (index a i) k)))))",
    "(for ((i 16)) (for ((j 10)) (reduce + (for ((k 12)) (* (index (index a i) k) (index (index b k) j))))))",
    "(for ((i 16) (j 10)) (dot (index a i) (for ((k 12)) (index (index b k) j))))",
]


@pytest.mark.parametrize("source", MATMULS)
def test_the_pointful_matrix_product_is_one_contraction_and_no_gather(source):
    a, b = RNG.standard_normal((16, 12)), RNG.standard_normal((12, 10))
    got, ir = _planned(source, a=a, b=b)
    assert np.allclose(got, a @ b, rtol=1e-12)
    ops = ir.ops()
    assert ops.count("einsum") == 1 and not GATHERS & set(ops), ir.text()
    (eqn,) = [e for e in ir.eqns() if e.op == "einsum"]
    assert {x.name for x in eqn.args[1:]} == {v.name for v, _ in ir.inputs}  # (a and b themselves)


@pytest.mark.parametrize("source, want", [
    ("(for ((i 7)) (index xs i))", lambda xs, m: xs),
    ("(for ((i 3) (j 5)) (index (index m i) j))", lambda xs, m: m),
    ("(for ((j 5) (i 3)) (index (index m i) j))", lambda xs, m: m.T),
    ("(for ((i 3)) (* 2.0 (index m i)))", lambda xs, m: 2.0 * m),
    ("(for ((i 3) (j 7)) (* (index xs j) (index (index m i) 0)))", lambda xs, m: xs[None, :] * m[:, :1]),
])
def test_an_index_frame_over_the_axis_is_the_array(source, want):
    xs, m = RNG.standard_normal(7), RNG.standard_normal((3, 5))
    got, ir = _planned(source, xs=xs, m=m)
    assert np.array_equal(got, want(xs, m))
    assert not GATHERS & set(ir.ops()), ir.text()


@pytest.mark.parametrize("source, want, op", [
    ("(for ((i 6)) (index xs (+ i 1)))", lambda xs: xs[1:], "__getitem__"),
    ("(for ((i 4)) (- (index xs (+ i 3)) (index xs i)))", lambda xs: xs[3:] - xs[:4], "__getitem__"),
    ("(for ((i 7)) (index xs (mod (- i 1) 7)))", lambda xs: np.roll(xs, 1), "roll"),
    ("(let ((n (length xs))) (for ((i 7)) (index xs (mod (+ i 2) n))))", lambda xs: np.roll(xs, -2), "roll"),
    ("(for ((i 2) (j 7)) (index (index m i) (mod (+ j 1) 7)))", lambda xs: np.roll(np.stack([xs, xs]), -1, 1), "roll"),
])
def test_index_arithmetic_is_a_slice_or_a_rotation(source, want, op):
    xs = RNG.standard_normal(7)
    got, ir = _planned(source, xs=xs, m=np.stack([xs, xs]))
    assert np.array_equal(got, want(xs))
    ops = ir.ops()
    assert op in ops and not GATHERS & set(ops), ir.text()


@pytest.mark.parametrize("source, want", [
    ("(for ((i 3)) (index xs (* 2 i)))", lambda xs, m, p: xs[[0, 2, 4]]),  # (every other item)
    ("(for ((i 7)) (index xs (- 6 i)))", lambda xs, m, p: xs[::-1]),  # (a reversal)
    ("(for ((i 5)) (index (index m i) i))", lambda xs, m, p: np.diag(m)),  # (a diagonal)
    ("(for ((i 4)) (index xs (mod (+ i 5) 7)))", lambda xs, m, p: xs[[5, 6, 0, 1]]),  # (wraps, not all)
    ("(index xs p)", lambda xs, m, p: xs[p]),  # (positions from data)
])
def test_other_positions_stay_a_gather(source, want):
    xs, m, p = RNG.standard_normal(7), RNG.standard_normal((5, 5)), np.array([3, 0, 3])
    got, ir = _planned(source, xs=xs, m=m, p=p)
    assert np.array_equal(got, want(xs, m, p))
    assert GATHERS & set(ir.ops()), ir.text()


def test_progression_reads_the_positions():
    ar = NUMPY.arange
    assert gathers.progression(ar(5), 5, NUMPY) == (0, 0, 5)
    assert gathers.progression((ar(4) + 1), 5, NUMPY) == (0, 1, 4)
    assert gathers.progression((ar(5) + 4) % 5, 5, NUMPY) == (0, 4, 5)
    assert gathers.progression(NUMPY.broadcast_to(NUMPY.reshape(ar(3), (1, 3, 1)), (2, 3, 4)), 3, NUMPY) == (1, 0, 3)
    assert gathers.progression(NUMPY.full((2, 2), 1, "Int"), 3, NUMPY) == (None, 1, 1)
    assert gathers.progression(ar(5) * 2, 10, NUMPY) is None
    assert gathers.progression(NUMPY.asarray([[0, 1], [1, 0]]), 2, NUMPY) is None


# --- checks ----------------------------------------------------------------------------------


@pytest.mark.parametrize("source", [
    "(for ((i 6)) (index xs (+ i 1)))",
    "(for ((i 7)) (index xs (mod (- i 1) 7)))",
    "(let ((n (length xs))) (for ((i 7)) (index xs (mod (+ i 2) n))))",
])
def test_checks_on_constant_positions_are_decided_when_the_plan_is_made(source):
    _, ir = _planned(source, xs=RNG.standard_normal(7))
    assert "require" not in ir.ops(), ir.text()


def test_a_check_on_data_stays():
    got, ir = _planned("(index xs p)", xs=RNG.standard_normal(7), p=np.array([1, 2]))
    assert "require" in ir.ops()
    with pytest.raises(remora.RemoraRuntimeError, match="out of range"):
        remora.evaluate("(index xs p)", xs=RNG.standard_normal(7), p=np.array([1, 9]))


def test_a_constant_check_that_fails_is_kept():
    ok = NUMPY.asarray([True, False])
    step = Eqn("require", "require", (ok, "no", (), None), None)
    steps, _ = checks.run([step], None, Context(NUMPY, [step]))
    assert steps == [step]
    held = Eqn("require", "require", (NUMPY.asarray([True, True]), "no", (), None), None)
    assert checks.run([held], None, Context(NUMPY, [held]))[0] == []


# --- broadcasts ------------------------------------------------------------------------------


def _constants(ir) -> list:
    return [a for e in ir.eqns() if e.op in broadcasts.ELEMENTWISE for a in e.args
            if type(a) is not Sym and hasattr(a, "shape") and a.ndim]


_I, _J = np.arange(3)[:, None], np.arange(5)[None, :]


@pytest.mark.parametrize("source, want, shapes", [
    ("(for ((i 3) (j 5)) (* (int->float j) (index (index m i) j)))", lambda m: _J * m, [(1, 5)]),
    ("(for ((i 3) (j 5)) (+ (int->float i) (index (index m i) j)))", lambda m: _I + m, [(3, 1)]),
    ("(for ((i 3) (j 5)) (* 0.25 (index (index m i) j)))", lambda m: 0.25 * m, [(1, 1)]),
    ("(for ((i 3) (j 5)) (select (<= j i) (index (index m i) j) -1e9))",
     lambda m: np.where(_J <= _I, m, -1e9), [(3, 5), (1, 1)]),  # (the mask varies along both)
])
def test_a_constant_operand_keeps_only_the_axes_it_varies_along(source, want, shapes):
    m = RNG.standard_normal((3, 5))
    got, ir = _planned(source, m=m)
    assert np.array_equal(got, want(m)) and got.dtype == np.float64
    assert sorted(c.shape for c in _constants(ir)) == sorted(shapes), ir.text()


def test_a_constant_the_other_operands_do_not_span_keeps_its_axes():
    x = Sym(Abstract(np.dtype("float64"), (1, 4)), "x", None)
    c = NUMPY.full((3, 4), 2.0, "Float")
    out = Sym(Abstract(np.dtype("float64"), (3, 4)), "y", None)
    step = Eqn("call", "multiply", (x, c), out)
    (after,), _ = broadcasts.run([step], out, Context(NUMPY, [step]))
    assert after.args[1].shape == (3, 1)  # (axis 0 is the constant's alone: kept; axis 1 narrowed)
