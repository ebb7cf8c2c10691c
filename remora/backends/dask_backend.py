"""The Dask backend (contract §8): Remora frames as chunked ``dask.array`` s, past one machine.

Design (spec D49):

- **NumPy where the data is small, Dask where it is the user's.**  Inputs (``from_numpy``) become
  Dask arrays chunked along their *frame* axes only — a function consumes its cells whole, so a
  cell is never split between blocks.  Scratch buffers the engines fill (``empty``, ``full``)
  are NumPy arrays, as are literals (a Dask value written into one is computed: small things);
  an array made from its positions alone (``iota``'s, a ``reshape``'s fill) is lazy past one block.
  A small loop state or array of loop items (:data:`_LOCAL_BYTES`) comes into the client once:
  no round trip per step.  Under ``distributed`` a NumPy input goes to the cluster once.  Other
  functions are NumPy's own (NumPy dispatches to Dask for Dask operands) but those below.
- **Frame-parallel work is blockwise.**  Elementwise functions over a chunked frame are one task
  per block; ``vecdot`` and ``take_along_axis`` run the NumPy backend's own kernel on each block
  (so each cell is computed exactly as NumPy computes it).
- **Work across chunks uses Dask's own operations**: ``reduce`` is a tree reduction of the NumPy
  ufunc's ``reduce`` (pairwise within a block, then the blocks' partial results), ``accumulate``
  a cumulative reduction (blocks' running results plus the totals of the blocks before them),
  ``concat``/``flip``/``roll``/``take`` and transposes Dask's concatenation, slicing and
  rechunking.  Float results of reductions and scans along a chunked axis are therefore grouped
  differently from NumPy's: they agree within a relative 1e-9 for well-conditioned data (D49).
- **Data-dependent shapes are computed first.**  Boolean selection (``filter``), ``nonzero``,
  ``repeat`` by counts, ``unique``, sorting: the small operand that decides the shape (the mask,
  the counts) is computed, and the result is then built lazily from known sizes.
- **Checks are computed when they are made** (:meth:`require`): a program whose run-time check
  fails raises the NumPy backend's located error before any result is handed back — never a
  silently wrong value.  Host decisions (``any``, ``all``, ``array_equal``) compute too.

Chunking rule: a NumPy input to :func:`remora.function` is chunked along the argument's frame
axes (its leading axes beyond the parameter's rank); one to :func:`remora.evaluate` along its
leading axis only.  Blocks hold at most :func:`block_bytes` bytes.  A memory-mapped ``.npy``
(``numpy.load(path, mmap_mode='r')``) is read block by block where the tasks run, never copied
into the task graph, so inputs larger than memory work.
"""

from __future__ import annotations

import warnings
from functools import partial
from typing import Any, Sequence

import dask
import dask.array as da
import numpy as np

from . import host
from .dask_blocks import _gathered, block_bytes, broadcast_chunks, distributed_client, frame_chunks
from .dask_failures import failure
from .dask_files import FileBlocks, file_source
from .dask_operands import ELEMENTWISE, compacted, mixed
from . import dask_positions as positions
from .base import OBJECT, Backend
from .numpy_backend import DTYPES, UFUNCS, NumpyBackend, _kept, _pow as _numpy_pow
from .numpy_backend import BACKEND as NUMPY

#: The identity of each associative operation, by representation kind (cumulative reductions).
_IDENTITY = {
    "add": lambda dt: dt.type(0),
    "multiply": lambda dt: dt.type(1),
    "minimum": lambda dt: np.inf if dt.kind == "f" else (True if dt.kind == "b" else np.iinfo(dt).max),
    "maximum": lambda dt: -np.inf if dt.kind == "f" else (False if dt.kind == "b" else np.iinfo(dt).min),
    "logical_and": lambda dt: True,
    "logical_or": lambda dt: False,
    "logical_xor": lambda dt: False,
}
def is_dask(x: Any) -> bool:
    return isinstance(x, da.Array)


def _tree_reduce(ufunc, x, axis, keepdims, **_):
    return ufunc.reduce(x, axis=axis, keepdims=keepdims, dtype=_kept(ufunc.__name__, x.dtype))


def _accumulated(ufunc, x, axis, dtype=None, **_):
    """NumPy's running ``ufunc`` of a block, in its own dtype (an ``int32`` sum wraps as ``int32``)."""
    return ufunc.accumulate(x, axis=axis, dtype=_kept(ufunc.__name__, x.dtype))


def _accumulator(ufunc):
    """:func:`_accumulated` of ``ufunc``, named as Dask names the tasks of a cumulative reduction."""
    out = partial(_accumulated, ufunc)
    out.__name__ = f"{ufunc.__name__}_accumulate"  # type: ignore[attr-defined]
    return out


def _reduced_at(ufunc, x, indices, axis):
    return ufunc.reduceat(x, indices, axis=axis, dtype=_kept(ufunc.__name__, x.dtype))


#: how many tasks per block a loop's accumulator may grow to before it is persisted
_STEP_TASKS = 32
#: a loop state of one block and at most this many bytes is brought into the client as NumPy: its
#: transfer costs less than one round trip to a cluster, and every later step, check and
#: ``while`` flag is then NumPy's work in the client, with no round trip at all (D49 "Loops")
_LOCAL_BYTES = 2**20
#: a ``while`` state may be larger: each round decides on the host whether to go on, so on the
#: cluster every round is a round trip (Collatz over 10⁶ cells, a 16 MB state: 838 s against 36 s),
#: while one transfer of 64 MiB costs a few round trips (D49 "Loops")
_WHILE_BYTES = 64 * 2**20


def _local(x, limit: int = _LOCAL_BYTES) -> bool:
    """Whether the loop state ``x`` is small enough (``limit`` bytes) to live in the client.
    Only one whose leading (frame) axis is one block: blocks a user gave, or that the chunking
    rule cut, are kept (a state built by joining cells is cut along its cell axes, harmlessly)."""
    return is_dask(x) and (x.ndim == 0 or x.numblocks[0] == 1) and x.nbytes <= limit


def _fetched(x) -> np.ndarray:
    with _Quiet():
        return np.asarray(x.compute(optimize_graph=False))


def _fetched_together(*xs) -> list:
    """``xs`` as NumPy arrays, the Dask ones computed in one computation (one round trip)."""
    lazy = [x for x in xs if is_dask(x)]
    with _Quiet():
        done = iter(dask.compute(*lazy, optimize_graph=False))
    return [np.asarray(next(done)) if is_dask(x) else x for x in xs]


def _bounded(acc, init):
    """A loop's accumulator with bounded blocks and a bounded task graph: cut into the blocks of
    the loop's first accumulator (appends and rotations along the way split blocks, which would
    multiply with every step), and persisted (computed where the cluster keeps it) once its graph
    has grown past :data:`_STEP_TASKS` tasks per block, so ``n`` steps cost ``n`` small graphs,
    not one that grows with ``n`` and is recomputed by every check made along the way."""
    if not is_dask(acc):
        return acc
    if _local(acc):
        return _fetched(acc)
    if is_dask(init) and init.shape == acc.shape and init.chunks != acc.chunks:
        acc = acc.rechunk(init.chunks)
    if len(acc.__dask_graph__()) > _STEP_TASKS * max(1, acc.npartitions):
        with _Quiet():
            return acc.persist()
    return acc


def _vecdot_block(a, b):
    return NUMPY.vecdot(a, b)


class _Quiet:
    """Computations as the engine makes them: no floating-point warnings (NumPy's, in whichever
    thread a task runs), and graphs computed as they are built — Dask's graph optimisation renames
    fused tasks, and a ``distributed`` scheduler that still knows a key from an earlier
    computation (a run-time check's) must not be sent another task under that key."""

    def __enter__(self) -> None:
        self._config = dask.config.set(array_optimize=False)
        self._config.__enter__()
        self._errors = np.errstate(all="ignore")
        self._errors.__enter__()
        # (NumPy's error state is per thread, and the local scheduler's tasks run in a pool)
        self._warnings = warnings.catch_warnings()
        self._warnings.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)

    def __exit__(self, *exc) -> None:
        self._warnings.__exit__(*exc)
        self._errors.__exit__(*exc)
        self._config.__exit__(*exc)
        error = None if exc[1] is None else failure(exc[1])
        if error is not None:  # (a killed worker, a block too large: a located error, not a crash)
            raise error from exc[1]


class DaskBackend(NumpyBackend):
    """Atom data as ``dask.array`` s (inputs, constants, and all that is computed from them) and
    small NumPy scratch arrays; host object arrays as everywhere."""

    name = "dask"
    #: no array is held whole — only its blocks are, each at most :func:`block_bytes` — so the
    #: size limit is NumPy's own on a shape (D49)
    max_bytes = 2**62

    # --- representations and conversions ---------------------------------------------------

    def itemsize(self, x) -> int:
        return x.dtype.itemsize

    def owns(self, x: Any) -> bool:
        return isinstance(x, (np.ndarray, da.Array))

    def asarray(self, x: Any, rep: str | None = None):
        if is_dask(x):  # (never computed: NumPy's asarray would)
            return x if rep is None or x.dtype == DTYPES[rep] else x.astype(DTYPES[rep])
        return NUMPY.asarray(x, rep)

    def read_only(self, x):
        return x if is_dask(x) else NUMPY.read_only(x)

    def to_host(self, x) -> Any:
        return np.asarray(self._computed(x)).tolist()

    def to_numpy(self, x) -> np.ndarray:
        return np.asarray(self._computed(x))

    def from_numpy(self, x: np.ndarray, frame_axes: int | None = None):
        """A user's NumPy array, chunked along its frame axes (``frame_axes``; the leading one when
        not known) — an object array or a 0-d one stays as it is."""
        if x.dtype == DTYPES[OBJECT] or x.ndim == 0:
            return x
        frame = 1 if frame_axes is None else max(0, min(frame_axes, x.ndim))
        source = file_source(x)
        out = da.from_array(source, chunks=frame_chunks(x.shape, x.dtype.itemsize, frame))
        if source is x and distributed_client() is not None:
            # sent to the cluster once: otherwise the blocks travel inside every graph computed
            # from them — each step of a loop, each check — as Pathfinder's wall did (D49)
            with _Quiet():
                out = out.persist()
        return out

    def from_user(self, x: Any):
        return x if is_dask(x) else None

    def to_user(self, x):
        if is_dask(x):
            return x
        return da.from_array(np.array(x, copy=True), chunks=np.shape(x) or ())

    def quiet(self):
        return _Quiet()

    def progress(self, stream: Any, delay: float) -> Any:
        """Dask's own progress bar (``dask.diagnostics.ProgressBar``: the share of the graph's
        tasks done) for a computation on the local scheduler; None on a ``distributed`` cluster,
        whose tasks that bar does not see."""
        if distributed_client() is not None:
            return None
        from dask.diagnostics import ProgressBar

        return ProgressBar(minimum=delay, out=stream)

    def connect(self, address: str):
        """A ``distributed`` client of the scheduler at ``address``, made this process's default
        (what ``--scheduler`` does); the caller closes it."""
        from distributed import Client

        return Client(address, timeout="10s", set_as_default=True)

    def _computed(self, x):
        if not is_dask(x):
            return x
        with _Quiet():
            client = distributed_client() if x.npartitions > 1 else None
            return x.compute() if client is None else _gathered(client, x)

    def store(self, x, path: str) -> None:
        """``x`` written block by block (``da.store``) into the ``.npy`` file ``path``, its header
        written here first: each block is computed and written by the task that makes it (D49)."""
        if not is_dask(x) or x.size == 0 or x.ndim == 0:
            return super().store(x, path)
        header = np.lib.format.open_memmap(path, mode="w+", dtype=x.dtype, shape=x.shape)
        offset = header.offset
        del header
        with _Quiet():
            da.store(x, FileBlocks(path, offset, x.dtype, x.shape), lock=False, compute=True)

    # --- structure ------------------------------------------------------------------------------

    def arange(self, n: int):
        """0 … n−1: NumPy's within one block; past it, lazy (:mod:`.dask_positions`) — the size
        limit is lifted on Dask because no array is held whole, and ``iota`` must not be either."""
        atoms = block_bytes() // 8
        return NUMPY.arange(n) if n <= atoms else positions.arange(n, atoms)

    def reshape(self, x, shape: tuple):
        if is_dask(x):  # (an array made from its positions is made again at the new shape)
            again = positions.reshaped(x, tuple(shape), lambda s, itemsize: frame_chunks(s, itemsize, len(s)))
            if again is not None:
                return again
        return x.reshape(shape)

    def broadcast_to(self, x, shape: tuple):
        """``x`` seen at ``shape``, its stretched axes cut into blocks (:func:`broadcast_chunks`);
        the result remembers ``x``, so :meth:`compact` can undo the broadcast as NumPy's strides
        let :func:`host.compact` do (``inner`` over the frame of a matrix product then sees
        the product's structure and makes one matrix product, not the n³ elementwise products)."""
        if not is_dask(x):
            return np.broadcast_to(x, shape)
        if x.shape == tuple(shape):
            return x
        chunks = broadcast_chunks(x, tuple(shape))
        lead = len(shape) - x.ndim
        # (Dask lets the broadcast itself cut only the stretched axes)
        x = x.rechunk(tuple(c if n == d else -1 for n, d, c in zip(x.shape, shape[lead:], chunks[lead:])))
        out = da.broadcast_to(x, shape, chunks=chunks)
        out._remora_broadcast_of = x.reshape((1,) * (len(shape) - x.ndim) + x.shape)
        return out

    def roll(self, x, shift: int, axis: int):
        if not is_dask(x):
            return np.roll(x, shift, axis=axis)
        # Dask rolls by slicing and concatenating, which splits a block in two: keep the blocks
        # the frame had, or a loop of rotations (Life, stencils) fragments it step by step
        return da.roll(x, shift, axis=axis).rechunk(x.chunks)

    def compact(self, x):
        if not is_dask(x):
            return host.compact(x)
        source = getattr(x, "_remora_broadcast_of", None)
        return x if source is None else self.compact(source)

    def contiguous(self, x):
        return x if is_dask(x) else np.ascontiguousarray(x)

    def take(self, x, indices, axis: int):
        if not (is_dask(x) or is_dask(indices)):
            return np.take(x, indices, axis=axis)
        # Dask takes along one axis by a vector only: the positions flattened, then reshaped
        axis = axis % x.ndim
        flat = da.take(da.asarray(x), indices.reshape(-1), axis=axis)
        return flat.reshape(x.shape[:axis] + tuple(indices.shape) + x.shape[axis + 1:])

    def take_along_axis(self, x, indices, axis: int):
        if not (is_dask(x) or is_dask(indices)):
            return np.take_along_axis(x, indices, axis=axis)
        # one NumPy call per block of the frame, the axis taken along whole in each
        axis = axis % x.ndim
        x, indices = (da.asarray(v) for v in compacted((x, indices), keep=axis))
        shape = np.broadcast_shapes(x.shape[:axis] + (1,) + x.shape[axis + 1:],
                                    indices.shape[:axis] + (1,) + indices.shape[axis + 1:])
        x = da.broadcast_to(x, shape[:axis] + (x.shape[axis],) + shape[axis + 1:])
        indices = da.broadcast_to(indices, shape[:axis] + (indices.shape[axis],) + shape[axis + 1:])
        x, indices = x.rechunk({axis: -1}), indices.rechunk({axis: -1})
        letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[: x.ndim]
        source = letters[:axis] + "!" + letters[axis + 1:]
        where = letters[:axis] + "?" + letters[axis + 1:]
        fn = partial(np.take_along_axis, axis=axis)
        return da.blockwise(lambda a, i: fn(a, i), where, x, source, indices, where,
                            dtype=x.dtype, concatenate=True)

    # --- elementwise ----------------------------------------------------------------------------

    @staticmethod
    def pow(a, b):
        if is_dask(a) or is_dask(b):
            # per block, as NumPy computes each cell (its broadcast-exponent shortcut avoided)
            a, b = compacted((a, b))
            return da.map_blocks(_numpy_pow, *da.broadcast_arrays(da.asarray(a), da.asarray(b)),
                                 dtype=np.result_type(a.dtype, b.dtype))
        return _numpy_pow(a, b)

    # --- reductions and scans -----------------------------------------------------------------

    def any(self, x) -> bool:
        return bool(self._computed(x.any() if is_dask(x) else np.any(x)))

    def all(self, x) -> bool:
        return bool(self._computed(x.all() if is_dask(x) else np.all(x)))

    def ragged_layout(self, lengths):
        """The lengths in the client, computed once (one Int per box): every box's positions, each
        distinct length's boxes, the result's chunks are then known, and the work on the boxes'
        data stays lazy — not a computation per distinct length (segmented sums made ~65)."""
        lengths = _fetched(lengths) if is_dask(lengths) else lengths
        return lengths, NUMPY.cumulative_sum(lengths, 0, True)

    def cumulative_sum(self, x, axis: int = 0, include_initial: bool = False):
        if not is_dask(x):
            return NUMPY.cumulative_sum(x, axis, include_initial)
        out = da.cumsum(x, axis=axis)
        if include_initial:
            zero = da.zeros(x.shape[:axis] + (1,) + x.shape[axis + 1:], dtype=out.dtype)
            out = da.concatenate([zero, out], axis=axis)
        return out

    def reduce(self, op: str, x, axis: int):
        if not is_dask(x):
            return NUMPY.reduce(op, x, axis)
        # a tree reduction: NumPy's own reduce on each block (pairwise for Floats), then on the
        # blocks' partial results
        fn = partial(_tree_reduce, UFUNCS[op])
        return da.reduction(x, fn, fn, axis=axis % x.ndim, dtype=x.dtype, concatenate=True)

    def fold_items(self, op: str, z, x, axis: int):
        if not (is_dask(x) or is_dask(z)):
            return NUMPY.fold_items(op, z, x, axis)
        return Backend.fold_items(self, op, z, x, axis)  # (the last of the blocks' running values)

    def accumulate(self, op: str, x, axis: int):
        if not is_dask(x):
            return NUMPY.accumulate(op, x, axis)
        ufunc = UFUNCS[op]
        if x.numblocks[axis % x.ndim] == 1:  # strictly left to right, as NumPy
            return x.map_blocks(partial(_accumulated, ufunc, axis=axis), dtype=x.dtype)
        return da.reductions.cumreduction(_accumulator(ufunc), ufunc, _IDENTITY[op](x.dtype), x,
                                          axis=axis % x.ndim, dtype=x.dtype)

    def segment_reduce(self, op: str, data, offsets):
        if not (is_dask(data) or is_dask(offsets)):
            return NUMPY.segment_reduce(op, data, offsets)
        offsets = self.to_numpy(offsets)
        data = da.asarray(data).rechunk({0: -1})
        chunks = ((len(offsets),),) + data.chunks[1:]
        return data.map_blocks(partial(_reduced_at, UFUNCS[op], indices=offsets, axis=0), chunks=chunks,
                               dtype=data.dtype)

    def vecdot(self, a, b):
        if not (is_dask(a) or is_dask(b)):
            return NUMPY.vecdot(a, b)
        a, b = da.broadcast_arrays(*(da.asarray(v) for v in compacted((a, b))))
        a, b = a.rechunk({a.ndim - 1: -1}), b.rechunk({b.ndim - 1: -1})
        return da.map_blocks(_vecdot_block, a, b, drop_axis=a.ndim - 1, dtype=np.result_type(a.dtype, b.dtype))

    # --- kernels on positions -----------------------------------------------------------------

    def nonzero(self, x):
        return np.nonzero(self.to_numpy(x))

    def gather(self, x, indices):
        if not (is_dask(x) or is_dask(indices)):
            return x[indices]
        indices = self.to_numpy(indices)  # (positions decide the result's chunks)
        flat = da.asarray(x)[indices.reshape(-1)]
        return flat.reshape(indices.shape + tuple(x.shape[1:]))

    def gather_cells(self, x, coords: tuple):
        """The cells at ``coords`` of ``x``'s leading axes.  Dask indexes by one vector of positions
        only (n-d fancy indexing is its ``NotImplementedError``: an ``if`` over a frame of two
        axes was an internal error): by points, ``vindex``."""
        if not (is_dask(x) or any(is_dask(c) for c in coords)):
            return NUMPY.gather_cells(x, coords)
        coords = tuple(self.to_numpy(c) for c in coords)  # (positions decide the result's chunks)
        if not is_dask(x):
            return NUMPY.gather_cells(x, coords)
        return x.vindex[coords] if len(coords) > 1 else self.gather(x, coords[0])

    def scatter(self, x, indices, values):
        if not (is_dask(x) or is_dask(indices) or is_dask(values)):
            return NUMPY.scatter(x, indices, values)
        out = da.asarray(x).copy()
        # (Dask writes by one vector of positions only: n-d positions and their values flattened)
        indices = np.asarray(self.to_numpy(indices))
        rest = tuple(out.shape[1:])
        if indices.ndim != 1:
            values = self.broadcast_to(values, indices.shape + rest) if np.ndim(values) else values
            indices = indices.reshape(-1)
            values = values.reshape((-1,) + rest) if np.ndim(values) else values
        out[indices] = values
        return out

    def index_add(self, shape: tuple, key, values):
        # (Dask has no scatter-add: the positions and values are computed, added on the host)
        key = tuple(self.to_numpy(k) if is_dask(k) else k for k in (key if type(key) is tuple else (key,)))
        return self.from_numpy(NUMPY.index_add(shape, key, self.to_numpy(values)))

    def repeat(self, x, counts, axis: int = 0):
        if not (is_dask(x) or is_dask(counts)):
            return np.repeat(x, counts, axis=axis)
        counts = self.to_numpy(counts)  # the result's length depends on them
        positions = np.repeat(np.arange(x.shape[axis]), counts)
        return da.take(da.asarray(x), positions, axis=axis)

    def resize(self, x, n: int):
        if not is_dask(x):  # (a fill past one block is lazy, as ``arange`` is)
            atoms = max(1, block_bytes() // x.dtype.itemsize)
            return np.resize(x, n) if n <= atoms or x.dtype == DTYPES[OBJECT] else positions.cyclic(x, n, atoms)
        return x[np.arange(n) % x.shape[0]] if n else x[:0]

    def select_items(self, x, mask):
        if not (is_dask(x) or is_dask(mask)):
            return NUMPY.select_items(x, mask)
        if not is_dask(x) or _local(x):
            # a small operand is fetched with the mask, in the one computation the mask needs
            # anyway: a `while`'s running positions, selected every round, then stay NumPy
            # (lazily, each round would add to a graph computed again by the next round's mask)
            return NUMPY.select_items(*_fetched_together(x, mask))
        # the mask decides the result's length: computed first, the selection then lazy
        where = np.flatnonzero(self.to_numpy(mask))
        lead = mask.ndim
        flat = da.asarray(x).reshape((-1,) + tuple(x.shape[lead:]))
        return flat[where]

    def unique(self, x):
        return np.unique(self.to_numpy(x))

    def argsort(self, x, descending: bool = False):
        return NUMPY.argsort(self.to_numpy(x), descending)

    def searchsorted(self, x, value, side: str = "left") -> int:
        return NUMPY.searchsorted(self.to_numpy(x), self.to_numpy(value), side)

    def array_equal(self, a, b) -> bool:
        return NUMPY.array_equal(self.to_numpy(a), self.to_numpy(b))

    def same_atoms(self, a, b) -> bool:
        return NUMPY.same_atoms(self.to_numpy(a), self.to_numpy(b))

    # --- control -------------------------------------------------------------------------------

    def loop(self, n: int, step, init):
        acc = init
        for i in range(n):
            acc = _bounded(step(i, acc), init)
        return acc

    def scan(self, n: int, step, init, axis: int):
        out = []
        acc = init
        for i in range(n):
            acc = _bounded(step(i, acc), init)
            out.append(acc)
        return self.stack(out, axis=axis)

    def loop_items(self, x):  # (up to 64 MiB into the client once: not a round trip per step's item, D49)
        return _fetched(x) if is_dask(x) and x.nbytes <= _WHILE_BYTES else x

    def settle(self, x, like=None):
        if not is_dask(x):
            return x
        if _local(x, _WHILE_BYTES):  # (then every later round is the client's: no round trip per round)
            return _fetched(x)
        with _Quiet():  # (every step: the loop computes its flags from this state right away)
            return x.persist()

    def settle_branch(self, x):
        """A value the branches of an ``if`` start from (the engine reads its flags on the host
        next; in a recursion, each level's cells are computed from these): a small one comes into
        the client, as a ``while``'s state does — the levels below are then NumPy's work — and a
        larger one whose graph has grown is persisted, as a loop's accumulator is, so a recursion
        of depth ``d`` is ``d`` bounded graphs, not one of ``d`` levels computed at every level
        (depth 200/400/800 took 5.5/16/56 s).  Not a value that has not grown (an input): it stays
        lazy, out of core."""
        if not is_dask(x):
            return x
        if _local(x, _WHILE_BYTES):
            return _fetched(x)
        return _bounded(x, None)

    def require(self, ok, message: str, culprits: Sequence, fail) -> None:
        if not any(is_dask(c) for c in (ok, *culprits)):
            return NUMPY.require(ok, message, culprits, fail)
        if is_dask(ok) and self._computed(ok.all()):
            return None
        NUMPY.require(self.to_numpy(ok), message, [self.to_numpy(c) for c in culprits], fail)


#: The one Dask backend (computations run where the user's Dask client says).
BACKEND = DaskBackend()
for _name in ELEMENTWISE:  # (a NumPy operand goes to Dask as the atoms it holds: dask_operands)
    setattr(DaskBackend, _name, staticmethod(mixed(getattr(NumpyBackend, _name), BACKEND.broadcast_to)))
