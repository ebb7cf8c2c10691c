"""The whole-frame engine against the reference engine and NumPy on λ-heavy programs.

``python -m bench engines [cells]`` (default 100000): vector norms of ``cells``
3-vectors through a user-defined λ, and a scalar polynomial λ over ``cells``
numbers.  Prints each time and the ratios default/NumPy and reference/default.
"""

from __future__ import annotations

import numpy as np

from .harness import best_time, prepare

PROGRAMS = {
    "norms of 3-vectors": (
        "(define (norm (v [Float 3])) (sqrt (sum (* v v))))\n(norm xs)",
        lambda n: {"xs": np.random.default_rng(0).standard_normal((n, 3))},
        lambda xs: np.sqrt((xs * xs).sum(-1)),
    ),
    "scalar polynomial": (
        "(define (poly (x [Float])) (+ (* 3.0 (* x x)) (+ (* -2.0 x) 1.0)))\n(poly xs)",
        lambda n: {"xs": np.random.default_rng(1).standard_normal(n)},
        lambda xs: 3.0 * xs * xs + (-2.0 * xs + 1.0),
    ),
}


def main(argv: list[str]) -> int:
    cells = int(argv[0]) if argv else 100_000
    print(f"{'program':<22}{'cells':>8}{'default':>12}{'reference':>12}{'numpy':>12}{'ref/default':>13}{'default/numpy':>15}")
    for name, (source, make, numpy_version) in PROGRAMS.items():
        inputs = make(cells)
        prepared = prepare(source, **inputs)
        fast = prepared.run("frames")
        expected = numpy_version(**inputs)
        assert np.allclose(fast, expected), name
        assert np.array_equal(prepared.run("reference"), fast), name
        t_fast = best_time(prepared.runner("frames"))
        t_ref = best_time(prepared.runner("reference"), repeat=1)
        t_np = best_time(lambda: numpy_version(**inputs))
        print(f"{name:<22}{cells:>8}{t_fast * 1e3:>10.2f}ms{t_ref * 1e3:>10.0f}ms{t_np * 1e3:>10.2f}ms"
              f"{t_ref / t_fast:>12.0f}×{t_fast / t_np:>14.2f}×")
    return 0
