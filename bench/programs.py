"""The benchmark workloads: each a Remora program (written as a user would, with the
prelude), its inputs at a given size, and an idiomatic NumPy version of the same computation.

Sizes are one number ``n`` per workload, scaled so that the NumPy version takes about
0.1–1 s at ``large`` (on the machine of bench/RESULTS.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np


@dataclass(frozen=True)
class Workload:
    name: str
    source: str
    inputs: Callable[[int], dict[str, Any]]
    numpy: Callable[..., Any]
    quick: int
    large: int
    sweep: tuple[int, ...]
    #: the size at which the frame the program maps over has about 10⁵ cells
    #: (what the reference engine is compared at); see bench/RESULTS.md for each workload's cells
    ref: int = 0
    #: the Float results may differ from NumPy's by reassociation: compare with this tolerance
    rtol: float = 1e-9


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


# --- dot products ---------------------------------------------------------------------------

DOT = "(dot a b)"  # a and b are n×64: dot lifts over the n pairs of rows


def _dot_inputs(n: int) -> dict:
    r = _rng(1)
    return {"a": r.standard_normal((n, 64)), "b": r.standard_normal((n, 64))}


# --- matrix product by lifting ---------------------------------------------------------------

MATMUL = "(matmul a b)"


def _matmul_inputs(n: int) -> dict:
    r = _rng(2)
    return {"a": r.standard_normal((n, n)), "b": r.standard_normal((n, n))}


# --- batched softmax ----------------------------------------------------------------------------

SOFTMAX = """
(define softmax
  (Iλ ((n Dim))
    (λ ((x (Arr Float (Shp (+ n 1)))))
      (let ((e (exp (- x (maximum x)))))
        (/ e (sum e))))))
(softmax xs)
"""


def _softmax_inputs(n: int) -> dict:
    return {"xs": _rng(3).standard_normal((n, 64))}


def _softmax_numpy(xs):
    e = np.exp(xs - xs.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# --- pairwise L1 distances -----------------------------------------------------------------

L1 = """
(define l1
  (Iλ ((d Dim))
    (λ ((x (Arr Float (Shp d))) (y (Arr Float (Shp d))))
      (sum (abs (- x y))))))
(define distances
  (Iλ ((d Dim) (m Dim))
    (λ ((ps (Arr Float (Shp m d))) (qs (Arr Float (Shp m d))))
      ((λ ((p (Arr Float (Shp d)))) (l1 p qs)) ps))))
(distances ps qs)
"""


def _l1_inputs(n: int) -> dict:
    r = _rng(4)
    return {"ps": r.standard_normal((n, 16)), "qs": r.standard_normal((n, 16))}


def _l1_numpy(ps, qs):
    return np.abs(ps[:, None, :] - qs[None, :, :]).sum(axis=-1)


# --- n-body accelerations ------------------------------------------------------------------

NBODY = """
(define accel
  (Iλ ((n Dim))
    (λ ((p (Arr Float (Shp 3))) (ps (Arr Float (Shp n 3))) (ms (Arr Float (Shp n))))
      (let ((d ((λ ((q (Arr Float (Shp 3)))) (- q p)) ps))
            (r2 (+ (sum (* d d)) 0.01))
            (w (/ ms (* r2 (sqrt r2)))))
        (reduce + (append [[0.0 0.0 0.0]] (* w d)))))))
((λ ((p [Float 3])) (accel p pos mass)) pos)
"""


def _nbody_inputs(n: int) -> dict:
    r = _rng(5)
    return {"pos": r.standard_normal((n, 3)), "mass": r.random(n) + 0.5}


def _nbody_numpy(pos, mass):
    d = pos[None, :, :] - pos[:, None, :]
    r2 = (d * d).sum(axis=-1) + 0.01
    w = mass[None, :] / (r2 * np.sqrt(r2))
    return (w[:, :, None] * d).sum(axis=1)


# --- 1-D Jacobi with clamped edges -----------------------------------------------------------

JACOBI = """
(define jacobi-step
  (Iλ ((n Dim))
    (λ ((x (Arr Float (Shp (+ n 1)))))
      (let ((left (append [(head x)] (curtail x)))
            (right (append (behead x) [(tail x)])))
        (/ (+ left (+ x right)) 3.0)))))
(iterate jacobi-step 50 xs)
"""


def _jacobi_inputs(n: int) -> dict:
    return {"xs": _rng(6).random(n)}


def _jacobi_numpy(xs):
    x = xs
    for _ in range(50):
        left = np.concatenate([x[:1], x[:-1]])
        right = np.concatenate([x[1:], x[-1:]])
        x = (left + (x + right)) / 3.0
    return x


# --- Game of Life ------------------------------------------------------------------------------

LIFE = """
(define life-step
  (Iλ ((n Dim) (m Dim))
    (λ ((g (Arr Int (Shp n m))))
      (let ((rows (λ ((k [Int])) (rotate g k)))
            (cols (λ ((h (Arr Int (Shp n m))) (k [Int]))
                    ((λ ((row (Arr Int (Shp m)))) (rotate row k)) h)))
            (up (rows 1)) (down (rows -1))
            (count (+ (+ (+ up down) (+ (cols g 1) (cols g -1)))
                      (+ (+ (cols up 1) (cols up -1)) (+ (cols down 1) (cols down -1))))))
        (bool->int (or (= count 3) (and (= g 1) (= count 2))))))))
(iterate life-step 20 grid)
"""


def _life_inputs(n: int) -> dict:
    return {"grid": (_rng(7).random((n, n)) < 0.3).astype(np.int64)}


def _life_numpy(grid):
    g = grid
    for _ in range(20):
        up, down = np.roll(g, -1, axis=0), np.roll(g, 1, axis=0)
        count = (
            up + down + np.roll(g, -1, axis=1) + np.roll(g, 1, axis=1)
            + np.roll(up, -1, axis=1) + np.roll(up, 1, axis=1)
            + np.roll(down, -1, axis=1) + np.roll(down, 1, axis=1)
        )
        g = ((count == 3) | ((g == 1) & (count == 2))).astype(grid.dtype)
    return g


# --- Mandelbrot --------------------------------------------------------------------------------

MANDELBROT = """
(define (mandel-step (z [Float 3]) (c [Float 2]))
  (let ((x (index z 0)) (y (index z 1))
        (x2 (+ (- (* x x) (* y y)) (index c 0)))
        (y2 (+ (* 2.0 (* x y)) (index c 1)))
        (inside (<= (+ (* x x) (* y y)) 4.0)))
    [(select inside x2 x) (select inside y2 y) (+ (index z 2) (select inside 1.0 0.0))]))
(define (escape (c [Float 2]))
  (index (iterate (λ ((z [Float 3])) (mandel-step z c)) 30 [0.0 0.0 0.0]) 2))
(escape points)
"""


def _mandelbrot_inputs(n: int) -> dict:
    re = np.linspace(-2.0, 0.6, n)
    im = np.linspace(-1.2, 1.2, n)
    grid = np.stack(np.meshgrid(re, im), axis=-1).reshape(n, n, 2)
    return {"points": np.ascontiguousarray(grid)}


def _mandelbrot_numpy(points):
    cx, cy = points[..., 0], points[..., 1]
    x = np.zeros_like(cx)
    y = np.zeros_like(cy)
    count = np.zeros_like(cx)
    for _ in range(30):
        inside = x * x + y * y <= 4.0
        x2 = x * x - y * y + cx
        y2 = 2.0 * (x * y) + cy
        x, y = np.where(inside, x2, x), np.where(inside, y2, y)
        count = count + inside.astype(cx.dtype)  # (1.0 where inside: in the points' own precision)
    return count


# --- Collatz step counts (while) -------------------------------------------------------------

COLLATZ = """
(define (collatz-step (s [Int 2]))
  (let ((n (head s)))
    [(select (= 0 (mod n 2)) (/ n 2) (+ 1 (* 3 n))) (+ 1 (tail s))]))
(define (steps (n [Int]))
  (tail (while (λ ((s [Int 2])) (> (head s) 1)) collatz-step [n 0])))
(steps ns)
"""


def _collatz_inputs(n: int) -> dict:
    return {"ns": np.arange(1, n + 1, dtype=np.int64)}


def _collatz_numpy(ns):
    """The masked loop, keeping only the running cells (their positions and values) each step."""
    steps = np.zeros_like(ns)
    running = np.nonzero(ns > 1)[0]
    values = ns[running]
    while running.size:
        values = np.where(values % 2 == 0, values // 2, 3 * values + 1)
        steps[running] += 1
        going = values > 1
        running, values = running[going], values[going]
    return steps


# --- MRI-Q -------------------------------------------------------------------------------------

MRIQ = """
(define q
  (Iλ ((k Dim))
    (λ ((p (Arr Float (Shp 3))) (ks (Arr Float (Shp k 3))) (phi (Arr Float (Shp k))))
      (let ((phase (* 6.283185307179586 (dot ks p))))
        [(sum (* phi (cos phase))) (sum (* phi (sin phase)))]))))
((λ ((p [Float 3])) (q p ks phi)) xs)
"""


def _mriq_inputs(n: int) -> dict:
    r = _rng(8)
    return {"xs": r.random((n, 3)), "ks": r.random((512, 3)), "phi": r.random(512)}


def _mriq_numpy(xs, ks, phi):
    phase = 6.283185307179586 * (xs[:, None, :] * ks[None, :, :]).sum(axis=-1)
    return np.stack([(phi * np.cos(phase)).sum(axis=1), (phi * np.sin(phase)).sum(axis=1)], axis=-1)


# --- histogram by one-hot sums ---------------------------------------------------------------

HISTOGRAM = """
(define histogram
  (Iλ ((n Dim) (b Dim))
    (λ ((data (Arr Int (Shp n))) (bins (Arr Int (Shp b))))
      (reduce + (append [(* 0 bins)] (bool->int (outer = data bins)))))))
(histogram data bins)
"""


def _histogram_inputs(n: int) -> dict:
    return {"data": _rng(9).integers(0, 64, n), "bins": np.arange(64)}


def _histogram_numpy(data, bins):
    return (data[:, None] == bins[None, :]).astype(data.dtype).sum(axis=0, dtype=data.dtype)


# --- Hotspot (2-D stencil) ----------------------------------------------------------------------

HOTSPOT = """
(define hotspot-step
  (Iλ ((n Dim) (m Dim))
    (λ ((t (Arr Float (Shp (+ n 1) (+ m 1)))) (p (Arr Float (Shp (+ n 1) (+ m 1)))))
      (let ((north (append [(head t)] (curtail t)))
            (south (append (behead t) [(tail t)]))
            (west ((λ ((row (Arr Float (Shp (+ m 1))))) (append [(head row)] (curtail row))) t))
            (east ((λ ((row (Arr Float (Shp (+ m 1))))) (append (behead row) [(tail row)])) t)))
        (+ t (* 0.05 (+ p (+ (* 0.1 (+ north (- south (* 2.0 t))))
                             (+ (* 0.1 (+ east (- west (* 2.0 t))))
                                (* 0.01 (- 80.0 t)))))))))))
(define simulate
  (Iλ ((n Dim) (m Dim))
    (λ ((t0 (Arr Float (Shp (+ n 1) (+ m 1)))) (p (Arr Float (Shp (+ n 1) (+ m 1)))))
      (iterate (λ ((t (Arr Float (Shp (+ n 1) (+ m 1))))) (hotspot-step t p)) 20 t0))))
(simulate temp power)
"""


def _hotspot_inputs(n: int) -> dict:
    r = _rng(10)
    return {"temp": 60.0 + 20.0 * r.random((n, n)), "power": r.random((n, n))}


def _hotspot_numpy(temp, power):
    t = temp
    for _ in range(20):
        north = np.concatenate([t[:1], t[:-1]], axis=0)
        south = np.concatenate([t[1:], t[-1:]], axis=0)
        west = np.concatenate([t[:, :1], t[:, :-1]], axis=1)
        east = np.concatenate([t[:, 1:], t[:, -1:]], axis=1)
        t = t + 0.05 * (power + (0.1 * (north + (south - 2.0 * t)) + (0.1 * (east + (west - 2.0 * t)) + 0.01 * (80.0 - t))))
    return t


# --- Pathfinder (1-D dynamic programming) ------------------------------------------------------

PATHFINDER = """
(define pathfinder
  (Iλ ((r Dim) (c Dim))
    (λ ((wall (Arr Int (Shp (+ r 1) (+ c 1)))))
      (fold (λ ((row (Arr Int (Shp (+ c 1)))) (best (Arr Int (Shp (+ c 1)))))
              (+ row (min best (min (append [(head best)] (curtail best))
                                    (append (behead best) [(tail best)])))))
            (tail wall)
            (curtail wall)))))
(pathfinder wall)
"""


def _pathfinder_inputs(n: int) -> dict:
    return {"wall": _rng(11).integers(0, 10, (100, n))}


def _pathfinder_numpy(wall):
    best = wall[-1]
    for row in wall[-2::-1]:
        left = np.concatenate([best[:1], best[:-1]])
        right = np.concatenate([best[1:], best[-1:]])
        best = row + np.minimum(best, np.minimum(left, right))
    return best


# --- segmented sums over a vector of boxes ------------------------------------------------------

SEGMENTED = """
(define (keep (m [Bool 64]) (row [Float 64])) (filter m row))
(unbox (n xs (keep mask data)) (sum xs))
"""


def _segmented_inputs(n: int) -> dict:
    r = _rng(12)
    return {"data": r.standard_normal((n, 64)), "mask": r.random((n, 64)) < 0.5}


def _segmented_numpy(data, mask):
    return np.where(mask, data, 0.0).sum(axis=1)


# --- triangular matrix–vector product with boxed rows -----------------------------------------

TRIANGULAR = """
(define lower-rows
  (Iλ ((n Dim))
    (λ ((a (Arr Float (Shp n n))))
      ((λ ((row (Arr Float (Shp n))) (i (Arr Int (Shp))))
         (filter (<= (iota/w row) i) row))
       a (positions a)))))
(define times
  (Iλ ((n Dim))
    (λ ((rows (Arr (Sigma ((k Dim)) (Arr Float (Shp k))) (Shp n))) (x (Arr Float (Shp n))))
      (unbox (k r rows) (sum (* r (index x (iota/w r))))))))
(times (lower-rows mat) vec)
"""


def _triangular_inputs(n: int) -> dict:
    r = _rng(13)
    return {"mat": r.standard_normal((n, n)), "vec": r.standard_normal(n)}


def _triangular_numpy(mat, vec):
    """The same with ragged rows in NumPy's idiom: the rows flat, plus where each starts."""
    n = len(vec)
    rows, cols = np.tril_indices(n)
    starts = np.concatenate([[0], np.cumsum(np.arange(1, n))])
    return np.add.reduceat(mat[rows, cols] * vec[cols], starts)


FOLD_LAMBDA = """
(fold (λ ((x (Arr Float (Shp))) (acc (Arr Float (Shp)))) (+ (* acc 0.5) x)) 0.0 xs)
"""  # a λ folded over n scalar items: the loop's step is planned once and replayed n times


def _fold_inputs(n: int) -> dict:
    return {"xs": _rng(11).standard_normal(n)}


def _fold_numpy(xs):
    """What a NumPy user writes for a sequential recurrence: a Python loop of NumPy scalar operations."""
    acc = xs.dtype.type(0.0)
    for i in range(len(xs) - 1, -1, -1):
        acc = acc * 0.5 + xs[i]
    return acc


WORKLOADS: list[Workload] = [
    Workload("dot products", DOT, _dot_inputs, lambda a, b: np.einsum("ij,ij->i", a, b),
             1_000, 1_000_000, (10**3, 10**4, 10**5, 10**6), ref=100_000),
    Workload("matrix product", MATMUL, _matmul_inputs, lambda a, b: a @ b,
             64, 1024, (64, 128, 256, 512, 1024), ref=316),
    Workload("batched softmax", SOFTMAX, _softmax_inputs, _softmax_numpy,
             1_000, 400_000, (10**3, 10**4, 10**5, 4 * 10**5), ref=100_000),
    Workload("pairwise L1", L1, _l1_inputs, _l1_numpy, 100, 1_000, (100, 200, 400, 1000), ref=316),
    Workload("n-body", NBODY, _nbody_inputs, _nbody_numpy, 100, 2_000, (100, 200, 500, 1000, 2000), ref=316),
    Workload("1-D Jacobi", JACOBI, _jacobi_inputs, _jacobi_numpy,
             10_000, 2_000_000, (10**4, 10**5, 10**6, 2 * 10**6), ref=100_000),
    Workload("Game of Life", LIFE, _life_inputs, _life_numpy, 64, 1_000, (64, 128, 256, 512, 1000), ref=316),
    Workload("Mandelbrot", MANDELBROT, _mandelbrot_inputs, _mandelbrot_numpy,
             32, 600, (32, 64, 128, 256, 600), ref=316),
    Workload("MRI-Q", MRIQ, _mriq_inputs, _mriq_numpy, 100, 4_000, (100, 400, 1000, 4000), ref=200),
    Workload("histogram", HISTOGRAM, _histogram_inputs, _histogram_numpy,
             10_000, 1_000_000, (10**4, 10**5, 3 * 10**5, 10**6), ref=100_000),
    Workload("Hotspot", HOTSPOT, _hotspot_inputs, _hotspot_numpy, 64, 1_000, (64, 128, 256, 512, 1000), ref=316),
    Workload("Pathfinder", PATHFINDER, _pathfinder_inputs, _pathfinder_numpy,
             1_000, 1_000_000, (10**3, 10**4, 10**5, 10**6), ref=100_000),
    Workload("segmented sums", SEGMENTED, _segmented_inputs, _segmented_numpy,
             1_000, 200_000, (10**3, 10**4, 10**5, 2 * 10**5), ref=100_000),
    Workload("Collatz (while)", COLLATZ, _collatz_inputs, _collatz_numpy,
             1_000, 1_000_000, (10**3, 10**4, 10**5, 10**6), ref=100_000),
    Workload("triangular mat-vec", TRIANGULAR, _triangular_inputs, _triangular_numpy,
             64, 4_000, (64, 256, 1000, 2000, 4000), ref=447),
    Workload("fold of a λ", FOLD_LAMBDA, _fold_inputs, _fold_numpy,
             1_000, 1_000_000, (10**3, 10**4, 10**5, 10**6), ref=10_000),
]
