"""``python -m bench printing [--size N]``: how long printing a value of N atoms takes (default 10⁶).

For Int, Float and Bool matrices of about N atoms: the command line's one-line format
(``remora.interfaces.show.show_value``, contract §3), the REPL's default display (rows, summarised) and
its full layout (``:set print full``), beside the per-atom recursive printer the project used
before (kept here as the baseline).  Minimum of three runs; the goal is under a second for 10⁶
atoms on every path.
"""

from __future__ import annotations

import argparse
import gc
import time

import numpy as np


def _recursive(value: np.ndarray, atom) -> str:
    """The former printer: a Python call per atom and per row (the baseline)."""
    from remora.interfaces.show import show_atom

    if value.ndim == 0:
        return show_atom(value.tolist(), atom)  # (a Python atom, as the backend hands them over)
    return "[" + " ".join(_recursive(value[i, ...], atom) for i in range(value.shape[0])) + "]"


def _best(fn, runs: int = 3) -> float:
    times = []
    gc.disable()
    try:
        for _ in range(runs):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
    finally:
        gc.enable()
    return min(times)


def main(argv: list[str]) -> int:
    from remora.statics.indices import concrete_shape
    from remora.interfaces.layout import Display, show
    from remora.statics.types import BASE_TYPES, TArr
    from remora.interfaces.show import show_value

    parser = argparse.ArgumentParser(prog="python -m bench printing")
    parser.add_argument("--size", type=int, default=10**6)
    args = parser.parse_args(argv)
    side = int(round(args.size ** 0.5))
    rng = np.random.default_rng(0)
    arrays = {
        "Int": rng.integers(-10**6, 10**6, (side, side)),
        "Float": rng.standard_normal((side, side)),
        "Bool": rng.random((side, side)) < 0.5,
    }
    print(f"{side * side:,} atoms ({side}×{side}), seconds (min of 3)")
    print(f"{'atoms':6} {'one line (CLI)':>15} {'REPL default':>13} {'REPL full':>10} {'former printer':>15}")
    for name, a in arrays.items():
        t = TArr(BASE_TYPES[name], concrete_shape(a.shape))
        cli = _best(lambda: show_value(a, t))
        short = _best(lambda: show(a, t))
        full = _best(lambda: show(a, t, Display(limit=None)))
        former = _best(lambda: _recursive(a, t.atom), runs=1)
        print(f"{name:6} {cli:15.3f} {short:13.4f} {full:10.3f} {former:15.3f}")
    return 0
