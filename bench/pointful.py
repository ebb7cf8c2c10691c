"""``python -m bench --pointful [--smallest] [--backend=jax] [--only TEXT ...] [--repeat N] [--write FILE]``

Pointful programs (``for``, contract §12) against the same computation written point-free in
Remora and by hand in NumPy (and, with ``--backend=jax``, by hand with ``jax.jit``), side by side
in one process: the pointful matrix product, pairwise L1 distances, a 2-D stencil on a torus, a
softmax and graph-attention logits (Ein's GAT example), at the large size and with
``--smallest`` at the smallest.  The acceptance of issue 28: the pointful version within 1.5× of
both on NumPy.  Each row is timed as ``bench/variants.py`` times its rows (best of ``--repeat``
runs, GC off, compile and check excluded); the ratios are what to read on a shared machine.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .harness import best_time, prepare
from .workloads import agree


@dataclass(frozen=True)
class Pointful:
    name: str
    pointful: str  # NN: the size
    pointfree: str
    inputs: Callable[[int], dict[str, Any]]
    numpy: Callable[..., Any]
    jax: Callable[..., Any]  # the hand-written version, given jax.numpy (jitted by the caller)
    large: int
    small: int  # NumPy ≈ 20–40 µs: the smallest size of issue 24 (10–100 µs of NumPy work)


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


# --- matrix product -------------------------------------------------------------------------

MATMUL = Pointful(
    "matrix product",
    "(for ((i NN) (j NN)) (sum (for ((k NN)) (* (index (index a i) k) (index (index b k) j)))))",
    "(matmul a b)",
    lambda n: {"a": _rng(1).standard_normal((n, n)), "b": _rng(2).standard_normal((n, n))},
    lambda a, b: a @ b,
    lambda xp: lambda a, b: a @ b,
    256, 96,
)

# --- pairwise L1 distances ------------------------------------------------------------------

L1 = Pointful(
    "pairwise L1",
    "(for ((i NN) (j NN)) (sum (for ((k 16)) (abs (- (index (index xs i) k) (index (index ys j) k))))))",
    "((λ ((p [Float 16])) ((λ ((q [Float 16])) (sum (abs (- p q)))) ys)) xs)",
    lambda n: {"xs": _rng(3).standard_normal((n, 16)), "ys": _rng(4).standard_normal((n, 16))},
    lambda xs, ys: np.abs(xs[:, None, :] - ys[None, :, :]).sum(axis=-1),
    lambda xp: lambda xs, ys: xp.abs(xs[:, None, :] - ys[None, :, :]).sum(axis=-1),
    600, 32,
)

# --- a 5-point stencil with wrap-around -----------------------------------------------------

STENCIL = Pointful(
    "stencil (torus)",
    """(let ((n (length g)))
  (for ((i NN) (j NN))
    (* 0.25 (+ (+ (index (index g (mod (- i 1) n)) j) (index (index g (mod (+ i 1) n)) j))
               (+ (index (index g i) (mod (- j 1) n)) (index (index g i) (mod (+ j 1) n)))))))""",
    """(let ((cols (λ ((r [Float NN]) (k [Int])) (rotate r k))))
  (* 0.25 (+ (+ (rotate g -1) (rotate g 1)) (+ (cols g -1) (cols g 1)))))""",
    lambda n: {"g": _rng(5).standard_normal((n, n))},
    lambda g: 0.25 * ((np.roll(g, 1, 0) + np.roll(g, -1, 0)) + (np.roll(g, 1, 1) + np.roll(g, -1, 1))),
    lambda xp: lambda g: 0.25 * ((xp.roll(g, 1, 0) + xp.roll(g, -1, 0)) + (xp.roll(g, 1, 1) + xp.roll(g, -1, 1))),
    1000, 64,
)

# --- softmax over rows of 64 ----------------------------------------------------------------

SOFTMAX = Pointful(
    "softmax",
    """(let ((m (for ((i NN)) (reduce max (index x i))))
      (e (for ((i NN) (j 64)) (exp (- (index (index x i) j) (index m i)))))
      (s (for ((i NN)) (sum (index e i)))))
  (for ((i NN) (j 64)) (/ (index (index e i) j) (index s i))))""",
    "((λ ((r [Float 64])) (let ((e (exp (- r (maximum r))))) (/ e (sum e)))) x)",
    lambda n: {"x": _rng(6).standard_normal((n, 64))},
    lambda x: (lambda e: e / e.sum(axis=1, keepdims=True))(np.exp(x - x.max(axis=1, keepdims=True))),
    lambda xp: lambda x: (lambda e: e / e.sum(axis=1, keepdims=True))(xp.exp(x - x.max(axis=1, keepdims=True))),
    100_000, 100,
)

# --- graph-attention logits: 8 graphs, 8 heads, NN nodes ------------------------------------


def _gat_inputs(n: int) -> dict:
    r = _rng(7)
    return {"s": r.standard_normal((8, 8, n)), "t": r.standard_normal((8, 8, n)), "adj": r.random((8, n, n)) < 0.3}


def _gat(xp):
    def logits(s, t, adj):
        e = s[:, :, :, None] + t[:, :, None, :]
        return xp.where(adj[:, None, :, :], xp.maximum(e, 0.2 * e), -1e9)

    return logits


ATTENTION = Pointful(
    "attention logits",
    """(for ((b 8) (h 8) (u NN) (v NN))
  (let ((e (+ (index (index (index s b) h) u) (index (index (index t b) h) v))))
    (select (index (index (index adj b) u) v) (max e (* 0.2 e)) -1e9)))""",
    """((λ ((sb [Float 8 NN]) (tb [Float 8 NN]) (ab [Bool NN NN]))
   ((λ ((sh [Float NN]) (th [Float NN]))
      (let ((e (outer + sh th))) (select ab (max e (* 0.2 e)) -1e9)))
    sb tb))
 s t adj)""",
    _gat_inputs,
    _gat(np),
    _gat,
    256, 16,
)

WORKLOADS = [MATMUL, L1, STENCIL, SOFTMAX, ATTENTION]


def sources(w: Pointful, n: int) -> tuple[str, str]:
    """(pointful, point-free) at size ``n``."""
    return w.pointful.replace("NN", str(n)), w.pointfree.replace("NN", str(n))


def measure(w: Pointful, n: int, repeat: int) -> dict:
    inputs = w.inputs(n)
    pointful, pointfree = (prepare(s, **inputs).runner("plans") for s in sources(w, n))
    want = w.numpy(**inputs)
    for run in (pointful, pointfree):
        if not agree(run(), want, 1e-9):
            raise AssertionError(f"{w.name} at n={n}: Remora and NumPy disagree")
    row = {"pointful": best_time(pointful, repeat), "pointfree": best_time(pointfree, repeat),
           "numpy": best_time(lambda: w.numpy(**inputs), repeat)}
    row["vs_pointfree"] = row["pointful"] / row["pointfree"]
    row["vs_numpy"] = row["pointful"] / row["numpy"]
    return row


def measure_jax(w: Pointful, n: int, repeat: int) -> dict:
    """Both Remora versions on the JAX backend (``remora.evaluate``), against the hand-written
    ``jax.jit``; compile time excluded (each is called once before timing)."""
    import jax
    import jax.numpy as jnp

    import remora
    from remora.backends.jax_backend import x64

    inputs = w.inputs(n)
    with x64():
        device = {k: jax.device_put(v) for k, v in inputs.items()}
    jitted = jax.jit(w.jax(jnp))
    pointful, pointfree = sources(w, n)

    def on_jax(source: str) -> Callable[[], Any]:
        return lambda: remora.evaluate(source, backend="jax", **device).block_until_ready()

    def by_hand():
        with x64():
            return jitted(**device).block_until_ready()

    runs = {"pointful": on_jax(pointful), "pointfree": on_jax(pointfree), "jit": by_hand}
    want = w.numpy(**inputs)
    for label, run in runs.items():
        if not agree(run(), want, 1e-9):
            raise AssertionError(f"{w.name} at n={n}: {label} on JAX and NumPy disagree")
    row = {label: best_time(run, repeat) for label, run in runs.items()}
    row["vs_pointfree"] = row["pointful"] / row["pointfree"]
    row["vs_jit"] = row["pointful"] / row["jit"]
    return row


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench --pointful")
    parser.add_argument("--pointful", action="store_true")
    parser.add_argument("--smallest", action="store_true")
    parser.add_argument("--backend", choices=["numpy", "jax"], default="numpy")
    parser.add_argument("--only", nargs="*", default=[])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--write")
    args = parser.parse_args(argv)
    on_jax = args.backend == "jax"
    other = "jax.jit" if on_jax else "numpy"
    lines = [f"{'workload':<20}{'size':>7}{'pointful ms':>13}{'point-free ms':>15}{other + ' ms':>12}"
             f"{'/point-free':>13}{'/' + other:>10}"]
    print(lines[0], flush=True)
    for w in WORKLOADS:
        if args.only and not any(o in w.name for o in args.only):
            continue
        n = w.small if args.smallest else w.large
        r = (measure_jax if on_jax else measure)(w, n, args.repeat)
        base = r["jit" if on_jax else "numpy"]
        ratio = r["vs_jit" if on_jax else "vs_numpy"]
        lines.append(f"{w.name:<20}{n:>7}{r['pointful'] * 1e3:>13.3f}{r['pointfree'] * 1e3:>15.3f}{base * 1e3:>12.3f}"
                     f"{r['vs_pointfree']:>12.2f}×{ratio:>9.2f}×")
        print(lines[-1], flush=True)
    if args.write:
        with open(args.write, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
