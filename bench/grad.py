"""``python -m bench grad [--quick] [--backend numpy jax]`` — derivatives (issue 25, contract §11).

For each program (a logistic-regression loss, a softmax cross-entropy, an n-body potential, a
``scan`` recurrence lifted over a frame, a ``while`` per cell, a stencil iterated), the time of
``remora.grad`` of the loss against the time of the loss itself (``remora.function``), on NumPy
and on JAX — the issue's target is grad ≤ 4× the function — and, on JAX, against ``jax.grad`` of
the same loss written by hand in JAX and jitted (target ≤ 1.5×).  Peak memory (tracemalloc, the
NumPy backend) of the function and of its gradient.  Every gradient is first checked against
``jax.grad``'s (1e-9 relative).  Minimum of a few runs, after one warm-up call (the plan or the
compilation is made there); the JAX backend is given JAX arrays, as ``jax.grad`` is.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .harness import best_time, peak_memory


@dataclass
class Program:
    name: str
    source: Callable[[dict], str]  # the Remora loss, its sizes filled in
    inputs: Callable[[dict, np.random.Generator], tuple]
    jax_loss: Callable  # (jnp, lax) -> the loss as a JAX function of the same inputs
    sizes: dict
    quick: dict


def _logistic(jnp, lax):
    def loss(w, x, y):
        p = 1 / (1 + jnp.exp(-(x @ w)))
        return jnp.mean(-(y * jnp.log(p) + (1 - y) * jnp.log(1 - p)))

    return loss


def _xent(jnp, lax):
    def loss(w, x, y):
        z = x @ w
        z = z - jnp.max(z, axis=1, keepdims=True)
        return -jnp.mean(jnp.sum(y * (z - jnp.log(jnp.sum(jnp.exp(z), axis=1, keepdims=True))), axis=1))

    return loss


def _nbody(jnp, lax):
    def loss(p, m):
        d = p[None, :, :] - p[:, None, :]
        r = jnp.sqrt(0.01 + jnp.sum(d * d, axis=2))
        return -0.5 * jnp.sum(m[:, None] * m[None, :] / r)

    return loss


def _scan(jnp, lax):
    def loss(x):
        def step(acc, a):
            acc = 0.9 * acc + jnp.sin(a)
            return acc, acc

        _, ys = lax.scan(step, jnp.zeros(x.shape[0]), x.T)
        return jnp.sum(ys * ys)

    return loss


def _while(jnp, lax):
    def loss(x, trips):  # (the trip counts of each cell, from the data: a while's derivative holds them fixed)
        return jnp.sum(x * 1.5 ** trips)

    return loss


def _stencil(jnp, lax):
    def loss(x):
        for _ in range(20):
            x = 0.25 * jnp.roll(x, 1) + 0.5 * x + 0.25 * jnp.roll(x, -1)
        return jnp.sum(x * x)

    return loss


def _trips(x: np.ndarray) -> np.ndarray:
    t = np.zeros(x.shape)
    y = x.copy()
    while (live := np.abs(y) < 10.0).any():
        y = np.where(live, y * 1.5, y)
        t += live
    return t


PROGRAMS = [
    Program("logistic", lambda s: f"""
(define (sigmoid (z [Float])) (/ 1.0 (+ 1.0 (exp (neg z)))))
(λ ((w [Float {s['d']}]) (x [Float {s['n']} {s['d']}]) (y [Float {s['n']}]))
  (let ((p (sigmoid (dot x w))))
    (mean (neg (+ (* y (log p)) (* (- 1.0 y) (log (- 1.0 p))))))))""",
            lambda s, r: (r.normal(0, 0.1, s['d']), r.normal(0, 1, (s['n'], s['d'])),
                          (r.random(s['n']) < 0.5).astype(float)),
            _logistic, {"n": 100_000, "d": 16}, {"n": 1000, "d": 4}),
    Program("softmax-xent", lambda s: f"""
(define (row-loss (w [Float {s['d']} {s['k']}]) (x [Float {s['d']}]) (y [Float {s['k']}]))
  (let ((z (sum (transpose (* x w)))))
    (let ((z (- z (maximum z))))
      (neg (sum (* y (- z (log (sum (exp z))))))))))
(λ ((w [Float {s['d']} {s['k']}]) (x [Float {s['n']} {s['d']}]) (y [Float {s['n']} {s['k']}]))
  (mean (row-loss w x y)))""",
            lambda s, r: (r.normal(0, 0.1, (s['d'], s['k'])), r.normal(0, 1, (s['n'], s['d'])),
                          np.eye(s['k'])[r.integers(0, s['k'], s['n'])]),
            _xent, {"n": 20_000, "d": 16, "k": 10}, {"n": 200, "d": 4, "k": 3}),
    Program("nbody-potential", lambda s: f"""
(λ ((p [Float {s['n']} 3]) (m [Float {s['n']}]))
  (* -0.5 (sum ((λ ((r [Float 3]) (mi [Float]))
                  (let ((d ((λ ((q [Float 3])) (- q r)) p)))
                    (* mi (sum (/ m (sqrt (+ 0.01 (sum (* d d)))))))))
                p m))))""",
            lambda s, r: (r.normal(0, 1, (s['n'], 3)), r.random(s['n']) + 0.5),
            _nbody, {"n": 1000}, {"n": 20}),
    Program("scan-recurrence", lambda s: f"""
(λ ((x [Float {s['n']} {s['t']}]))
  (sum ((λ ((v [Float {s['t']}]))
          (let ((ys (scan (λ ((acc [Float]) (a [Float])) (+ (* 0.9 acc) (sin a))) 0.0 v)))
            (sum (* ys ys))))
        x)))""",
            lambda s, r: (r.normal(0, 1, (s['n'], s['t'])),),
            _scan, {"n": 10_000, "t": 50}, {"n": 20, "t": 5}),
    Program("while-cells", lambda s: f"""
(λ ((x [Float {s['n']}]))
  (sum ((λ ((v [Float])) (while (λ ((y [Float])) (< (abs y) 10.0)) (λ ((y [Float])) (* y 1.5)) v)) x)))""",
            lambda s, r: (r.uniform(0.1, 5.0, s['n']) * r.choice([-1.0, 1.0], s['n']),),
            _while, {"n": 100_000}, {"n": 50}),
    Program("stencil", lambda s: f"""
(define (smooth (x [Float {s['n']}])) (+ (* 0.25 (rotate x -1)) (+ (* 0.5 x) (* 0.25 (rotate x 1)))))
(λ ((x [Float {s['n']}])) (let ((y (iterate smooth 20 x))) (sum (* y y))))""",
            lambda s, r: (r.normal(0, 1, s['n']),),
            _stencil, {"n": 1_000_000}, {"n": 100}),
]


def _jax_inputs(program: Program, args: tuple) -> tuple:
    return args + (_trips(args[0]),) if program.name == "while-cells" else args


def measure(program: Program, sizes: dict, backends: list[str], repeat: int) -> dict:
    import remora

    args = program.inputs(sizes, np.random.default_rng(0))
    source = program.source(sizes)
    out: dict = {}
    if True:  # (jax.grad of the hand-written loss is the reference every gradient is checked against)
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
        loss = program.jax_loss(jnp, jax.lax)
        jargs = tuple(jnp.asarray(a) for a in _jax_inputs(program, args))
        by_hand = jax.jit(jax.grad(loss))
        want = np.asarray(by_hand(*jargs))
        if "jax" in backends:
            out["jax.grad"] = best_time(lambda: by_hand(*jargs).block_until_ready(), repeat)
    for backend in backends:
        f, g = remora.function(source, backend=backend), remora.grad(source, backend=backend)
        if backend == "jax":  # (JAX arrays in, as jax.grad gets them: no transfer timed)
            args = tuple(jnp.asarray(a) for a in program.inputs(sizes, np.random.default_rng(0)))
        got = np.asarray(g(*args))
        scale = max(1.0, float(np.abs(want).max()))
        if np.abs(got - want).max() > 1e-9 * scale:
            raise SystemExit(f"{program.name} on {backend}: the gradient differs from jax.grad's "
                             f"by {np.abs(got - want).max():.3g}")
        block = (lambda v: v.block_until_ready()) if backend == "jax" else (lambda v: v)
        f(*args)
        out[f"{backend} f"] = best_time(lambda: block(f(*args)), repeat)
        out[f"{backend} grad"] = best_time(lambda: block(g(*args)), repeat)
        if backend == "numpy":
            out["peak f"] = peak_memory(lambda: f(*args))
            out["peak grad"] = peak_memory(lambda: g(*args))
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench grad", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (a smoke test)")
    parser.add_argument("--backend", nargs="+", default=["numpy", "jax"])
    parser.add_argument("--only", nargs="+", default=None, help="programs by name")
    parser.add_argument("--repeat", type=int, default=3)
    opts = parser.parse_args(argv)
    print("| program | size | NumPy f | NumPy grad | grad/f | JAX f | JAX grad | grad/f | jax.grad | Remora/jax.grad "
          "| peak f | peak grad |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for program in PROGRAMS:
        if opts.only and program.name not in opts.only:
            continue
        sizes = program.quick if opts.quick else program.sizes
        t = measure(program, sizes, opts.backend, opts.repeat)

        def ms(key: str) -> str:
            return f"{t[key] * 1e3:.2f} ms" if key in t else "–"

        def ratio(a: str, b: str) -> str:
            return f"{t[a] / t[b]:.2f}×" if a in t and b in t else "–"

        def mib(key: str) -> str:
            return f"{t[key] / 2**20:.1f} MiB" if key in t else "–"

        size = " ".join(f"{k}={v}" for k, v in sizes.items())
        print(f"| {program.name} | {size} | {ms('numpy f')} | {ms('numpy grad')} | {ratio('numpy grad', 'numpy f')} "
              f"| {ms('jax f')} | {ms('jax grad')} | {ratio('jax grad', 'jax f')} | {ms('jax.grad')} "
              f"| {ratio('jax grad', 'jax.grad')} | {mib('peak f')} | {mib('peak grad')} |", flush=True)
    return 0
