"""A Float ``fold`` of ``+`` or ``*`` keeps its exact right-fold order (D22) at reduce's speed.

``fold_items(op, z, x, axis)`` is ``z`` combined with the items strictly left to right; NumPy's
reduces a slow axis of a C-ordered buffer (z, items…) item after item, which must be bit for bit
the order ``accumulate`` takes — for every shape, one cell or many, and every float width.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import remora
from remora.backends.base import Backend
from remora.backends.numpy_backend import NumpyBackend
from remora.plans import PLANS

XP = NumpyBackend()


def _in_order(op, z, x, axis):
    acc = z
    for i in range(x.shape[axis]):
        acc = op(acc, np.take(x, i, axis=axis))
    return acc


@settings(max_examples=150, deadline=None)
@given(shape=st.lists(st.integers(1, 9), min_size=1, max_size=3), axis=st.integers(0, 2),
       dtype=st.sampled_from([np.float64, np.float32]), op=st.sampled_from(["add", "multiply"]),
       seed=st.integers(0, 2**32 - 1))
def test_fold_items_combines_strictly_in_order(shape, axis, dtype, op, seed):
    axis %= len(shape)
    r = np.random.default_rng(seed)
    x = (r.standard_normal(shape) * 10.0 ** r.uniform(-8, 8, shape)).astype(dtype)
    z = r.standard_normal(shape[:axis] + shape[axis + 1:]).astype(dtype)
    ufunc = {"add": np.add, "multiply": np.multiply}[op]
    expected = _in_order(ufunc, z, x, axis)
    got = XP.fold_items(op, z, x, axis)
    assert got.dtype == x.dtype
    assert np.array_equal(got, expected, equal_nan=True)
    assert np.array_equal(Backend.fold_items(XP, op, z, x, axis), expected, equal_nan=True)


def test_a_float_fold_of_plus_is_one_ordered_reduction_and_the_right_fold():
    """The plan holds ``fold_items`` (no running values, no ``accumulate``); its value is the
    right fold (f x1 (f x2 … (f xn z))) exactly, however the fold is written."""
    r = np.random.default_rng(3)
    a, b = r.standard_normal((300, 64)), r.standard_normal((300, 64))
    p = a * b
    right = np.zeros(300)
    for i in range(63, -1, -1):
        right = p[:, i] + right
    for src in ("((λ ((x [Float 64]) (y [Float 64])) (fold + 0.0 (* x y))) a b)",
                "((λ ((x [Float 64]) (y [Float 64])) (fold (λ ((u [Float]) (v [Float])) (+ u v)) 0.0 (* x y))) a b)",
                "((λ ((xy [Float 64])) (fold + 0.0 xy)) (* a b))"):
        for _ in range(2):  # (traced, then replayed)
            assert np.array_equal(np.asarray(remora.evaluate(src, a=a, b=b)), right), src
    PLANS.clear()
    for _ in range(2):
        remora.evaluate("((λ ((x [Float 64]) (y [Float 64])) (fold + 0.0 (* x y))) a b)", a=a, b=b)
    (ir,) = [p.ir for _, kept in list(PLANS._plans.values()) if kept for p in kept if p.ir is not None]
    assert "fold_items" in ir.ops() and "accumulate" not in ir.ops()
