"""Per-call overhead of a cached `remora.function` versus the same NumPy expression.

A 3-vector Euclidean norm is tiny, so the time per call is almost all overhead: argument
checking, the signature-cache lookup, the engine's walk over the erased application, and
copying the result out.  Timing: time.perf_counter, garbage collection off while timing,
the minimum over REPEATS runs of N calls each, Remora's and NumPy's runs alternating.  Also:
``remora.evaluate`` of a program seen before, against the NumPy expression it computes.

Run:  python -m bench api [N] [REPEATS]   (or python bench/api_overhead.py [N] [REPEATS])
"""

from __future__ import annotations

import gc
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import remora  # noqa: E402

NORM = "(Iλ ((n Dim)) (λ ((v (Arr Float (Shp n)))) (sqrt (sum (* v v)))))"


def best_per_call(fn, arg, n: int, repeats: int) -> float:
    """Minimum over ``repeats`` runs of the mean seconds per call of ``fn(arg)``, over ``n`` calls."""
    best = float("inf")
    enabled = gc.isenabled()
    try:
        for _ in range(repeats):
            gc.collect()
            gc.disable()
            start = time.perf_counter()
            for _ in range(n):
                fn(arg)
            elapsed = time.perf_counter() - start
            gc.enable()
            best = min(best, elapsed / n)
    finally:
        if enabled:
            gc.enable()
    return best


def side_by_side(a, b, arg, n: int, repeats: int) -> tuple[float, float]:
    """``best_per_call`` of ``a`` and of ``b``, their runs alternating (a shared machine's load
    then weighs on both alike)."""
    ta = tb = float("inf")
    for _ in range(repeats):
        ta = min(ta, best_per_call(a, arg, n, 1))
        tb = min(tb, best_per_call(b, arg, n, 1))
    return ta, tb


def main(argv: list[str]) -> int:
    """``argv``: [N [REPEATS]] (without the program name)."""
    n = int(argv[0]) if len(argv) > 0 else 2000
    repeats = max(5, int(argv[1]) if len(argv) > 1 else 7)

    norm = remora.function(NORM)
    x = np.array([3.0, 4.0, 12.0])

    def numpy_norm(v: np.ndarray) -> np.ndarray:
        return np.sqrt((v * v).sum())

    assert np.allclose(norm(x), numpy_norm(x)), (norm(x), numpy_norm(x))
    norm(x)  # warm the signature cache (checked and planned once)
    t_remora, t_numpy = side_by_side(norm, numpy_norm, x, n, repeats)

    batch = np.random.default_rng(0).standard_normal((1000, 3))
    norm(batch)
    t_remora_batch, t_numpy_batch = side_by_side(norm, lambda b: np.sqrt((b * b).sum(axis=-1)), batch,
                                                 max(1, n // 10), repeats)

    evaluate = lambda v: remora.evaluate("(+ x 1.0)", x=v)  # noqa: E731
    evaluate(x)  # (checked and planned once)
    t_evaluate, t_add = side_by_side(evaluate, lambda v: v + 1.0, x, n, repeats)

    print(f"python {sys.version.split()[0]}, numpy {np.__version__}; N={n} calls, min of {repeats} repeats, alternating")
    print(f"3-vector norm        remora.function: {t_remora * 1e6:9.2f} us/call")
    print(f"3-vector norm        numpy:           {t_numpy * 1e6:9.2f} us/call")
    print(f"3-vector norm        ratio remora/numpy: {t_remora / t_numpy:7.1f}x")
    print(f"1000x3 batch of norms remora.function: {t_remora_batch * 1e6:9.2f} us/call")
    print(f"1000x3 batch of norms numpy:           {t_numpy_batch * 1e6:9.2f} us/call")
    print(f"1000x3 batch of norms ratio remora/numpy: {t_remora_batch / t_numpy_batch:7.1f}x")
    print(f"evaluate('(+ x 1.0)') seen before: {t_evaluate * 1e6:9.2f} us/call, "
          f"{(t_evaluate - t_add) * 1e6:.2f} us more than numpy's x + 1.0")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
