"""Float sums and products of ragged vectors all at once (remora/primitives/pairwise.py): each
box's value is NumPy's reduce of it alone, bit for bit (D28), whatever the other boxes' lengths —
any length, past NumPy's pairwise block of 128 too — in calls whose number does not depend on
the lengths."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import eval_value
from remora import backends
from remora.backends.base import Backend
from remora.dynamics.layouts import Ragged
from remora.erasure.erase import erase_form
from remora.interfaces.session import Session
from remora.dynamics.runtime import RunConfig
from remora.plans import PLANS
from remora.primitives import pairwise

NUMPY = backends.get("numpy")

#: lengths around NumPy's block sizes (8 running sums, blocks of 128, halves beyond)
EDGES = [0, 1, 2, 7, 8, 9, 15, 16, 127, 128, 129, 255, 256, 257, 1000, 4000]

atoms = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1e308, -1e308, 1e-308, 5e-324, np.inf, -np.inf]),
    st.floats(-1e3, 1e3),
)


def _alone(op: str, data: np.ndarray, lengths) -> np.ndarray:
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    ufunc = {"add": np.add, "multiply": np.multiply}[op]
    return np.array([ufunc.reduce(data[a:b].copy()) for a, b in zip(offsets[:-1], offsets[1:])], dtype=np.float64)


def _same_bits(got: np.ndarray, want: np.ndarray) -> None:
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert got[~nan].tobytes() == want[~nan].tobytes()


@settings(max_examples=60, deadline=None)
@given(lengths=st.lists(st.one_of(st.sampled_from(EDGES), st.integers(0, 300)), min_size=1, max_size=12),
       seed=st.integers(0, 2**32 - 1), specials=st.lists(atoms, max_size=8), op=st.sampled_from(["add", "multiply"]))
def test_each_box_is_reduced_as_numpy_reduces_it_alone(lengths, seed, specials, op):
    rng = np.random.default_rng(seed)
    lengths = np.array(lengths, dtype=np.int64)
    total = int(lengths.sum())
    data = rng.standard_normal(total) * 10.0 ** rng.integers(-12, 12, total)
    if op == "multiply":
        data = 1.0 + data * 1e-13  # (products of many large factors are all inf)
    if total:
        data[rng.integers(0, total, len(specials))] = specials
        data[rng.random(total) < 0.1] = -0.0
    with np.errstate(all="ignore"):
        got = pairwise.ragged_reduce(NUMPY, op, Ragged(NUMPY, data, lengths))
        _same_bits(got, _alone(op, data, lengths))


@pytest.mark.parametrize("n", [1, 7, 8, 127, 128, 129, 255, 256, 1000, 4000])
def test_all_negative_zeros_and_long_rows(n):
    lengths = np.array([0, n, 1, n, 0])
    rng = np.random.default_rng(n)
    for data in (np.full(int(lengths.sum()), -0.0), rng.standard_normal(int(lengths.sum())) * 1e6):
        got = pairwise.ragged_reduce(NUMPY, "add", Ragged(NUMPY, data, lengths))
        assert got.tobytes() == _alone("add", data, lengths).tobytes()


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 30), cell=st.sampled_from([(), (2,), (2, 3)]), data=st.data())
def test_the_generic_insert_is_numpys_insert(n, cell, data):
    """``Backend.insert_items`` as a library without an ``insert`` runs it (by positions): the
    NumPy backend's ``np.insert``, item for item, with positions repeated and at the end."""
    before = np.array(sorted(data.draw(st.lists(st.integers(0, n), max_size=8))), dtype=np.int64)
    x = np.arange(n * int(np.prod(cell)), dtype=np.float64).reshape((n,) + cell)
    want = NUMPY.insert_items(x, before, -1.0)
    assert want.tolist() == np.insert(x, before, -1.0, axis=0).tolist()
    got = Backend.insert_items(NUMPY, x, before, -1.0)
    assert got.shape == want.shape and got.tolist() == want.tolist()


def _plan_calls(n: int) -> int:
    """The array calls of the plan of a sum of the rows of an n×n triangle (n distinct lengths)."""
    session = Session(run=RunConfig())
    session.bind("m", np.random.default_rng(n).standard_normal((n, n)))
    (typed,) = session.check_text(
        "(unbox (k r ((λ ((row [Float n]) (i [Int])) (filter (<= (iota/w row) i) row))"
        f" m (positions m))) (sum r))".replace("[Float n]", f"[Float {n}]"), "<test>")
    form = erase_form(typed)
    assert session.engine.eval_form(form).shape == (n,)  # (its values: the tests above and below)
    (plan,) = PLANS.plans(form)
    return sum(1 for line in plan.source.splitlines() if " = " in line)


def test_a_ragged_sum_makes_the_same_calls_whatever_the_number_of_lengths():
    """Rows of 20 lengths and of 300 (some past 128): the same plan, line for line but shapes —
    the lengths are data, not one group of calls each."""
    assert _plan_calls(20) == _plan_calls(300)


def test_triangular_rows_agree_with_the_reference_engine():
    """Rows of every length from 1 to 140 (past NumPy's block of 128): the plan's sums, the
    reference engine's sum of each box alone, the same atoms."""
    n = 140
    program = f"""
(define m (sin (* 0.37 (int->float ((i-app iota/s (Shp {n} {n})))))))
(define (rows (a [Float {n} {n}]))
  ((λ ((row [Float {n}]) (i [Int])) (filter (<= (iota/w row) i) row)) a (positions a)))
(unbox (k r (rows (* 1000.0 m))) (sum r))
"""
    m = np.sin(0.37 * np.arange(n * n, dtype=np.float64).reshape(n, n)) * 1000.0
    want = [np.add.reduce(m[i, : i + 1]) for i in range(n)]
    assert eval_value(program) == "[" + " ".join(repr(float(x)) for x in want) + "]"
