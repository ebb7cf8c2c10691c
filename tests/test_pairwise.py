"""Float sums of ragged vectors as one matrix of rows (remora/primitives/pairwise.py): each box's
sum is NumPy's ``add.reduce`` of it alone, bit for bit (D28), whatever the other boxes' lengths."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import eval_value
from remora import backends
from remora.dynamics.layouts import Ragged
from remora.primitives import pairwise

NUMPY = backends.get("numpy")


def _ragged(lengths: np.ndarray, rng) -> Ragged:
    total = int(lengths.sum())
    data = rng.standard_normal(total) * 10.0 ** rng.integers(-12, 12, total)
    data[rng.random(total) < 0.2] = -0.0
    data[rng.random(total) < 0.02] = np.inf
    data[rng.random(total) < 0.01] = -np.inf
    return Ragged(NUMPY, data, lengths)


@pytest.mark.parametrize("seed", range(6))
def test_each_box_is_summed_as_numpy_sums_it_alone(seed):
    rng = np.random.default_rng(seed)
    longest = [7, 8, 9, 64, 100, 128][seed]
    lengths = rng.integers(0, longest + 1, 300)
    lengths[0] = longest
    if seed == 0:
        lengths[1:] = 0
    xs = _ragged(lengths, rng)
    with np.errstate(invalid="ignore"):
        got = pairwise.pairwise_sums(NUMPY, xs, longest)
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        want = np.array([np.add.reduce(xs.data[a:b]) for a, b in zip(offsets[:-1], offsets[1:])])
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert got[~nan].tobytes() == want[~nan].tobytes()


def test_all_negative_zeros_sum_as_numpy_sums_them():
    lengths = np.arange(0, 20)
    xs = Ragged(NUMPY, np.full(int(lengths.sum()), -0.0), lengths)
    got = pairwise.pairwise_sums(NUMPY, xs, 19)
    want = np.array([np.add.reduce(np.full(n, -0.0)) for n in lengths])
    assert got.tobytes() == want.tobytes()


def test_triangular_rows_agree_with_the_reference_engine():
    """Rows of every length from 1 to 40 (each length its own): the matrix of rows in the plan,
    the reference engine's sum per box, the same atoms."""
    program = """
(define (rows (a [Float 40 40]))
  ((λ ((row [Float 40]) (i [Int])) (filter (<= (iota/w row) i) row)) a (positions a)))
(unbox (k r (rows m)) (sum r))
"""
    m = np.random.default_rng(9).standard_normal((40, 40)) * 1e3
    literal = "[" + " ".join("[" + " ".join(repr(float(x)) for x in row) + "]" for row in m) + "]"
    shown = eval_value(program.replace("(rows m)", f"(rows {literal})"))
    want = [np.add.reduce(m[i, : i + 1]) for i in range(40)]
    assert shown == "[" + " ".join(repr(float(x)) for x in want) + "]"
