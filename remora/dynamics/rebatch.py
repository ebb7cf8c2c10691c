"""Moving closures between batches.

A closure made inside a λ body evaluated over a whole frame captures batched values: it
stands for one closure per cell of the batch (its ``level`` is how many batch axes its
environment has).  When such a closure leaves its batch — returned in a result, or applied
to only some of the cells — it must be re-batched: fixed at one cell (:func:`detach`,
:func:`settle`) or restricted to a selection of cells that then form a batch of their own
(:func:`restrict_env`, :func:`restrict_closure`).  :func:`unbatched` turns a global's value
into the plain form the reference engine holds (``:trace``).
"""

from __future__ import annotations

from ..backends import Backend, host
from .batched import Val, batch_index, plain_val
from .layouts import plain
from .runtime import Closure, positions
from .values import BoxValue


def detach(v: Val, idx: tuple):
    """The plain (unbatched) value of ``v`` at batch position ``idx``."""
    v = plain_val(v)
    cell = v.arr[batch_index(v.arr, v.k, idx) + (Ellipsis,)]
    if host.is_host(cell):
        cell = host.map_atoms(cell, lambda f: detach_closure(f, idx) if getattr(f, "level", 0) else f)
    return cell


def detach_closure(f: Closure, idx: tuple) -> Closure:
    """A closure whose environment varies over the batch, fixed at batch position ``idx``."""
    env = {x: Val(detach(f.env[x], idx), 0) for x in f.lam.free if x in f.env}
    return type(f)(f.lam, env, f.ienv, 0)


def settle(out, m: int):
    """Closures created inside a batch that escape into a result lose their batch: fix them per cell."""
    if not any(getattr(f, "level", 0) > m for f in host.atoms(out)):
        return out
    out = host.copy(out)
    for idx in positions(out.shape):
        f = out[idx]
        if getattr(f, "level", 0) > m:
            out[idx] = detach_closure(f, idx)
    return out


def restrict_env(xp: Backend, env: dict, names, tf: tuple, sel) -> dict:
    """The environment seen by the cells ``sel`` (flat positions in ``tf``) as a batch of their own."""
    coords = xp.unravel_index(sel, tf) if len(sel) else ()
    zeros = xp.full((len(sel),), 0, "Int")
    out = {x: env[x] for x in names if x in env}
    for x in names:
        v = env.get(x)
        if v is None or not v.k:
            continue
        v = plain_val(v)
        ix = tuple(zeros if v.arr.shape[j] == 1 else coords[j] for j in range(v.k))
        arr = xp.gather_cells(v.arr, ix)
        if host.is_host(arr):  # closures in it see those cells too (each restricted once)
            done: dict[int, object] = {}

            def restricted(f):
                if not getattr(f, "level", 0):
                    return f
                if id(f) not in done:
                    done[id(f)] = restrict_closure(xp, f, tf, sel)
                return done[id(f)]

            arr = host.map_atoms(arr, restricted)
        out[x] = Val(arr, 1)
    return out


def restrict_closure(xp: Backend, f: Closure, tf: tuple, sel) -> Closure:
    """``f`` (made in a batch of frame ``tf``) as seen by the cells ``sel``, a batch of their own."""
    env = restrict_env(xp, f.env, f.lam.free, tf, sel)
    return type(f)(f.lam, env, f.ienv, 1)


def unbatched(arr):
    """A global's value as the reference engine holds values (for ``:trace``): boxes as
    objects, closures whose environments hold plain arrays instead of batched values.  A
    global carries no batch axes, and neither do the closures in it (escaping ones are
    settled), so nothing is lost; each distinct closure is converted once."""
    return _unbatched(arr, {})


def _unbatched(arr, done: dict):
    arr = plain(arr)
    if not host.is_host(arr):
        return arr
    return host.map_atoms(arr, lambda x: _unbatched_atom(x, done))


def _unbatched_atom(x, done: dict):
    if isinstance(x, BoxValue):
        return BoxValue(x.indices, _unbatched(x.value, done))
    if not isinstance(x, Closure):
        return x
    if id(x) not in done:
        env = {name: _unbatched(v.arr, done) for name, v in x.env.items()}
        done[id(x)] = (x, type(x)(x.lam, env, x.ienv))  # (x kept alive: its id stays its own)
    return done[id(x)][1]
