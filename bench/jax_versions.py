"""Each workload of ``bench/programs.py`` written by hand with ``jax.jit`` (and ``lax.fori_loop``
for its loops), as a JAX user would: what Remora on the JAX backend is measured against
(``python -m bench --backend=jax``).  Imported only there: the benchmarks need JAX only for it."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax


def _softmax(xs):
    e = jnp.exp(xs - xs.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _l1(ps, qs):
    return jnp.abs(ps[:, None, :] - qs[None, :, :]).sum(axis=-1)


def _nbody(pos, mass):
    d = pos[None, :, :] - pos[:, None, :]
    r2 = (d * d).sum(axis=-1) + 0.01
    w = mass[None, :] / (r2 * jnp.sqrt(r2))
    return (w[:, :, None] * d).sum(axis=1)


def _jacobi(xs):
    def step(_, x):
        left = jnp.concatenate([x[:1], x[:-1]])
        right = jnp.concatenate([x[1:], x[-1:]])
        return (left + (x + right)) / 3.0

    return lax.fori_loop(0, 50, step, xs)


def _life(grid):
    def step(_, g):
        up, down = jnp.roll(g, -1, axis=0), jnp.roll(g, 1, axis=0)
        count = (
            up + down + jnp.roll(g, -1, axis=1) + jnp.roll(g, 1, axis=1)
            + jnp.roll(up, -1, axis=1) + jnp.roll(up, 1, axis=1)
            + jnp.roll(down, -1, axis=1) + jnp.roll(down, 1, axis=1)
        )
        return ((count == 3) | ((g == 1) & (count == 2))).astype(grid.dtype)

    return lax.fori_loop(0, 20, step, grid)


def _mandelbrot(points):
    cx, cy = points[..., 0], points[..., 1]

    def step(_, state):
        x, y, count = state
        inside = x * x + y * y <= 4.0
        x2 = x * x - y * y + cx
        y2 = 2.0 * (x * y) + cy
        return jnp.where(inside, x2, x), jnp.where(inside, y2, y), count + jnp.where(inside, 1.0, 0.0)

    zero = jnp.zeros_like(cx)
    return lax.fori_loop(0, 30, step, (zero, zero, zero))[2]


def _mriq(xs, ks, phi):
    phase = 6.283185307179586 * (xs[:, None, :] * ks[None, :, :]).sum(axis=-1)
    return jnp.stack([(phi * jnp.cos(phase)).sum(axis=1), (phi * jnp.sin(phase)).sum(axis=1)], axis=-1)


def _histogram(data, bins):
    return (data[:, None] == bins[None, :]).astype(data.dtype).sum(axis=0, dtype=data.dtype)


def _hotspot(temp, power):
    def step(_, t):
        north = jnp.concatenate([t[:1], t[:-1]], axis=0)
        south = jnp.concatenate([t[1:], t[-1:]], axis=0)
        west = jnp.concatenate([t[:, :1], t[:, :-1]], axis=1)
        east = jnp.concatenate([t[:, 1:], t[:, -1:]], axis=1)
        return t + 0.05 * (power + (0.1 * (north + (south - 2.0 * t)) + (0.1 * (east + (west - 2.0 * t))
                                                                        + 0.01 * (80.0 - t))))

    return lax.fori_loop(0, 20, step, temp)


def _pathfinder(wall):
    n = wall.shape[0]

    def step(i, best):
        left = jnp.concatenate([best[:1], best[:-1]])
        right = jnp.concatenate([best[1:], best[-1:]])
        return wall[n - 2 - i] + jnp.minimum(best, jnp.minimum(left, right))

    return lax.fori_loop(0, n - 1, step, wall[-1])


def _segmented(data, mask):
    return jnp.where(mask, data, 0.0).sum(axis=1)


def _triangular(mat, vec):
    return jnp.tril(mat) @ vec


def _collatz(ns):
    """Every cell steps until its own n reaches 1: one ``lax.while_loop`` over the whole vector."""

    def running(state):
        return jnp.any(state[0] > 1)

    def step(state):
        n, steps = state
        live = n > 1
        nxt = jnp.where(n % 2 == 0, n // 2, 3 * n + 1)
        return jnp.where(live, nxt, n), steps + live.astype(steps.dtype)

    return lax.while_loop(running, step, (ns, jnp.zeros_like(ns)))[1]


def _fold(xs):
    n = xs.shape[0]
    return lax.fori_loop(0, n, lambda i, acc: acc * 0.5 + xs[n - 1 - i], jnp.zeros((), xs.dtype))


#: workload name → its hand-written jitted version
VERSIONS = {
    "dot products": jax.jit(lambda a, b: jnp.einsum("ij,ij->i", a, b)),
    "matrix product": jax.jit(lambda a, b: a @ b),
    "batched softmax": jax.jit(_softmax),
    "pairwise L1": jax.jit(_l1),
    "n-body": jax.jit(_nbody),
    "1-D Jacobi": jax.jit(_jacobi),
    "Game of Life": jax.jit(_life),
    "Mandelbrot": jax.jit(_mandelbrot),
    "MRI-Q": jax.jit(_mriq),
    "histogram": jax.jit(_histogram),
    "Hotspot": jax.jit(_hotspot),
    "Pathfinder": jax.jit(_pathfinder),
    "segmented sums": jax.jit(_segmented),
    "triangular mat-vec": jax.jit(_triangular),
    "Collatz (while)": jax.jit(_collatz),
    "fold of a λ": jax.jit(_fold),
}
