"""The JAX backend (contract §8): atom data as ``jax.Array`` s, evaluations compiled with ``jax.jit``.

Two halves:

- **The operations** of :class:`~remora.backends.base.Backend` as ``jax.numpy`` / ``jax.lax``
  calls.  Frames of functions and boxes stay host-side NumPy object arrays (JAX has no object
  dtype), so every structural function takes the NumPy path for them.  ``loop`` and ``scan``
  become ``lax.fori_loop`` / ``lax.scan`` when they run under tracing: a fold over a million
  items is one compiled loop, never a million traced steps.
- **Compilation** (:meth:`JaxBackend.compile`): an evaluation — a form, a program, one
  application of a ``remora.function`` — is compiled once per input signature (dtypes and
  shapes) into one ``jax.jit`` function and cached: from its plan's IR where it has one the
  lowering can express (:mod:`.jax_lower`, :mod:`.jax_compiled`), else — what this module's
  tracing state serves — by tracing the whole-frame engine itself; the engine's Python decisions depend on
  shapes only, so they happen once, at trace time.  Run-time checks (:meth:`require`) become
  one Bool the compiled function returns with its result (carried out of compiled loops with
  their accumulators): when it is false, the evaluation is run again eagerly, which raises the
  very error (message and location) the NumPy backend raises.  What cannot be traced
  — a shape that depends on data (``filter`` but over a frame into an ``unbox``, which keeps its rows
  padded: :mod:`remora.dynamics.padded`; ``iota/v`` of a computed length, ``take``/``drop``,
  ragged ``unbox``), an effect (``read-nums``), a result holding boxes or functions — makes that
  evaluation run eagerly, one JAX call per operation, and is remembered for its signature
  (spec D48).

64-bit: Remora's ``Int`` is ``int64`` and ``Float`` ``float64``, so an evaluation that makes them
runs under ``jax.enable_x64(True)``, a scoped, thread-local setting: the user's own JAX code
keeps whatever configuration it has.  One whose values are all ``Int32``, ``Float32`` and
``Bool`` enters no 64-bit scope at all (spec D56; ``jax_width.WIDTH``).  (A kept call of JAX
arrays — :meth:`_Compiled.replay` — is the executable's own call and needs no scope.)
"""

from __future__ import annotations

import collections
import contextlib
import math
import threading
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.extend.core import Var

from .base import NodeTable
from .jax_ops import EAGER, REP_OF_DTYPE, JaxOps, Untraceable, _is_host, _is_tracer, _x64, x64  # noqa: F401
from .jax_ops import MAX_COLUMNS, columns
from . import jax_ops, jax_width
from .jax_compiled import _Compiled
from .jax_lower import _columns_hoisted
from .numpy_backend import NumpyBackend


def _like(out, init):
    """A loop step's result with the accumulator's shape and dtype (a lifted result may be a
    broadcast, or weakly typed)."""
    out = jnp.asarray(out)
    if out.shape != init.shape:
        out = jnp.broadcast_to(out, init.shape)
    return out.astype(init.dtype) if out.dtype != init.dtype else out


def _widths(state: tuple) -> list:
    """How a loop carries each array of ``state``: as its ``m`` columns when its last axis is a
    few columns (``m``), whole otherwise (0)."""
    return [x.shape[-1] if x.ndim >= 2 and 1 < x.shape[-1] <= MAX_COLUMNS else 0 for x in state]


#: the two halves: NumPy's operations (eager) and JAX's (traced)
NUMPY = NumpyBackend()
JNP = JaxOps()
#: The operations every JaxBackend method dispatches between: NumPy's when running eagerly,
#: JAX's while tracing.
DISPATCHED = (
    "asarray empty full arange concat stack moveaxis permute_dims flip roll take "
    "take_along_axis where astype add subtract multiply divide floor_divide remainder minimum maximum "
    "negative abs pow sqrt exp log sin cos tan atan floor ceil round trunc isfinite equal not_equal less "
    "less_equal greater greater_equal logical_and logical_or logical_xor logical_not sum max min any all "
    "cumulative_sum reduce accumulate segment_reduce vecdot matmul unravel_index nonzero gather scatter "
    "repeat resize select_items unique argsort searchsorted array_equal reshape expand_dims index_add"
).split()


#: the kernels on positions: their index arguments are handed to JAX as they are
POSITIONAL = {"take", "take_along_axis", "gather", "scatter", "repeat", "resize", "select_items", "segment_reduce",
              "unravel_index", "searchsorted", "index_add"}


#: the elementwise operations whose known result is computed by the compiled function when it
#: would be large and its operands are broadcasts of small arrays (see :func:`_spread_out`)
ELEMENTWISE = set(
    "where add subtract multiply divide floor_divide remainder minimum maximum equal not_equal less less_equal "
    "greater greater_equal logical_and logical_or logical_xor".split()
)

#: from how many atoms a known elementwise result of broadcasts is left to the compiled function
STAGED_ATOMS = 1 << 20


def _spread_out(args) -> bool:
    """Whether an elementwise operation on known operands, while tracing, would make a large
    constant out of small ones — ``(<= (iota/w row) i)`` over a 4000×4000 frame is 16 MB of
    flags, each a comparison of two broadcast vectors.  Then the compiled function computes it
    (XLA fuses it into what reads it, as ``jnp.tril`` does) rather than carrying the constant:
    computed on the host, it took seconds to compile and was read from memory at every call."""
    arrays = [a for a in args if isinstance(a, np.ndarray) and a.ndim]
    if not arrays or any(a.dtype == object for a in arrays):
        return False
    atoms = math.prod(np.broadcast_shapes(*(a.shape for a in arrays)))
    return atoms >= STAGED_ATOMS and all(NUMPY.compact(a).size * 64 <= atoms for a in arrays)


def _dispatcher(name: str):
    eager, traced = getattr(NUMPY, name), getattr(JNP, name)
    positional = name in POSITIONAL
    stage = (lambda a: a) if positional else _staged
    elementwise = name in ELEMENTWISE

    def op(self, *args, **kwargs):
        if not self._tracing.depth:
            return eager(*args, **kwargs)
        if not jax_width.WIDTH.wide:  # (a narrow evaluation: nothing in it may need 64 bits)
            out = op_traced(self, *args, **kwargs)
            jax_width.check_narrow(name, args, out, positional)
            return out
        return op_traced(self, *args, **kwargs)

    def op_traced(self, *args, **kwargs):
        if any(_is_tracer(a) or (type(a) in (list, tuple) and any(map(_is_tracer, a))) for a in args):
            return traced(*[stage(a) for a in args], **kwargs)
        if elementwise and _spread_out(args):  # (its value known on the host, if asked)
            again = lambda: traced(*[stage(a) for a in args], **kwargs)  # noqa: E731
            return jax_ops.know(self, again(), lambda: eager(*args, **kwargs), again)
        # What is known while tracing (the program's constants, and what follows from them
        # alone) stays known: computed now, on the host — a count or a length that decides a
        # shape (``iterate``'s, ``iota/v``'s) is then one, as it is eagerly.  (A concrete JAX
        # array would not do: under ``jit`` every operation on it, ``n >= 0`` included, is staged.)
        return eager(*args, **kwargs)

    op.__name__ = name
    op.__doc__ = f"NumPy's ``{name}`` eagerly, JAX's while tracing."
    return op


def _staged(a):
    """A known argument of a traced operation as the trace should see it: a host broadcast (a
    constant spread over a frame, a zero-copy view) stays a broadcast of its small array — else
    it would become a constant of the frame's size, read again at every step of a loop."""
    if type(a) in (list, tuple):
        return type(a)(map(_staged, a))
    if not isinstance(a, np.ndarray) or a.ndim == 0 or a.dtype == object:
        return a
    if a.size == 1 or (a.size and 0 in a.strides and NUMPY.compact(a).size == 1):
        # one atom: a literal of the compiled code (XLA then sees ``(/ n 2)`` divide by the
        # constant 2 — a shift — not by an operand that happens to hold 2)
        return lax.full(a.shape, a.reshape(-1)[0], a.dtype)
    if 0 in a.strides:
        return jnp.broadcast_to(NUMPY.compact(a), a.shape)
    return a


class JaxBackend(NumpyBackend):
    """The backend called ``jax``: evaluations compiled by :meth:`compile`.

    Compiled code is JAX's (:class:`JaxOps`, on the device JAX chooses: a GPU where JAX has
    one).  What cannot be compiled — a shape that depends on data, an effect, a result holding
    boxes — runs outside the compiled part, eagerly, with the NumPy backend's operations on the
    host (an eager JAX call per operation would compile every operation anew for every shape a
    ragged value brings); its results are handed back as JAX arrays like any other."""

    name = "jax"
    compiles = True

    def __init__(self) -> None:
        super().__init__()
        self._tracing = JNP._tracing  # (one flag: the same thread traces through both)
        #: compiled evaluations: key (an erased node) → {input signature → its _Compiled}
        self._compiled = NodeTable()
        #: how many evaluations have been traced for compilation (a hook for tests and benchmarks)
        self.traces = 0
        #: why the latest evaluations that could not be compiled run eagerly (the last 100)
        self.fallbacks: collections.deque[str] = collections.deque(maxlen=100)
        #: how many evaluations ran eagerly, on the host (fallbacks, and re-runs after a failed check)
        self.eager_runs = 0
        self._lock = threading.Lock()

    for _name in DISPATCHED:
        locals()[_name] = _dispatcher(_name)
    del _name
    _broadcast_to = _dispatcher("broadcast_to")
    _reshape, _take, _multiply = _dispatcher("reshape"), _dispatcher("take"), _dispatcher("multiply")
    # (a padded box's lanes: vectors repeated along them, sums of products by them, flags known
    # while tracing — the end of jax_ops.py)
    reshape, take, multiply = jax_ops.reshape, jax_ops.take, jax_ops.multiply
    tiled_factor, known_lead, remade = jax_ops.tiled_factor, jax_ops.known_lead, jax_ops.remade

    def owns(self, x: Any) -> bool:
        return isinstance(x, (np.ndarray, jax.Array))

    def rep(self, x) -> str:
        return REP_OF_DTYPE[np.dtype(x.dtype)]

    def itemsize(self, x) -> int:
        return np.dtype(x.dtype).itemsize

    def loop_items(self, x):
        if self._tracing.depth and isinstance(x, np.ndarray) and x.dtype != object:
            return jnp.asarray(x)  # (a host array cannot be indexed by the traced loop counter)
        hit = self._tracing.slices.get(id(x)) if self._tracing.depth else None
        if hit is not None and hit[0] is x:
            return _Window(*hit)  # (each step reads its item from the whole array: no copy of the slice)
        return x

    def slice_items(self, x, axis: int, start, stop):
        out = super().slice_items(x, axis, start, stop)
        if self._tracing.depth and _is_tracer(x):
            begin = slice(start, stop).indices(x.shape[axis])[0]
            self._tracing.slices[id(out)] = (out, x, axis, begin)
        return out

    def read_only(self, x):
        return super().read_only(x) if isinstance(x, np.ndarray) else x

    def compact(self, x):
        if isinstance(x, np.ndarray):
            return super().compact(x)
        hit = self._tracing.broadcasts.get(id(x)) if self._tracing.depth else None
        return hit[1] if hit is not None and hit[0] is x else x

    def broadcast_to(self, x, shape: tuple):
        out = self._broadcast_to(x, shape)
        if self._tracing.depth and _is_tracer(out):
            # A traced array has no strides to show it is a broadcast: remember it for compact
            # (what finds a matrix product in a lifted dot, among others).
            small = self.compact(x)
            self._tracing.broadcasts[id(out)] = (out, jnp.reshape(small, (1,) * (len(shape) - small.ndim) + small.shape))
            jax_ops.known_as(self, out, x, lambda v: self._broadcast_to(v, shape))
        return out

    def contiguous(self, x):
        return super().contiguous(x) if isinstance(x, np.ndarray) else x

    def to_host(self, x) -> Any:
        return np.asarray(x).tolist()

    def to_numpy(self, x) -> np.ndarray:
        return np.asarray(x)

    def from_user(self, x: Any):
        return x if isinstance(x, jax.Array) else None

    def to_user(self, x):
        if isinstance(x, jax.Array):
            return x
        x = np.asarray(x)
        with jax_width.x64_for(x.dtype):  # (a 64-bit array in the scope, a 32-bit one in none)
            return jnp.asarray(x)

    @contextlib.contextmanager
    def quiet(self):
        # (no 64-bit scope: eagerly every operation is NumPy's; a trace runs in the scope its
        # evaluation needs, entered around the jitted call — spec D56)
        with np.errstate(all="ignore"):
            yield

    # --- control: compiled loops and checks ------------------------------------------------------

    def tracing(self) -> bool:
        return self._tracing.depth > 0

    def lane_ranks(self, lanes, lead: bool | None = None):
        if lead and self.tracing():  # (an iota XLA computes where it is read, not a constant)
            return jax_ops.lane_iota(self, lanes.shape)
        if not _is_tracer(lanes) or lanes.shape[1] < 2:
            return super().lane_ranks(lanes, lead)
        # The ranks are computed in the narrowest integers that hold them (int16 for rows under
        # 32768 lanes: out of a ``cond`` they are a buffer XLA writes and reads back — 1.4× the
        # hand-written triangular product at 4000, int32 1.6×), widened where they are read.
        n, width = lanes.shape
        small = jnp.int16 if width < 2**15 else jnp.int32 if width < 2**31 else jax_width.index_dtype()

        def counted(g):
            return jnp.maximum(jnp.cumsum(g.astype(small), axis=1) - 1, 0)

        if lead is False:  # (known not to lead: in the other branch of padded.evaluated's cond)
            return counted(lanes).astype(jax_width.index_dtype())
        # XLA's cumulative sum on the CPU is a log-depth scan: at 4000×4000 it alone took longer
        # than the whole hand-written triangular product (at 64×64 it doubled the product's
        # time).  When every row's lanes taken are a prefix of it (a triangle's rows, a kept
        # leading run), their ranks are their positions: checked at run time (one fused pass),
        # and the sum computed only when it is needed.
        prefix = jnp.all(lanes[:, 1:] <= lanes[:, :-1])
        ranks = lax.cond(prefix, lambda g: jnp.broadcast_to(jnp.arange(width, dtype=small), (n, width)),
                         counted, lanes)
        return ranks.astype(jax_width.index_dtype())

    def cond(self, pred, if_true, if_false):
        if not _is_tracer(pred):
            return super().cond(pred, if_true, if_false)
        checking: list = []

        def branch(make):
            def run(_):
                out, ok = self._checked_step(lambda i, acc: make(), None, None, checking)
                if isinstance(out, np.ndarray) and out.dtype != object:
                    out = jnp.asarray(out)  # (known in this branch: a constant of it)
                if not isinstance(out, jax.Array):
                    raise Untraceable("a `cond` branch whose value holds boxes or functions")
                return out, ok
            return run

        out, ok = lax.cond(pred, branch(if_true), branch(if_false), None)
        self._carry_out(ok, checking)
        return out

    def bounded(self, x, lo: int, hi: int):
        if self._tracing.depth and _is_tracer(x):
            self._tracing.bounds[id(x)] = (x, lo, hi)
        return x

    def bounds(self, x):
        hit = self._tracing.bounds.get(id(x)) if self._tracing.depth else None
        return hit[1:] if hit is not None and hit[0] is x else None

    def staged(self, x):
        if not self.tracing() or not isinstance(x, np.ndarray) or x.dtype == object or x.size <= 1:
            return x
        # (the barrier keeps XLA from folding what follows from the constant into larger ones:
        # a 4000×4000 filter's flags, their cumulative sum, a gather by it took 10 s to compile)
        return jax_ops.know(self, lax.optimization_barrier(jnp.asarray(_staged(x))), x)

    def loop(self, n: int, step: Callable[[int, Any], Any], init: Any) -> Any:
        if n <= 1 or not self.tracing() or _is_host(init):
            return super().loop(n, step, init)
        init = jnp.asarray(init)
        # (an accumulator of a few columns — Mandelbrot's [x y count] — is carried by column, as
        # a ``while`` state is: stacked whole, XLA rebuilds it at every step)
        widths = _widths((init,))
        flat_init = self._split((init,), widths)
        checking = []

        def body(i, carry):
            *flat, ok = carry
            (acc,) = self._whole(flat, widths, (init,))
            out, checked = self._checked_step(step, i, acc, checking)
            out = self._split((out if getattr(out, "shape", None) == init.shape else _like(out, init),), widths)
            return (*(_like(o, x) for o, x in zip(out, flat_init)), ok & checked)

        *out, ok = lax.fori_loop(0, n, _columns_hoisted(body, (*flat_init, jnp.bool_(True))),
                                 (*flat_init, jnp.bool_(True)))
        self._carry_out(ok, checking)
        return self._whole(out, widths, (init,))[0]

    def scan(self, n: int, step: Callable[[int, Any], Any], init: Any, axis: int):
        if n <= 1 or not self.tracing() or _is_host(init):
            return super().scan(n, step, init, axis)
        init = jnp.asarray(init)
        checking = []

        def body(carry, i):
            acc, ok = carry
            out, checked = self._checked_step(step, i, acc, checking)
            out = _like(out, init)
            return (out, ok & checked), out

        (_, ok), ys = lax.scan(body, (init, jnp.bool_(True)), jnp.arange(n))
        self._carry_out(ok, checking)
        return jnp.moveaxis(ys, 0, axis)

    def while_loop(self, live, step, init):
        if not self.tracing():
            return super().while_loop(live, step, init)
        if _is_host(*init):
            raise Untraceable("a `while` over boxes or functions")
        init = tuple(jnp.asarray(x) for x in init)
        # A state whose last axis is a few columns (a cell [Int 2]) is carried as one array per
        # column, as a hand-written loop would: stacked whole, XLA interleaves the columns and
        # rebuilds them (a stack and a transpose) at every step (spec D48, "What XLA is given").
        widths = _widths(init)
        flat_init = self._split(init, widths)
        checking = []

        def body(carry):
            *flat, ok = carry
            state = self._whole(flat, widths, init)
            out, checked = self._checked_step(lambda _, s: step(s), None, state, checking)
            out = self._split(tuple(o if getattr(o, "shape", None) == x.shape else _like(o, x)
                                    for o, x in zip(out, init)), widths)
            return (*(_like(o, x) for o, x in zip(out, flat_init)), ok & checked)

        # (a failed check ends the loop: the eager re-run raises it — a step whose check failed
        # may never reach the condition that would end the loop)
        *out, ok = lax.while_loop(lambda carry: carry[-1] & jnp.any(live(self._whole(carry[:-1], widths, init))),
                                  body, (*flat_init, jnp.bool_(True)))
        self._carry_out(ok, checking)
        return self._whole(out, widths, init)

    def _split(self, state: tuple, widths: list) -> list:
        """A ``while`` state as the loop carries it: each array of ``widths[i]`` columns as its
        columns (the arrays it was stacked from, where the trace knows them), others as they are."""
        flat: list = []
        for x, m in zip(state, widths):
            flat.extend(columns(JNP, jnp.asarray(x), x.ndim - 1, m) if m else (x,))
        return flat

    def _whole(self, flat, widths: list, like: tuple) -> tuple:
        """The state of :meth:`_split` ``flat`` carries, each split array stacked again (remembered
        as its columns: what the step reads of a column, and the column it makes, stay columns)."""
        state, i = [], 0
        for m, x in zip(widths, like):
            state.append(JNP.stack(list(flat[i:i + m]), axis=-1) if m else flat[i])
            i += m or 1
        return tuple(state)

    def known(self, x) -> bool:
        return not _is_tracer(x)

    def _checked_step(self, step, i, acc, checking: list):
        """One traced loop step, and whether every check it made held (a check in a loop body is
        carried out of the loop with the accumulator: a traced value cannot leave its body); a
        step that made checks says so in ``checking``."""
        outer, self._tracing.checks = self._tracing.checks, []
        try:
            out = step(i, acc)
            checks = self._tracing.checks
        finally:
            self._tracing.checks = outer
        if checks:
            checking.append(True)
        return out, _all(checks)

    def _carry_out(self, ok, checking: list) -> None:
        """A compiled loop's flag, as a check of the evaluation — only if its step made checks: a
        compiled function without checks returns no flag, and its call never waits to read one."""
        if checking:
            self._tracing.checks.append(ok)

    def require(self, ok, message: str, culprits: Sequence, fail) -> None:
        if _is_tracer(ok) or any(_is_tracer(c) for c in culprits):
            # Carried out of the compiled function as a flag; a failure re-runs the evaluation
            # eagerly, which reports this check's own message, located (see compile).
            self._tracing.checks.append(jnp.all(ok))
            return
        ok = np.asarray(ok)
        if ok.all():
            return
        position = np.unravel_index(int(np.argmin(ok)), ok.shape)
        values = [np.broadcast_to(np.asarray(c), ok.shape)[position].item() for c in culprits]
        fail(message.format(*values))

    def untraceable(self, construct: str) -> None:
        if self.tracing():
            raise Untraceable(construct)

    def compiled(self, key: Any, inputs: dict) -> Callable[[Callable[[dict], Any], dict], Any]:
        """The compiled evaluation of ``key`` at the signature of ``inputs`` (dtypes and shapes): one
        ``jax.jit`` function, made on first use (see :class:`_Compiled`)."""
        table = self._compiled.get(key)
        if table is None:
            with self._lock:
                table = self._compiled.get(key)
                if table is None:
                    table = {}
                    self._compiled.set(key, table)
        signature = tuple([(name, a.dtype, a.shape) for name, a in inputs.items()])
        if len(signature) > 1:
            signature = tuple(sorted(signature))
        entry = table.get(signature)
        if entry is None:
            with self._lock:
                entry = table.get(signature)
                if entry is None:
                    entry = table[signature] = _Compiled(self, tuple([name for name, _, _ in signature]),
                                                         jax_width.wide_inputs(inputs.values()), _origin(key))
        return entry

    def plans(self, key: Any) -> tuple[list, str]:
        """The plans the compiled evaluations of ``key`` were lowered from (``--plan``), and why
        there are none where there are none."""
        table = self._compiled.get(key) or {}
        plans = [v.plan for entry in table.values() for v in entry.variants or ()]
        whys = ["evaluated eagerly on the host (it cannot be traced: `backend.fallbacks` says why)" if entry.eager
                else f"compiled by tracing the whole-frame engine (no plan to lower: {entry.why})" if entry.why
                else "" for entry in table.values()]
        return plans, next((w for w in whys if w), "not evaluated")

    def _eager(self, run: Callable[[dict], Any], inputs: dict) -> Any:
        """``run`` outside any trace, on host arrays."""
        self.eager_runs += 1
        with self.quiet():
            return run({name: np.asarray(a) if isinstance(a, jax.Array) else a for name, a in inputs.items()})

    def _traced(self, run: Callable[[dict], Any], names: Sequence[str]) -> Callable[..., Any]:
        """``run`` as a function to trace, of its inputs' arrays in the order of ``names`` (a
        tuple of arrays is the cheapest pytree for JAX's dispatch to flatten: a dict costs a
        sort of its keys on every call): marks this thread as tracing, collects the checks it
        makes into one flag returned with the result — ``(result, flag)``; the result alone
        when it makes none — and refuses a result a compiled function cannot return."""

        def traced(*arrays):
            inputs = dict(zip(names, arrays))
            self.traces += 1
            tracing = self._tracing
            tracing.depth += 1
            outer, tracing.checks = tracing.checks, []
            broadcasts, tracing.broadcasts = tracing.broadcasts, {}
            bounds, tracing.bounds = tracing.bounds, {}
            slices, tracing.slices = tracing.slices, {}
            stacks, tracing.columns = tracing.columns, {}
            tiled, tracing.tiled = tracing.tiled, {}
            factors, tracing.factors = tracing.factors, {}
            known, tracing.known = tracing.known, {}
            try:
                with np.errstate(all="ignore"):  # (what is known at trace time is computed on the host)
                    out = run(inputs)
                checks = tracing.checks
            finally:
                tracing.depth -= 1
                tracing.checks = outer
                tracing.broadcasts = broadcasts
                tracing.bounds = bounds
                tracing.slices = slices
                tracing.columns = stacks
                tracing.tiled = tiled
                tracing.factors = factors
                tracing.known = known
            if not isinstance(out, jax.Array):
                raise Untraceable("a result holding boxes or functions")
            return (out, _all(checks)) if checks else out  # (no flag to wait for without checks)

        return traced


class _Window:
    """The items ``start, start + 1, …`` of ``whole`` along ``axis``, as a loop reads them: item
    ``i`` is item ``start + i`` of the whole array.  XLA copies a slice that a compiled loop
    reads from (the Pathfinder workload's ``(fold f (tail wall) (curtail wall))`` copied all but
    one row of its input); a window reads the input itself."""

    __slots__ = ("sliced", "whole", "axis", "start", "shape")

    def __init__(self, sliced, whole, axis: int, start: int):
        self.sliced, self.whole, self.axis, self.start = sliced, whole, axis, start
        self.shape = sliced.shape

    def __getitem__(self, key):
        axis = self.axis
        if (type(key) is tuple and len(key) == axis + 2 and key[axis + 1] is Ellipsis
                and all(k == slice(None) for k in key[:axis]) and not isinstance(key[axis], slice)):
            i = key[axis]
            if isinstance(i, (int, np.integer)) and i < 0:
                i = i + self.shape[axis]
            return self.whole[key[:axis] + (i + self.start, Ellipsis)]
        return self.sliced[key]


def _origin(key: Any) -> str:
    """Where ``key`` comes from, for ``REMORA_EXPLAIN=1`` (only then: a compiled entry keeps a
    string, never its key)."""
    from .. import plans

    return plans.origin(key) if plans.EXPLAIN else ""


def _all(checks: list):
    """Whether every one of ``checks`` (traced Bool scalars) holds, as one traced Bool."""
    ok = jnp.bool_(True)
    for c in checks:
        ok = ok & c
    return ok


#: The one JAX backend (its caches of literal constants and of compiled evaluations).
BACKEND = JaxBackend()
