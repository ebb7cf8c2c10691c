"""The JAX half of the JAX backend (:mod:`.jax_backend`): every operation of
:class:`~remora.backends.base.Backend` as a ``jax.numpy`` / ``jax.lax`` call, on ``jax.Array`` s
and tracers of ``int64``, ``float64`` and ``bool``.  These are what traced code computes with;
host object arrays (frames of functions and boxes: JAX has no object dtype) take NumPy's path.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from . import host
from .base import OBJECT, Backend
from .numpy_backend import DTYPES, REP_OF_DTYPE  # (JAX arrays hold the same dtypes)
from .jax_width import WIDE_DTYPES, _x64, dtype_of, index_dtype, require_wide, x64, x64_for  # noqa: F401


#: reductions of the associative operations by name (base.ASSOCIATIVE)
_REDUCE = {
    "add": jnp.sum,
    "multiply": jnp.prod,
    "minimum": jnp.min,
    "maximum": jnp.max,
    "logical_and": jnp.all,
    "logical_or": jnp.any,
}
_BINARY = {
    "add": jnp.add,
    "multiply": jnp.multiply,
    "minimum": jnp.minimum,
    "maximum": jnp.maximum,
    "logical_and": jnp.logical_and,
    "logical_or": jnp.logical_or,
    "logical_xor": jnp.logical_xor,
}
_SEGMENT = {
    "add": jax.ops.segment_sum,
    "multiply": jax.ops.segment_prod,
    "minimum": jax.ops.segment_min,
    "maximum": jax.ops.segment_max,
}
#: marks a (key, signature) whose evaluation cannot be traced: it runs eagerly
EAGER = "eager"


#: a traced stack of at most this many columns is remembered as its columns (:func:`columns`)
MAX_COLUMNS = 8


def columns(ops: "JaxOps", x, axis: int, m: int) -> tuple:
    """The ``m`` items of ``x`` along ``axis``: the arrays it was stacked from, where the trace
    remembers them (a stack, moved or selected from: see ``JaxOps.stack``), else slices."""
    hit = ops._tracing.columns.get(id(x)) if ops._tracing.depth else None
    if hit is not None and hit[0] is x and hit[1] == axis and len(hit[2]) == m:
        shape = x.shape[:axis] + x.shape[axis + 1:]
        return tuple(c if getattr(c, "shape", None) == shape and c.dtype == x.dtype
                     else jnp.broadcast_to(jnp.asarray(c, x.dtype), shape) for c in hit[2])
    return tuple(lax.index_in_dim(x, j, axis, keepdims=False) for j in range(m))


class Untraceable(Exception):
    """Raised while tracing when an evaluation needs something a compiled function cannot do
    (an effect, a result that is not an array): the evaluation then runs eagerly."""


def _is_host(*xs) -> bool:
    return any(host.is_host(x) for x in xs)


def _is_tracer(x: Any) -> bool:
    return isinstance(x, jax.core.Tracer)


class _Tracing(threading.local):
    """This thread's tracing: how deep, and the checks the innermost trace has made so far."""

    depth = 0
    checks: list = []
    #: the traced broadcasts made so far: id(result) → (result, what it broadcasts, with unit axes)
    broadcasts: dict = {}
    #: the traced arrays known to lie within bounds (JaxBackend.bounded): id(x) → (x, lo, hi)
    bounds: dict = {}
    #: the traced slices of items made so far (slice_items): id(result) → (result, whole, axis, start)
    slices: dict = {}
    #: the traced arrays made by stacking columns (see :func:`columns`): id(result) → (result,
    #: axis, the columns)
    columns: dict = {}
    #: the traced 1-D arrays known to be one vector repeated (a padded box's lanes: JaxBackend's
    #: lane_ranks, take, reshape): id(x) → (x, the vector)
    tiled: dict = {}
    #: the traced products of such a repeated vector and another array (JaxBackend.multiply):
    #: id(product) → (product, the other factor, the vector)
    factors: dict = {}
    #: the traced arrays whose atoms are known on the host (know): id(x) → (x, the
    #: host array, or a function making it)
    known: dict = {}


class JaxOps(Backend):
    """The operations as ``jax.numpy`` / ``jax.lax`` calls, on ``jax.Array`` s (and tracers) of
    ``int64``, ``float64`` and ``bool``; host object arrays take NumPy's path."""

    name = "jax"
    ns = jnp

    def __init__(self) -> None:
        super().__init__()
        self._tracing = _Tracing()

    # --- representations and conversions ---------------------------------------------------

    def dtype(self, rep: str):
        return dtype_of(rep)

    def rep(self, x) -> str:
        return REP_OF_DTYPE[np.dtype(x.dtype)]

    def itemsize(self, x) -> int:
        return np.dtype(x.dtype).itemsize

    def owns(self, x: Any) -> bool:
        return isinstance(x, jax.Array) or host.is_host(x)

    def asarray(self, x: Any, rep: str | None = None):
        if host.is_host(x) or rep == OBJECT:
            return np.asarray(x, dtype=object) if rep == OBJECT else x
        if rep is None and isinstance(x, np.ndarray) and x.dtype == object:
            return x
        if rep is None and (isinstance(x, (int, float)) and not isinstance(x, bool)
                            or getattr(x, "dtype", None) in WIDE_DTYPES):
            require_wide(x)  # (a Python number or a 64-bit array: 64-bit atoms)
        with _x64():
            return jnp.asarray(x) if rep is None else jnp.asarray(x, dtype=dtype_of(rep))

    def empty(self, shape: tuple, rep: str):
        if rep == OBJECT:
            return host.empty(shape)
        with _x64():
            return jnp.zeros(shape, dtype=dtype_of(rep))

    def full(self, shape: tuple, value: Any, rep: str):
        if rep == OBJECT:
            return np.full(shape, value, dtype=object)
        with _x64():
            return jnp.full(shape, value, dtype=dtype_of(rep))

    def arange(self, n: int):
        with _x64():
            return jnp.arange(n, dtype=index_dtype())

    def constant(self, key: Any, values: Any, rep: str | None, shape: tuple):
        # made outside any trace: a constant outlives the evaluation that first needs it
        with jax.ensure_compile_time_eval():
            return super().constant(key, values, rep, shape)

    def to_host(self, x) -> Any:
        return np.asarray(x).tolist()

    def to_numpy(self, x) -> np.ndarray:
        return np.asarray(x)

    def from_numpy(self, x: np.ndarray):
        if x.dtype == object:
            return x
        with x64_for(x.dtype):
            return jnp.asarray(x)

    def from_user(self, x: Any):
        return x if isinstance(x, jax.Array) else None

    def to_user(self, x):
        return x if isinstance(x, jax.Array) else self.from_numpy(np.asarray(x))

    def quiet(self):
        return _x64()

    # --- structure (host object arrays take NumPy's path) -------------------------------------

    def reshape(self, x, shape: tuple):
        return x.reshape(shape) if _is_host(x) else jnp.reshape(x, shape)

    def broadcast_to(self, x, shape: tuple):
        return np.broadcast_to(x, shape) if _is_host(x) else jnp.broadcast_to(x, shape)

    def concat(self, xs: Sequence, axis: int = 0):
        return np.concatenate(xs, axis=axis) if _is_host(*xs) else jnp.concatenate(xs, axis=axis)

    def stack(self, xs: Sequence, axis: int = 0):
        if _is_host(*xs):
            return np.stack(xs, axis=axis)
        out = jnp.stack(xs, axis=axis)
        if self._tracing.depth and 1 < len(xs) <= MAX_COLUMNS:
            self._tracing.columns[id(out)] = (out, axis % out.ndim, tuple(xs))
        return out

    def moveaxis(self, x, source: int, destination: int):
        if _is_host(x):
            return np.moveaxis(x, source, destination)
        out = jnp.moveaxis(x, source, destination)
        if not self._tracing.depth:
            return out
        axes = list(range(x.ndim))
        axes.insert(destination % x.ndim, axes.pop(source % x.ndim))
        return self._columns_moved(x, out, axes)

    def permute_dims(self, x, axes: Sequence[int]):
        return np.transpose(x, axes) if _is_host(x) else self._columns_moved(x, jnp.transpose(x, axes), axes)

    def _columns_moved(self, x, out, axes):
        """``out``, ``x`` with its axes permuted (``axes[k]``: the axis of ``x`` that is ``out``'s
        ``k``), remembered as columns where ``x`` is."""
        hit = self._tracing.columns.get(id(x)) if self._tracing.depth else None
        if hit is not None and hit[0] is x:
            self._tracing.columns[id(out)] = (out, list(axes).index(hit[1]), hit[2])
        return out

    def flip(self, x, axis: int):
        return np.flip(x, axis) if _is_host(x) else jnp.flip(x, axis)

    def roll(self, x, shift, axis: int):
        return np.roll(x, shift, axis) if _is_host(x) else jnp.roll(x, shift, axis)

    def take(self, x, indices, axis: int):
        if _is_host(x):
            return np.take(x, np.asarray(indices), axis=axis)
        return jnp.take(x, indices, axis=axis)  # (indices are checked before; negatives count from the end)

    def take_along_axis(self, x, indices, axis: int):
        if _is_host(x):
            return np.take_along_axis(x, np.asarray(indices), axis=axis)
        return jnp.take_along_axis(x, indices, axis=axis)

    def index_add(self, shape: tuple, key, values):
        return jnp.zeros(shape, dtype=values.dtype).at[key].add(values)

    def where(self, condition, x, y):
        if _is_host(x, y):
            return np.where(np.asarray(condition), x, y)
        if self._tracing.depth:
            out = self._where_columns(condition, x, y)
            if out is not None:
                return out
        return jnp.where(condition, x, y)

    def _where_columns(self, condition, x, y):
        """``where(condition, x, y)`` as a stack of the columns ``where(condition_j, x_j, y_j)``
        when ``x`` or ``y`` is a stack of columns (a ``while`` state's new and old cells): what is
        read of one column then reads that column alone, and the loop carries each column by
        itself — XLA recovers neither from the whole (spec D48, "What XLA is given")."""
        table = self._tracing.columns
        hit = next((h for h in (table.get(id(x)), table.get(id(y))) if h is not None and (h[0] is x or h[0] is y)),
                   None)
        if hit is None or getattr(x, "shape", None) != getattr(y, "shape", None) or x.dtype != y.dtype:
            return None
        c = jnp.asarray(condition)
        axis, m, ndim = hit[1], len(hit[2]), max(c.ndim, x.ndim)
        if ndim != x.ndim:
            return None
        c = jnp.reshape(c, (1,) * (ndim - c.ndim) + c.shape)
        xs, ys = columns(self, x, axis, m), columns(self, y, axis, m)
        return self.stack([jnp.where(lax.index_in_dim(c, j if c.shape[axis] > 1 else 0, axis, keepdims=False),
                                     xs[j], ys[j]) for j in range(m)], axis=axis)

    def astype(self, x, rep: str):
        if rep == OBJECT or _is_host(x):
            return np.asarray(x).astype(DTYPES[rep])
        return x.astype(dtype_of(rep))

    # --- elementwise ----------------------------------------------------------------------------

    add = staticmethod(jnp.add)
    subtract = staticmethod(jnp.subtract)
    multiply = staticmethod(jnp.multiply)
    divide = staticmethod(jnp.true_divide)
    floor_divide = staticmethod(jnp.floor_divide)
    remainder = staticmethod(jnp.remainder)
    minimum = staticmethod(jnp.minimum)
    maximum = staticmethod(jnp.maximum)
    negative = staticmethod(jnp.negative)
    abs = staticmethod(jnp.abs)
    pow = staticmethod(jnp.power)
    sqrt = staticmethod(jnp.sqrt)
    exp = staticmethod(jnp.exp)
    log = staticmethod(jnp.log)
    sin = staticmethod(jnp.sin)
    cos = staticmethod(jnp.cos)
    tan = staticmethod(jnp.tan)
    atan = staticmethod(jnp.arctan)
    floor = staticmethod(jnp.floor)
    ceil = staticmethod(jnp.ceil)
    round = staticmethod(jnp.round)  # halves to even, as NumPy's rint
    trunc = staticmethod(jnp.trunc)
    isfinite = staticmethod(jnp.isfinite)
    equal = staticmethod(jnp.equal)
    not_equal = staticmethod(jnp.not_equal)
    less = staticmethod(jnp.less)
    less_equal = staticmethod(jnp.less_equal)
    greater = staticmethod(jnp.greater)
    greater_equal = staticmethod(jnp.greater_equal)
    logical_and = staticmethod(jnp.logical_and)
    logical_or = staticmethod(jnp.logical_or)
    logical_xor = staticmethod(jnp.logical_xor)
    logical_not = staticmethod(jnp.logical_not)

    # --- reductions and scans -----------------------------------------------------------------

    def reduce(self, op: str, x, axis: int):
        if op == "logical_xor":
            return jnp.sum(x.astype(index_dtype()), axis=axis) % 2 == 1
        if op in ("add", "multiply"):  # (an Int32 sum is an int32: JAX's 64-bit mode would widen it)
            return _REDUCE[op](x, axis=axis, promote_integers=False)
        return _REDUCE[op](x, axis=axis)

    def accumulate(self, op: str, x, axis: int):
        if x.shape[axis] == 0:
            return x
        return lax.associative_scan(_BINARY[op], x, axis=axis)

    def segment_reduce(self, op: str, data, offsets):
        n, segments = data.shape[0], offsets.shape[0]
        ids = jnp.searchsorted(offsets, jnp.arange(n), side="right") - 1
        if op in _SEGMENT and np.dtype(data.dtype) != np.bool_:
            return _SEGMENT[op](data, ids, num_segments=segments)
        as_int = data.astype(index_dtype())
        if op == "logical_xor":
            return jax.ops.segment_sum(as_int, ids, num_segments=segments) % 2 == 1
        kind = {"logical_and": "minimum", "multiply": "minimum", "minimum": "minimum"}.get(op, "maximum")
        return _SEGMENT[kind](as_int, ids, num_segments=segments).astype(bool)

    def vecdot(self, a, b):
        """As an ``einsum`` whose operands are not broadcast: an axis along which one operand
        has length 1 is left out of that operand, so XLA sees the free and batch axes of a
        ``dot_general`` — a lifted dot over an outer frame (a matrix product) is then a matrix
        product, not a broadcast product summed."""
        rank = max(a.ndim, b.ndim)
        if rank > 25:
            return jnp.einsum("...i,...i->...", a, b)
        a = jnp.reshape(a, (1,) * (rank - a.ndim) + a.shape)
        b = jnp.reshape(b, (1,) * (rank - b.ndim) + b.shape)
        letters = "abcdefghijklmnopqrstuvwxy"
        sa, sb, so = [], [], []
        for axis in range(rank - 1):
            letter, da, db = letters[axis], a.shape[axis], b.shape[axis]
            if da == db or da != 1:
                sa.append(letter)
            if da == db or db != 1:
                sb.append(letter)
            so.append(letter)
        a = jnp.reshape(a, tuple(d for d, x in zip(a.shape[:-1], range(rank - 1)) if letters[x] in sa) + a.shape[-1:])
        b = jnp.reshape(b, tuple(d for d, x in zip(b.shape[:-1], range(rank - 1)) if letters[x] in sb) + b.shape[-1:])
        return jnp.einsum(f"{''.join(sa)}z,{''.join(sb)}z->{''.join(so)}", a, b)

    # --- kernels on positions -----------------------------------------------------------------

    def gather(self, x, indices):
        return x[np.asarray(indices)] if _is_host(x) else jnp.asarray(x)[indices]

    def scatter(self, x, indices, values):
        if _is_host(x):
            x[np.asarray(indices)] = values
            return x
        # Never an in-place scatter into ``x``: XLA (CPU, jaxlib 0.10.2) was seen to compute a
        # wrong result when the values are computed from ``x`` itself (a ragged fold's step,
        # ``acc[:k] = (f acc[:k])``); a slice is a concatenation, other positions a select.
        x = jnp.asarray(x)
        values = jnp.asarray(values, dtype=x.dtype)
        if isinstance(indices, slice) and indices.step in (None, 1):
            start, stop, _ = indices.indices(x.shape[0])
            values = jnp.broadcast_to(values, (stop - start,) + x.shape[1:])
            return jnp.concatenate([x[:start], values, x[stop:]], axis=0)
        if isinstance(indices, np.ndarray):
            where = np.full(x.shape[0], -1, dtype=np.int64)
            where[indices.reshape(-1)] = np.arange(indices.size)
            taken = jnp.broadcast_to(values, indices.shape + x.shape[1:]).reshape((indices.size,) + x.shape[1:])
            mask = (where >= 0).reshape((-1,) + (1,) * (x.ndim - 1))
            return jnp.where(mask, taken[np.maximum(where, 0)], x)
        return x.at[indices].set(values)

    def repeat(self, x, counts, axis: int = 0):
        if _is_host(x):
            return np.repeat(x, np.asarray(counts) if not isinstance(counts, int) else counts, axis=axis)
        return jnp.repeat(x, counts, axis=axis)

    def resize(self, x, n: int):
        return np.resize(x, n) if _is_host(x) else jnp.resize(x, n)

    def select_items(self, x, mask):
        if _is_host(x):
            return x[np.asarray(mask)]
        return x[jnp.nonzero(mask)]

    def argsort(self, x, descending: bool = False):
        return jnp.argsort(x, stable=True, descending=descending)

    def same_atoms(self, a, b) -> bool:
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.dtype.kind == "f":
            return bool(np.array_equal(a, b, equal_nan=True)) and bool(np.all(np.signbit(a) == np.signbit(b)))
        return bool(np.array_equal(a, b))


# === what the JAX backend knows, while tracing, about a padded box's lanes (spec D48) ============
#
# A padded box (:mod:`remora.dynamics.padded`) keeps each row of a ``filter`` in its lanes.  Two
# facts about its traced arrays let XLA be given what a hand-written function would give it:
#
# - **Repeated vectors.**  In a box whose lanes taken lead its row, the positions of its items
#   (``iota/w``) are the lanes' own, 0, 1, … on every row: one vector repeated.  ``x`` at such
#   positions is ``x``'s first items repeated (a broadcast, not a gather), and the sum of each
#   row of a product by a repeated vector is a matrix–vector product (:func:`tiled_factor`: the
#   triangular product's ``(sum (* r (index x (iota/w r))))`` is ``where(lanes, rows, 0) @ x``, a
#   ``dot`` that reads the rows once).
# - **Flags known on the host.**  Flags computed by the compiled function from known operands
#   (``(<= (iota/w row) i)``: :func:`know`) are known at trace time too: whether every row's lanes
#   taken lead it is then decided once, when tracing (:func:`known_lead`), rather than by a ``cond``
#   at every call — which needs the flags as an operand, written out in full, and a pass to decide.
#
# The records are keyed by ``id`` and hold the traced array itself (an ``id`` is reused only once
# its array is gone); they last one trace (``JaxBackend._traced``).  These functions are the
# JaxBackend's methods ``reshape``, ``take``, ``multiply``, ``tiled_factor``, ``known_lead`` and ``remade``.


# --- repeated vectors ----------------------------------------------------------------------------


def _tiling(self, x):
    """``(v, iota)``: the vector ``v`` the traced ``x`` repeats (by the flat order of its atoms),
    and whether ``v`` is 0, 1, …; or None."""
    hit = self._tracing.tiled.get(id(x)) if self._tracing.depth else None
    return hit[1:] if hit is not None and hit[0] is x else None


def _tile(self, x, v, iota: bool = False):
    self._tracing.tiled[id(x)] = (x, v, iota)
    return x


def lane_iota(self, shape: tuple):
    """The positions of the lanes of rows of ``shape`` (an iota XLA computes where it is read,
    not a constant), known as 0, 1, … repeated."""
    return _tile(self, lax.broadcasted_iota(index_dtype(), shape, 1), lax.iota(index_dtype(), shape[1]), True)


def reshape(self, x, shape: tuple):
    out = self._reshape(x, shape)
    if self._tracing.depth and _is_tracer(out):
        tiling = _tiling(self, x)  # (a reshape keeps the order of the atoms: a repeated vector still repeats)
        if tiling is not None and out.ndim == 1:
            _tile(self, out, *tiling)
        known_as(self, out, x, lambda v: self._reshape(v, shape))
    return out


def take(self, x, indices, axis: int):
    tiling = _tiling(self, indices)
    if tiling is None or axis != 0 or getattr(x, "ndim", 0) != 1 or indices.ndim != 1 or x.dtype == object:
        return self._take(x, indices, axis)
    # (``x`` at a repeated vector of positions — ``(index x (iota/w r))`` in a box whose lanes
    # taken lead it — is ``x`` at those positions, repeated: a broadcast, where a gather would
    # read ``x`` atom by atom, and a factor a sum reads as a matrix–vector product)
    (v, iota), width = tiling, tiling[0].shape[0]
    w = x[:width] if iota and x.shape[0] >= width else self._take(x, v, 0)  # (a slice: not a gather)
    return _tile(self, jnp.reshape(jnp.broadcast_to(w, (indices.shape[0] // width, width)), indices.shape), w)


def multiply(self, a, b):
    out = self._multiply(a, b)
    if self._tracing.depth and _is_tracer(out) and out.ndim == 1:
        for this, other in ((a, b), (b, a)):
            tiling = _tiling(self, this)
            if tiling is not None and this.shape == out.shape and getattr(other, "shape", None) == out.shape:
                self._tracing.factors[id(out)] = (out, other, tiling[0])
                break
    return out


def tiled_factor(self, x, width: int):
    hit = self._tracing.factors.get(id(x)) if self._tracing.depth else None
    if hit is None or hit[0] is not x or hit[2].shape != (width,):
        return None
    return hit[1:]


# --- flags known on the host ---------------------------------------------------------------------


def know(self, out, value: "np.ndarray | Callable[[], np.ndarray]", again: Callable[[], Any] | None = None):
    """``out`` (traced), remembered as having the atoms of the host array ``value`` (or of what
    ``value()`` makes: computed only if asked); ``again()`` traces it again (:func:`remade`)."""
    if self._tracing.depth and _is_tracer(out):
        self._tracing.known[id(out)] = (out, value, again)
    return out


def known_as(self, out, x, how: Callable[[Any], Any]) -> None:
    """``out``, made from ``x`` by ``how`` (a reshape, a broadcast), known where ``x`` is."""
    if out is not x and _knows(self, x):
        know(self, out, lambda: how(_host_value(self, x)), lambda: how(remade(self, x)))


def remade(self, x):
    hit = self._tracing.known.get(id(x)) if self._tracing.depth else None
    return hit[2]() if hit is not None and hit[0] is x and hit[2] is not None else x


def _knows(self, x) -> bool:
    hit = self._tracing.known.get(id(x)) if self._tracing.depth else None
    return hit is not None and hit[0] is x


def _host_value(self, x):
    """The host array whose atoms the traced ``x`` is known to hold, or None."""
    if not _knows(self, x):
        return None
    value = self._tracing.known[id(x)][1]
    if callable(value):
        with np.errstate(all="ignore"):
            value = np.asarray(value())
        self._tracing.known[id(x)] = (x, value, self._tracing.known[id(x)][2])
    return value


def known_lead(self, lanes):
    hit = _host_value(self, lanes)
    if hit is None or hit.ndim != 2 or hit.dtype != bool:
        return None
    return bool(np.all(hit[:, 1:] <= hit[:, :-1]))
