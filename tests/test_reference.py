"""The reference engine's application rules, one at a time (Fig. 12): lift, then map, then β/δ."""

from __future__ import annotations

import io

import numpy as np

from remora.dynamics.reference import Reference
from remora.dynamics.runtime import RunConfig
from remora.dynamics.values import PrimFn
from remora.primitives import PRIMITIVES

INT = "Int"  # (a representation, as erased annotations give it)


def traced() -> tuple[Reference, io.StringIO]:
    trace = io.StringIO()
    return Reference(RunConfig(trace=trace)), trace


def function(name: str) -> np.ndarray:
    """A scalar array holding the primitive ``name``."""
    fns = np.empty((), dtype=object)
    fns[()] = PrimFn(PRIMITIVES[name])
    return fns


def test_lift_replicates_every_frame_up_to_the_principal_frame():
    ref, trace = traced()
    xs, y = np.array([[1, 2, 3], [4, 5, 6]]), np.array([10, 20])
    fns, args = ref.lift(function("+"), [xs, y], ((), ()), None)
    assert fns.shape == (2, 3) and all(f is fns[0, 0] for f in fns.reshape(-1))
    assert np.array_equal(args[0], xs)
    assert np.array_equal(args[1], [[10, 10, 10], [20, 20, 20]])  # each cell copied along the new axis
    assert trace.getvalue().splitlines() == ["lift     (Shp) (Shp 2 3) (Shp 2) → (Shp 2 3)"]


def test_lift_does_nothing_when_the_frames_agree():
    ref, trace = traced()
    for fns, args in [
        (function("+"), [np.array(3), np.array(4)]),  # the scalar frame: β/δ comes next
        (np.broadcast_to(function("+"), (2,)), [np.array([1, 2]), np.array([3, 4])]),  # map comes next
    ]:
        lifted_fns, lifted = ref.lift(fns, args, ((), ()), None)
        assert lifted_fns is fns and lifted is args
    assert trace.getvalue() == ""


def test_map_is_one_application_per_cell_collapsed_into_one_array():
    ref, trace = traced()
    xs = np.array([[1, 2, 3], [4, 5, 6]])
    fns = np.broadcast_to(function("*"), (2, 3))
    out = ref.map(fns, [xs, xs], ((), ()), (2, 3), INT, None)
    assert np.array_equal(out, xs * xs) and out.dtype == np.int64
    steps = [line.split()[0] for line in trace.getvalue().splitlines()]
    assert steps == ["map"] + ["δ"] * 6 + ["collapse"]
