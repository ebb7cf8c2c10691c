"""The workloads in single precision (``python -m bench --dtype=float32``, issue 26): each workload
of ``bench/programs.py`` with its ``Float`` data as ``Float32`` — and, where its data are
integers, its ``Int`` data as ``Int32`` — against the same hand-written NumPy (and ``jax.jit``)
version given ``float32``/``int32`` arrays, which then computes in single precision too.

The Remora programs are the 64-bit ones with their types written ``Float32``/``Int32``: their
literals are weak (contract §10) and take the new types from their context, so nothing else
changes — but where a result's type is fixed by nothing but literals (Game of Life's
``bool->int``, an ``Int``), the program says ``Int32`` (a declared parameter).
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np

from .programs import LIFE, WORKLOADS, Workload

#: workloads whose integer data (and so their Int types) become Int32; the others keep Int for
#: the positions they compute (the triangular rows'), and Collatz keeps its Ints (its orbits
#: pass 2**31 below 10**6, where an Int32 would wrap around)
INT32_DATA = {"Game of Life", "histogram", "Pathfinder"}

#: the workloads bound by memory traffic, where halving the bytes should show (issue 26: JAX
#: Float32 at most 0.7x JAX Float on them)
MEMORY_BOUND = {"dot products", "batched softmax", "1-D Jacobi", "Hotspot", "Pathfinder", "segmented sums",
                "triangular mat-vec", "histogram"}

#: programs written for Int32 by hand: Game of Life's grid is Int32 but its rotation counts stay
#: Ints, and its new cells, (bool->int alive), are Int32 by a declared parameter (nothing else
#: in the step fixes the type bool->int makes)
SOURCES32 = {
    "Game of Life": re.sub(r"\(Arr Int \(Shp (n m|m)\)\)", r"(Arr Int32 (Shp \1))", LIFE).replace(
        "(bool->int (or (= count 3) (and (= g 1) (= count 2))))",
        "((λ ((alive (Arr Int32 (Shp n m)))) alive) (bool->int (or (= count 3) (and (= g 1) (= count 2)))))"),
}



def single(w: Workload) -> Workload:
    """``w`` in single precision: Float32 (and Int32 for :data:`INT32_DATA`) types and inputs."""
    ints = w.name in INT32_DATA
    source = re.sub(r"\bFloat\b", "Float32", w.source)
    if w.name in SOURCES32:
        source = SOURCES32[w.name]
    elif ints:  # (the histogram's bool->int makes Int32s: its context, the bins, asks for them)
        source = re.sub(r"\bInt\b", "Int32", source)

    def inputs(n: int, make=w.inputs) -> dict:
        return {k: narrowed(v, ints) for k, v in make(n).items()}

    return replace(w, source=source, inputs=inputs, rtol=max(w.rtol, 1e-4))


def narrowed(x, ints: bool):
    """An input array in single precision (integers too, when ``ints``)."""
    x = np.asarray(x)
    if x.dtype == np.float64:
        return x.astype(np.float32)
    if ints and x.dtype == np.int64:
        return x.astype(np.int32)
    return x


def agree(got, want, rtol: float) -> bool:
    """Whether two single-precision results agree: the same shape and dtype, and all but a few
    atoms in a thousand within ``rtol`` (a chaotic iteration — a Mandelbrot orbit near the set's
    edge — can escape one step apart when one rounding differs, as float32 code does anywhere)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if got.dtype.kind != "f":
        return bool(np.mean(got != want) <= 1e-3)
    close = np.isclose(got, want, rtol=rtol, atol=rtol, equal_nan=True)
    return bool(np.mean(~close) <= 1e-3)


SINGLE: list[Workload] = [single(w) for w in WORKLOADS]
