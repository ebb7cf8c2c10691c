"""``python -m bench --variants [--smallest] [--backend=jax] [--only TEXT ...] [--write FILE]``

Every workload of the bench written the other ways a user would write it — the prelude's
``sum``/``dot`` or an explicit ``reduce``/``fold`` of a λ, an ``Iλ`` definition or a λ over a
frame, ``if`` or ``select``, another argument order, a rank-3 frame, ``Int`` or ``Float`` — each
timed against hand-written NumPy (and, with ``--backend=jax``, hand-written ``jax.jit``) side by
side, at the large size (NumPy ≈ 0.05–1 s) and with ``--smallest`` at a small one (10–100 µs of
NumPy work), where interpretation overhead shows most.  A speed-up counts only if it holds for
every spelling (issue 24): the table reports the median and the worst ratio over all variants.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .harness import best_time, prepare
from .workloads import agree


@dataclass(frozen=True)
class Variant:
    family: str
    label: str
    source: str
    inputs: Callable[[int], dict[str, Any]]
    numpy: Callable[..., Any]
    large: int
    small: int
    rtol: float = 1e-9


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


# --- dot products: n pairs of rows of 64 ---------------------------------------------------------

def _pairs(n: int) -> dict:
    r = _rng(1)
    return {"a": r.standard_normal((n, 64)), "b": r.standard_normal((n, 64))}


def _int_pairs(n: int) -> dict:
    r = _rng(1)
    return {"a": r.integers(-100, 100, (n, 64)), "b": r.integers(-100, 100, (n, 64))}


def _rowdot(a, b):
    return np.einsum("ij,ij->i", a, b)


DOTS = [
    ("dot", "(dot a b)", _rowdot),
    ("sum of product", "(sum (* a b))", _rowdot),
    ("reduce + over rows", "((λ ((x [Float 64]) (y [Float 64])) (reduce + (* x y))) a b)", _rowdot),
    ("reduce of a λ", "((λ ((x [Float 64]) (y [Float 64])) (reduce (λ ((u [Float]) (v [Float])) (+ u v)) (* x y))) a b)",
     _rowdot),
    ("fold + from 0.0", "((λ ((x [Float 64]) (y [Float 64])) (fold + 0.0 (* x y))) a b)", _rowdot),
    ("column sums by reduce", "(reduce + (* a b))", lambda a, b: (a * b).sum(axis=0)),
    ("λ over the frame", "((λ ((x [Float 64]) (y [Float 64])) (sum (* x y))) a b)", _rowdot),
    ("operands swapped", "(sum (* b a))", _rowdot),
    ("scaled", "(sum (* (* 2.0 a) b))", lambda a, b: 2.0 * _rowdot(a, b)),
]


# --- matrix-vector and vector-matrix products -----------------------------------------------------

def _matvec(n: int) -> dict:
    r = _rng(2)
    return {"m": r.standard_normal((n, n)), "v": r.standard_normal(n)}


MATVECS = [
    ("dot lifted over rows", "((λ ((row [Float n])) (dot row v)) m)", lambda m, v: m @ v),
    ("sum of product over rows", "((λ ((row [Float n])) (sum (* row v))) m)", lambda m, v: m @ v),
    ("reduce of a λ over rows",
     "((λ ((row [Float n])) (reduce (λ ((x [Float]) (y [Float])) (+ x y)) (* row v))) m)", lambda m, v: m @ v),
    ("vector-matrix by reduce", "(reduce + (* v m))", lambda m, v: v @ m),
    ("vector-matrix by λ over columns", "((λ ((col [Float n])) (dot v col)) (transpose m))", lambda m, v: v @ m),
]


# --- matrix product ---------------------------------------------------------------------------

def _square(n: int) -> dict:
    r = _rng(3)
    return {"a": r.standard_normal((n, n)), "b": r.standard_normal((n, n))}


MATMULS = [
    ("matmul", "(matmul a b)"),
    ("rows dot columns", "((λ ((row [Float n])) ((λ ((col [Float n])) (dot row col)) (transpose b))) a)"),
    ("sum of products of rows and columns",
     "((λ ((row [Float n])) ((λ ((col [Float n])) (sum (* row col))) (transpose b))) a)"),
    ("reduce of scaled rows", "((λ ((row [Float n])) (reduce + (* row b))) a)"),
]


# --- softmax over rows ----------------------------------------------------------------------------

def _rows64(n: int) -> dict:
    return {"xs": _rng(4).standard_normal((n, 64))}


def _softmax(xs):
    e = np.exp(xs - xs.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


SOFTMAXES = [
    ("Iλ definition", """
(define softmax (Iλ ((n Dim)) (λ ((x (Arr Float (Shp (+ n 1)))))
  (let ((e (exp (- x (maximum x))))) (/ e (sum e))))))
(softmax xs)"""),
    ("λ over the frame", """
((λ ((x [Float 64])) (let ((e (exp (- x (reduce max x))))) (/ e (reduce + e)))) xs)"""),
    ("define with a declared cell", """
(define (softmax (x [Float 64])) (/ (exp (- x (maximum x))) (sum (exp (- x (maximum x))))))
(softmax xs)"""),
    ("fold for the max", """
(define (softmax (x [Float 64]))
  (let ((e (exp (- x (fold max (head x) x))))) (/ e (fold + 0.0 e))))
(softmax xs)"""),
]


# --- pairwise L1 ------------------------------------------------------------------------------

def _points16(n: int) -> dict:
    r = _rng(5)
    return {"ps": r.standard_normal((n, 16)), "qs": r.standard_normal((n, 16))}


def _l1(ps, qs):
    return np.abs(ps[:, None, :] - qs[None, :, :]).sum(axis=-1)


L1S = [
    ("Iλ definitions", """
(define l1 (Iλ ((d Dim)) (λ ((x (Arr Float (Shp d))) (y (Arr Float (Shp d)))) (sum (abs (- x y))))))
((λ ((p [Float 16])) (l1 p qs)) ps)"""),
    ("nested λs", "((λ ((p [Float 16])) ((λ ((q [Float 16])) (reduce + (abs (- p q)))) qs)) ps)"),
    ("differences to every row", "((λ ((p [Float 16])) (sum (abs ((λ ((q [Float 16])) (- q p)) qs)))) ps)"),
]


# --- n-body accelerations --------------------------------------------------------------------

def _bodies(n: int) -> dict:
    r = _rng(6)
    return {"pos": r.standard_normal((n, 3)), "mass": r.random(n) + 0.5}


def _nbody(pos, mass):
    d = pos[None, :, :] - pos[:, None, :]
    r2 = (d * d).sum(axis=-1) + 0.01
    w = mass[None, :] / (r2 * np.sqrt(r2))
    return (w[:, :, None] * d).sum(axis=1)


NBODIES = [
    ("reduce of an append", """
(define (accel (p [Float 3]) (ps [Float n 3]) (ms [Float n]))
  (let ((d ((λ ((q [Float 3])) (- q p)) ps)) (r2 (+ (sum (* d d)) 0.01)) (w (/ ms (* r2 (sqrt r2)))))
    (reduce + (append [[0.0 0.0 0.0]] (* w d)))))
((λ ((p [Float 3])) (accel p pos mass)) pos)"""),
    ("sum over bodies by transpose", """
((λ ((p [Float 3]))
   (let ((d ((λ ((q [Float 3])) (- q p)) pos)) (r2 (+ (sum (* d d)) 0.01)) (w (/ mass (* r2 (sqrt r2)))))
     (sum (transpose (* w d)))))
 pos)"""),
    ("fold over bodies", """
((λ ((p [Float 3]))
   (let ((d ((λ ((q [Float 3])) (- q p)) pos)) (r2 (+ (sum (* d d)) 0.01)) (w (/ mass (* r2 (sqrt r2)))))
     (fold + [0.0 0.0 0.0] (* w d))))
 pos)"""),
]


# --- Game of Life -------------------------------------------------------------------------------

def _grid(n: int) -> dict:
    return {"grid": (_rng(7).random((n, n)) < 0.3).astype(np.int64)}


def _life(grid):
    g = grid
    for _ in range(10):
        up, down = np.roll(g, -1, axis=0), np.roll(g, 1, axis=0)
        count = (up + down + np.roll(g, -1, axis=1) + np.roll(g, 1, axis=1) + np.roll(up, -1, axis=1)
                 + np.roll(up, 1, axis=1) + np.roll(down, -1, axis=1) + np.roll(down, 1, axis=1))
        g = ((count == 3) | ((g == 1) & (count == 2))).astype(np.int64)
    return g


LIVES = [
    ("rotations by name", """
(define (life-step (g [Int n m]))
  (let ((up (rotate g 1)) (down (rotate g -1))
        (cols (λ ((h [Int n m]) (k [Int])) ((λ ((row [Int m])) (rotate row k)) h)))
        (count (+ (+ (+ up down) (+ (cols g 1) (cols g -1))) (+ (+ (cols up 1) (cols up -1)) (+ (cols down 1) (cols down -1))))))
    (bool->int (or (= count 3) (and (= g 1) (= count 2))))))
(iterate life-step 10 grid)"""),
    ("a frame of eight shifts summed", """
(define (life-step (g [Int n m]))
  (let ((shift (λ ((i [Int]) (j [Int])) ((λ ((row [Int m])) (rotate row j)) (rotate g i))))
        (count (reduce + [(shift 1 1) (shift 1 0) (shift 1 -1) (shift 0 1)
                          (shift 0 -1) (shift -1 1) (shift -1 0) (shift -1 -1)])))
    (bool->int (or (= count 3) (and (= g 1) (= count 2))))))
(iterate life-step 10 grid)"""),
    ("if per cell", """
(define (life-step (g [Int n m]))
  (let ((shift (λ ((i [Int]) (j [Int])) ((λ ((row [Int m])) (rotate row j)) (rotate g i))))
        (count (+ (+ (+ (shift 1 1) (shift 1 0)) (+ (shift 1 -1) (shift 0 1)))
                  (+ (+ (shift 0 -1) (shift -1 1)) (+ (shift -1 0) (shift -1 -1))))))
    ((λ ((c [Int]) (alive [Int])) (if (= c 3) 1 (if (and (= alive 1) (= c 2)) 1 0))) count g)))
(iterate life-step 10 grid)"""),
]


# --- Mandelbrot --------------------------------------------------------------------------------

def _points(n: int) -> dict:
    re = np.linspace(-2.0, 0.6, n)
    im = np.linspace(-1.2, 1.2, n)
    return {"cx": np.ascontiguousarray(np.meshgrid(re, im)[0]), "cy": np.ascontiguousarray(np.meshgrid(re, im)[1])}


def _mandel(cx, cy):
    x = np.zeros_like(cx)
    y = np.zeros_like(cy)
    count = np.zeros_like(cx)
    for _ in range(30):
        inside = x * x + y * y <= 4.0
        x2 = x * x - y * y + cx
        y2 = 2.0 * (x * y) + cy
        x, y = np.where(inside, x2, x), np.where(inside, y2, y)
        count = count + np.where(inside, 1.0, 0.0)
    return count


MANDELS = [
    ("select in the step", """
(define (escape (a [Float]) (b [Float]))
  (index (iterate (λ ((z [Float 3]))
    (let ((x (index z 0)) (y (index z 1)) (inside (<= (+ (* x x) (* y y)) 4.0)))
      [(select inside (+ (- (* x x) (* y y)) a) x) (select inside (+ (* 2.0 (* x y)) b) y)
       (+ (index z 2) (select inside 1.0 0.0))])) 30 [0.0 0.0 0.0]) 2))
(escape cx cy)"""),
    ("if in the step", """
(define (escape (a [Float]) (b [Float]))
  (index (iterate (λ ((z [Float 3]))
    (let ((x (index z 0)) (y (index z 1)))
      (if (<= (+ (* x x) (* y y)) 4.0)
          [(+ (- (* x x) (* y y)) a) (+ (* 2.0 (* x y)) b) (+ (index z 2) 1.0)]
          z))) 30 [0.0 0.0 0.0]) 2))
(escape cx cy)"""),
    ("fold over a counter", """
(define (escape (a [Float]) (b [Float]))
  (index (unbox (k steps (iota/v 30))
    (fold (λ ((i [Int]) (z [Float 3]))
      (let ((x (index z 0)) (y (index z 1)) (inside (<= (+ (* x x) (* y y)) 4.0)))
        [(select inside (+ (- (* x x) (* y y)) a) x) (select inside (+ (* 2.0 (* x y)) b) y)
         (+ (index z 2) (select inside 1.0 0.0))])) [0.0 0.0 0.0] steps)) 2))
(escape cx cy)"""),
]


# --- logistic regression: gradient steps -----------------------------------------------------

def _logreg(n: int) -> dict:
    r = _rng(8)
    x = r.standard_normal((n, 8))
    return {"x": x, "y": (x @ np.arange(1.0, 9.0) + r.standard_normal(n) > 0).astype(np.float64)}


def _logreg_numpy(x, y):
    w = np.zeros(8)
    for _ in range(10):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        w = w - 0.1 * ((p - y) @ x) / len(y)
    return w


LOGREGS = [
    ("dot and sum of a transpose", """
(define (step (w [Float 8]))
  (let ((p (/ 1.0 (+ 1.0 (exp (neg ((λ ((row [Float 8])) (dot row w)) x))))))
        (g (sum (transpose (* (- p y) x)))))
    (- w (* 0.1 (/ g (int->float (length y)))))))
(iterate step 10 [0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0])"""),
    ("reduce of a λ", """
(define (step (w [Float 8]))
  (let ((p (/ 1.0 (+ 1.0 (exp (neg ((λ ((row [Float 8])) (reduce (λ ((u [Float]) (v [Float])) (+ u v)) (* w row))) x))))))
        (g (reduce + (* (- p y) x))))
    (- w (* 0.1 (/ g (int->float (length y)))))))
(iterate step 10 [0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0])"""),
    ("fold over steps", """
(define (train (w0 [Float 8]))
  (unbox (k steps (iota/v 10))
    (fold (λ ((i [Int]) (w [Float 8]))
      (let ((p (/ 1.0 (+ 1.0 (exp (neg (sum (transpose (* (transpose x) w))))))))
            (g (sum (transpose (* (- p y) x)))))
        (- w (* 0.1 (/ g (int->float (length y))))))) w0 steps)))
(train [0.0 0.0 0.0 0.0 0.0 0.0 0.0 0.0])"""),
]


# --- segmented sums and means ------------------------------------------------------------------

def _masked(n: int) -> dict:
    r = _rng(9)
    return {"data": r.standard_normal((n, 64)), "mask": r.random((n, 64)) < 0.5}


def _seg_mean(data, mask):
    return np.where(mask, data, 0.0).sum(axis=1) / np.maximum(mask.sum(axis=1), 1)


SEGMENTS = [
    ("filter then sum", """
(define (keep (m [Bool 64]) (row [Float 64])) (filter m row))
(unbox (k xs (keep mask data)) (sum xs))""", lambda data, mask: np.where(mask, data, 0.0).sum(axis=1)),
    ("select then sum", "(sum (select mask data 0.0))", lambda data, mask: np.where(mask, data, 0.0).sum(axis=1)),
    ("segmented means by filter", """
(define (mean-kept (m [Bool 64]) (row [Float 64]))
  (unbox (k xs (filter m row)) (/ (sum xs) (max 1.0 (int->float (length xs))))))
(mean-kept mask data)""", _seg_mean),
]


# --- prefix sums --------------------------------------------------------------------------------

def _vec(n: int) -> dict:
    return {"xs": _rng(10).standard_normal((n // 64, 64))}


SCANS = [
    ("scan + of rows", "(scan + (* 0.0 (head xs)) xs)", lambda xs: np.cumsum(xs, axis=0)),
    ("scan of a λ", "(scan (λ ((acc [Float 64]) (x [Float 64])) (+ acc x)) (* 0.0 (head xs)) xs)",
     lambda xs: np.cumsum(xs, axis=0)),
    ("scan over rows", "((λ ((row [Float 64])) (scan + 0.0 row)) xs)", lambda xs: np.cumsum(xs, axis=1)),
]


def _variants() -> list[Variant]:
    out = []
    for label, src, ref in DOTS:
        out.append(Variant("dot products", label, src, _pairs, ref, 400_000, 2000))
    out.append(Variant("dot products", "Int sum of product", "(sum (* a b))", _int_pairs, _rowdot, 400_000, 2000))
    for label, src, ref in MATVECS:
        out.append(Variant("mat-vec", label, src.replace("[Float n]", "[Float NN]"),
                           _matvec, ref, 2000, 300))
    for label, src in MATMULS:
        out.append(Variant("matrix product", label, src.replace("[Float n]", "[Float NN]"), _square,
                           lambda a, b: a @ b, 256, 64))
    for label, src in SOFTMAXES:
        out.append(Variant("softmax", label, src, _rows64, _softmax, 200_000, 50))
    for label, src in L1S:
        out.append(Variant("pairwise L1", label, src, _points16, _l1, 600, 24))
    for label, src in NBODIES:
        out.append(Variant("n-body", label, src.replace("[Float n 3]", "[Float NN 3]").replace("[Float n]", "[Float NN]"),
                           _bodies, _nbody, 1000, 30))
    for label, src in LIVES:
        out.append(Variant("Game of Life", label, src.replace("[Int n m]", "[Int NN NN]").replace("[Int m]", "[Int NN]"),
                           _grid, _life, 600, 16))
    for label, src in MANDELS:
        out.append(Variant("Mandelbrot", label, src, _points, _mandel, 400, 16))
    for label, src in LOGREGS:
        out.append(Variant("logistic regression", label, src, _logreg, _logreg_numpy, 200_000, 100))
    for label, src, ref in SEGMENTS:
        out.append(Variant("segments", label, src, _masked, ref, 200_000, 500))
    for label, src, ref in SCANS:
        out.append(Variant("prefix sums", label, src, _vec, ref, 2_000_000, 64 * 200))
    return out


VARIANTS = _variants()


def measure(v: Variant, n: int, repeat: int, backend: str = "numpy") -> dict:
    inputs = v.inputs(n)
    if backend == "jax":
        run = _on_jax(v.source.replace("NN", str(n)), inputs)
    else:
        prepared = prepare(v.source.replace("NN", str(n)), **inputs)
        run = prepared.runner("plans")
    got, want = run(), v.numpy(**inputs)
    if not agree(got, want, max(v.rtol, 1e-7)):
        raise AssertionError(f"{v.family} / {v.label} at n={n}: Remora and NumPy disagree")
    remora = best_time(run, repeat)
    numpy_t = best_time(lambda: v.numpy(**inputs), repeat)
    return {"family": v.family, "label": v.label, "n": n, "remora": remora, "numpy": numpy_t,
            "ratio": remora / numpy_t}


def _on_jax(source: str, inputs: dict) -> Callable[[], Any]:
    """``remora.evaluate`` on the JAX backend, inputs already JAX arrays, the result waited for
    (as ``python -m bench --backend=jax`` times a workload)."""
    import jax

    import remora
    from remora.backends.jax_backend import x64

    with x64():
        device = {k: jax.device_put(np.asarray(a)) for k, a in inputs.items()}
    return lambda: remora.evaluate(source, backend="jax", **device).block_until_ready()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench --variants")
    parser.add_argument("--variants", action="store_true")
    parser.add_argument("--smallest", action="store_true")
    parser.add_argument("--only", nargs="*", default=[])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--write")
    parser.add_argument("--backend", choices=("numpy", "jax"), default="numpy")
    args = parser.parse_args(argv)
    lines = [f"{'family':<22}{'variant':<34}{'size':>9}{'remora ms':>11}{'numpy ms':>10}{'ratio':>8}"]
    print(lines[0], flush=True)
    ratios = []
    for v in VARIANTS:
        if args.only and not any(o in v.family or o in v.label for o in args.only):
            continue
        n = v.small if args.smallest else v.large
        try:
            r = measure(v, n, args.repeat, args.backend)
        except Exception as err:  # (a variant that does not run is reported, and the table goes on)
            lines.append(f"{v.family:<22}{v.label:<34}{n:>9}  failed: {type(err).__name__}: {str(err)[:200]}")
            print(lines[-1], flush=True)
            continue
        ratios.append(r["ratio"])
        lines.append(f"{v.family:<22}{v.label:<34}{n:>9}{r['remora'] * 1e3:>11.3f}{r['numpy'] * 1e3:>10.3f}"
                     f"{r['ratio']:>7.2f}×")
        print(lines[-1], flush=True)
    if ratios:
        lines.append(f"median ratio {statistics.median(ratios):.2f}×, worst {max(ratios):.2f}× over {len(ratios)} variants")
        print(lines[-1])
    if args.write:
        with open(args.write, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
