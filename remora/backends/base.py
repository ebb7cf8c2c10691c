"""The backend seam: every operation the engines and the primitives do on atom data.

An array library plugs into Remora by implementing :class:`Backend`.  The names are the
array-API standard's where it has one (``reshape``, ``broadcast_to``, ``concat``, ``take``,
``where``, ``sum``, ``cumulative_sum``, ``matmul``, ``vecdot``, ``floor_divide``, …), so a
library that follows the standard needs little more than a table of its functions; the few
kernels the standard lacks and the engine needs have names of their own (``reduce``,
``accumulate``, ``segment_reduce``, ``scatter``, ``gather``, ``resize``, ``repeat``,
``select_items``, ``insert_items``, ``loop``, ``scan``, ``require``), each documented below with
the meaning a backend must give it.

What every backend promises, beyond each function's own meaning:

- **Representations.**  An array's atoms are one of the representations named by
  :data:`REPS`: ``"Int"`` and ``"Int32"`` (64- and 32-bit integers that wrap around),
  ``"Float"`` and ``"Float32"`` (IEEE binary64 and binary32: a ``Float32`` is computed in single
  precision, never widened and rounded back), ``"Bool"``, and :data:`OBJECT` — functions and boxes, which stay host-side NumPy object arrays
  (:mod:`remora.backends.host`) whatever the backend.  ``dtype(rep)`` maps a representation to
  the library's dtype.  The *structural* functions (``reshape``, ``broadcast_to``,
  ``expand_dims``, ``concat``, ``stack``, ``moveaxis``, ``take``, indexing) accept host object
  arrays as well as the library's own, since frames of functions and boxes are lifted like any
  other value.
- **Frame independence.**  Elementwise functions, ``reduce`` of ``"add"``/``"multiply"`` on
  Floats, ``vecdot`` and ``accumulate`` compute each cell the same way whatever frame surrounds
  it, whatever its operands' strides: a cell computed alone (the reference engine's δ) and the
  same cell inside a million-cell frame (the whole-frame engine) are equal bit for bit (spec
  D22, D27, D28).
- **No surprises in the data.**  Floating-point warnings are never reported (IEEE results are
  the meaning, under :meth:`quiet`); ``Int`` arithmetic wraps; nothing a primitive is given is
  written to — results are new arrays or views, and the one kernel that updates an array,
  ``scatter``, is given an array its caller owns.
- **Checks are values.**  A run-time check (division by zero, an index out of range, a
  conversion of ``nan`` to ``Int``) is a boolean array handed to :meth:`require`, never a Python
  ``if`` on array data, so a tracing backend can carry it out later; an eager backend raises at
  once.

An *operation name* (``"add"``, ``"multiply"``, ``"minimum"``, ``"maximum"``, ``"logical_and"``,
``"logical_or"``, ``"logical_xor"``) is how an associative primitive declares itself to the
reductions: the primitive table never holds a library's function.
"""

from __future__ import annotations

import weakref
from typing import Any, Callable, Sequence

#: The representation of functions and boxes: host-side object arrays, on every backend.
OBJECT = "object"
#: Every atom representation: the base atom types by name, then functions and boxes.
REPS = ("Int", "Float", "Int32", "Float32", "Bool", OBJECT)
#: The associative, commutative operations the reductions know by name.
ASSOCIATIVE = ("add", "multiply", "minimum", "maximum", "logical_and", "logical_or", "logical_xor")

Array = Any


class NodeTable:
    """A table keyed by objects' identity — erased nodes — that forgets an entry when its key is
    collected: a cache of what a program's nodes mean at run time lasts as long as the program,
    and keeps no node alive.  (A lookup is an ``id`` and a dictionary access: these tables are on
    the engine's path for every application and every literal.)"""

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: dict[int, tuple[weakref.ref, Any]] = {}

    def get(self, key: Any) -> Any:
        """The value stored for ``key`` itself, or None."""
        entry = self._entries.get(id(key))
        if entry is not None and entry[0]() is key:
            return entry[1]
        return None

    def set(self, key: Any, value: Any) -> None:
        entries = self._entries

        def forget(ref: weakref.ref, k: int = id(key)) -> None:
            entry = entries.get(k)
            if entry is not None and entry[0] is ref:  # (not a newer key that took the same id)
                entries.pop(k, None)

        entries[id(key)] = (weakref.ref(key, forget), value)

    def __len__(self) -> int:
        return len(self._entries)


class Backend:
    """The operations on atom data.  This class documents them; those whose meaning is the same
    in every NumPy-compatible library are implemented here once, on the subclass's namespace
    :attr:`ns`; a subclass implements the others (they raise ``NotImplementedError`` here) and
    overrides any it does differently."""

    #: the name users choose the backend by (``--backend=NAME``)
    name = "abstract"
    #: the library's NumPy-compatible namespace (``numpy``, ``jax.numpy``): the operations whose
    #: meaning is the same in every such library are implemented here once, on it
    ns: Any = None
    #: whether :meth:`compile` compiles (callers may then hand it whole evaluations)
    compiles = False
    #: the size limit of one array in bytes, when not the run's (a backend whose arrays are held
    #: a block at a time); None: ``RunConfig.max_bytes``
    max_bytes: int | None = None

    def __init__(self) -> None:
        #: arrays made from a program's literal constants, by erased node, made once per backend
        self.constants = NodeTable()

    # --- representations and conversions --------------------------------------------------

    def dtype(self, rep: str) -> Any:
        """The library's dtype for the atom representation ``rep`` (one of :data:`REPS`)."""
        raise NotImplementedError

    def rep(self, x: Array) -> str:
        """The atom representation of the array ``x`` (:data:`OBJECT` for a host object array)."""
        raise NotImplementedError

    def itemsize(self, x: Array) -> int:
        """How many bytes each atom of ``x`` takes."""
        raise NotImplementedError

    def owns(self, x: Any) -> bool:
        """Whether ``x`` is an array of this backend (or a host object array)."""
        raise NotImplementedError

    def asarray(self, x: Any, rep: str | None = None) -> Array:
        """``x`` (a Python scalar, nested lists, or an array) as an array, of ``rep`` if given."""
        raise NotImplementedError

    def empty(self, shape: tuple, rep: str) -> Array:
        """An array of ``shape`` whose atoms are not yet set (filled by the caller, or empty)."""
        raise NotImplementedError

    def full(self, shape: tuple, value: Any, rep: str) -> Array:
        """An array of ``shape`` with every atom ``value``."""
        raise NotImplementedError

    def arange(self, n: int) -> Array:
        """The ``Int`` vector 0, 1, …, n−1."""
        raise NotImplementedError

    def constant(self, key: Any, values: Any, rep: str | None, shape: tuple) -> Array:
        """The array of a literal in the program (``values``: a tuple of atoms, row-major, or one
        atom; ``rep`` None to take the atoms' own), made once per ``key`` (an erased node) and
        backend; callers never write to it."""
        hit = self.constants.get(key)
        if hit is None:
            hit = self.read_only(self.reshape(self.asarray(values, rep), shape))
            self.constants.set(key, hit)
        return hit

    def read_only(self, x: Array) -> Array:
        """``x``, made unwritable where the library can (a shared constant, an argument handed out)."""
        return x

    def to_host(self, x: Array) -> Any:
        """``x`` as Python values: a scalar for a 0-d array, else nested lists (for printing)."""
        raise NotImplementedError

    def float32_texts(self, x: Array) -> list[str]:
        """The text of each atom of the ``Float32`` vector ``x``: the shortest decimal that reads
        back as the same ``float32`` (``0.1``, not the ``0.10000000149011612`` its 64-bit value
        would print), as ``repr(numpy.float32(a))`` writes it inside its parentheses — NumPy's
        own shortest formatting, whatever the library holding ``x``."""
        import numpy as np

        return np.asarray(self.to_numpy(x)).astype(str).tolist()

    def to_numpy(self, x: Array) -> Any:
        """``x`` as a ``numpy.ndarray`` (what the Python API hands back and registered functions get)."""
        raise NotImplementedError

    def store(self, x: Array, path: str) -> None:
        """Write ``x`` (Int, Float or Bool atoms) to the ``.npy`` file ``path`` (``-o PATH.npy``);
        an ``OSError`` when the file cannot be written.  By default the array is converted to
        NumPy and written whole; a backend that holds arrays a block at a time (Dask) writes it
        block by block, so a result larger than memory can be written."""
        import numpy.lib.format

        array = self.to_numpy(x)
        with open(path, "wb") as f:
            numpy.lib.format.write_array(f, array, allow_pickle=False)

    def from_numpy(self, x: Any, frame_axes: int | None = None) -> Array:
        """A ``numpy.ndarray`` (a user's input) as an array of this backend; ``frame_axes``, when
        known, is how many of its leading axes are a frame (a chunking backend cuts only those)."""
        raise NotImplementedError

    def from_user(self, x: Any) -> Array | None:
        """A user's input that is already an array of this library (a JAX or Dask array), as an
        array of this backend — without computing or copying it; None for anything else (NumPy
        arrays and Python scalars are converted by the API and handed to :meth:`from_numpy`).
        Its ``dtype`` and ``shape`` must be NumPy's, as they are for those libraries."""
        return None

    def to_user(self, x: Array) -> Any:
        """A result as the Python API returns it: NumPy's is a fresh, writeable ``ndarray`` the
        caller owns; a library whose arrays are immutable or lazy (JAX, Dask) returns its own."""
        raise NotImplementedError

    def quiet(self):
        """A context manager under which floating-point warnings are not reported."""
        raise NotImplementedError

    def progress(self, stream: Any, delay: float) -> Any:
        """A context manager that shows this library's own progress indicator on the terminal
        ``stream`` for work lasting longer than ``delay`` seconds, or None when the library has
        none (then the command line shows how long the work has been running)."""
        return None

    def specialise(self, name: str, args: tuple) -> Callable[..., Array]:
        """The function a plan calls for the operation ``name`` on arguments like ``args`` (their
        values when the plan was made: what a plan fixes — dtypes, shapes, the Python arguments —
        is theirs).  By default the operation itself; a backend may give a faster function that
        is right for exactly such arguments (one without the checks those facts settle)."""
        return getattr(self, name)

    def writes_into(self, fn: Callable) -> bool:
        """Whether ``fn`` (as :meth:`specialise` gave it) takes ``out=``: a plan may then have it
        write its result into a temporary array of the result's dtype and shape that nothing
        reads afterwards, instead of making a new one."""
        return False

    # --- structure (also on host object arrays) ---------------------------------------------

    def reshape(self, x: Array, shape: tuple) -> Array:
        raise NotImplementedError

    def broadcast_to(self, x: Array, shape: tuple) -> Array:
        """``x`` seen at ``shape`` (size-1 axes stretched), a view where the library has them."""
        raise NotImplementedError

    def expand_dims(self, x: Array, axis: int) -> Array:
        if axis < 0:
            axis += x.ndim + 1
        return x.reshape(x.shape[:axis] + (1,) + x.shape[axis:])

    def concat(self, xs: Sequence[Array], axis: int = 0) -> Array:
        raise NotImplementedError

    def stack(self, xs: Sequence[Array], axis: int = 0) -> Array:
        raise NotImplementedError

    def moveaxis(self, x: Array, source: int, destination: int) -> Array:
        raise NotImplementedError

    def permute_dims(self, x: Array, axes: Sequence[int]) -> Array:
        raise NotImplementedError

    def flip(self, x: Array, axis: int) -> Array:
        raise NotImplementedError

    def roll(self, x: Array, shift: int, axis: int) -> Array:
        raise NotImplementedError

    def take(self, x: Array, indices: Array, axis: int) -> Array:
        raise NotImplementedError

    def take_along_axis(self, x: Array, indices: Array, axis: int) -> Array:
        raise NotImplementedError

    def where(self, condition: Array, x: Array, y: Array) -> Array:
        raise NotImplementedError

    def astype(self, x: Array, rep: str) -> Array:
        raise NotImplementedError

    def compact(self, x: Array) -> Array:
        """``x`` with every axis along which it does not vary *because it is a broadcast* cut down
        to length 1 (a view; ``x`` itself where the library keeps no such information)."""
        return x

    def contiguous(self, x: Array) -> Array:
        """``x`` stored densely in row-major order (a copy only if it is not already)."""
        return x

    # --- elementwise (frame independent) -----------------------------------------------------
    # add subtract multiply divide floor_divide remainder minimum maximum negative abs pow
    # sqrt exp log sin cos tan atan floor ceil round trunc isfinite
    # equal not_equal less less_equal greater greater_equal
    # logical_and logical_or logical_xor logical_not
    # (array-API names; ``round`` rounds halves to even, ``remainder`` has the divisor's sign,
    # ``floor_divide`` floors.)

    def elementwise(self, op: str) -> Callable[..., Array]:
        """The elementwise function called ``op`` (one of the names above)."""
        return getattr(self, op)

    # --- reductions and scans ------------------------------------------------------------------

    def sum(self, x: Array, axis: int | None = None) -> Array:
        return self.ns.sum(x, axis=axis)

    def max(self, x: Array, axis: int | None = None) -> Array:
        return self.ns.max(x, axis=axis)

    def min(self, x: Array, axis: int | None = None) -> Array:
        return self.ns.min(x, axis=axis)

    def any(self, x: Array) -> bool:
        """Whether some atom of the Bool array ``x`` is true, as a Python bool (for the host's
        own decisions about layout, never for a program's checks: those use :meth:`require`)."""
        return bool(self.ns.any(x))

    def all(self, x: Array) -> bool:
        """Whether every atom of the Bool array ``x`` is true, as a Python bool (as :meth:`any`)."""
        return bool(self.ns.all(x))

    def ragged_layout(self, lengths: Array) -> tuple[Array, Array]:
        """A ragged layout's box lengths and offsets (where each box starts, then the end).  They
        decide the shape of everything done with its boxes, so a lazy library computes them here,
        once, rather than at each decision (one per distinct length) taken from them."""
        return lengths, self.cumulative_sum(lengths, include_initial=True)

    def cumulative_sum(self, x: Array, axis: int = 0, include_initial: bool = False) -> Array:
        out = self.ns.cumsum(x, axis=axis)
        if include_initial:
            zero = self.ns.zeros(x.shape[:axis] + (1,) + x.shape[axis + 1 :], dtype=out.dtype)
            out = self.ns.concatenate([zero, out], axis=axis)
        return out

    def reduce(self, op: str, x: Array, axis: int) -> Array:
        """``x``'s items along ``axis`` combined with the associative operation ``op``, in any
        grouping; Float ``add``/``multiply`` pairwise along the axis, frame independent (D22)."""
        raise NotImplementedError

    def accumulate(self, op: str, x: Array, axis: int) -> Array:
        """The running combination of ``x``'s items along ``axis``, strictly left to right."""
        raise NotImplementedError

    def fold_items(self, op: str, z: Array, x: Array, axis: int) -> Array:
        """``z`` combined with ``x``'s items along ``axis`` strictly left to right,
        ``(((z op x0) op x1) …)``: the last running value of ``accumulate`` from ``z`` (a Float
        ``fold``'s exact order, D22), without the running values where the backend can do
        without them.  ``z`` is one item's shape."""
        axis %= x.ndim
        steps = self.concat([self.expand_dims(z, axis), x], axis)
        return self.accumulate(op, steps, axis)[(slice(None),) * axis + (-1,)]

    def segment_reduce(self, op: str, data: Array, offsets: Array) -> Array:
        """``op`` over each segment ``data[offsets[i]:offsets[i+1]]`` (along axis 0; the last
        segment runs to the end); every segment has at least one item."""
        raise NotImplementedError

    def vecdot(self, a: Array, b: Array) -> Array:
        """The sums of the products along the last axis, each cell summed in the same order
        whatever the frame and the operands' strides (D27)."""
        raise NotImplementedError

    def einsum(self, subscripts: str, *operands: Array) -> Array:
        """The contraction ``subscripts`` (Einstein notation, explicit ``->``; a 0-d operand has no
        letters) of ``operands``, all of one dtype: what the IR's contraction pass makes of a sum of
        products (``Int``: exact; ``Float``: summed in the library's order, D27)."""
        return self.ns.einsum(subscripts, *operands)

    def matmul(self, a: Array, b: Array) -> Array:
        """The matrix product over the last two axes (a BLAS call where the library has one)."""
        return self.ns.matmul(a, b)

    # --- kernels on positions ------------------------------------------------------------------

    def unravel_index(self, indices: Array, shape: tuple) -> tuple[Array, ...]:
        """The coordinates (one Int array per axis) of the flat row-major ``indices`` in ``shape``."""
        return self.ns.unravel_index(indices, shape)

    def nonzero(self, x: Array) -> tuple[Array, ...]:
        """The positions (one index array per axis) of the true atoms of ``x``, row-major."""
        return self.ns.nonzero(x)

    def gather(self, x: Array, indices: Array) -> Array:
        """``x``'s items (along axis 0) at ``indices`` (an Int array of any shape)."""
        raise NotImplementedError

    def gather_cells(self, x: Array, coords: tuple) -> Array:
        """The cells of ``x`` at the points ``coords`` of its leading axes (one Int array per axis,
        all of one shape, as :meth:`unravel_index` gives): an ``if`` hands the cells that choose a
        branch to that branch this way, as a batch of their own (``x[coords]`` in NumPy)."""
        return x[tuple(coords)]

    def scatter(self, x: Array, indices: Array, values: Array) -> Array:
        """``x`` with its items at ``indices`` (along axis 0) replaced by ``values``.  ``x`` is the
        caller's own array (it may be updated in place and must not be used afterwards)."""
        raise NotImplementedError

    def index_add(self, shape: tuple, key: Any, values: Array) -> Array:
        """Zeros of ``shape`` (``values``' dtype) with ``values`` added at ``[key]`` (a position
        named twice gets both): the transpose of reading ``x[key]``, which derivatives use
        (remora/ir/ad/rules.py)."""
        out = self.ns.zeros(shape, dtype=values.dtype)
        self.ns.add.at(out, key, values)
        return out

    def insert_items(self, x: Array, before: Array, fill: Any) -> Array:
        """``x`` with one more item, every atom ``fill``, before each item at the ascending
        positions ``before`` (along axis 0; ``len(x)``: at the end; a position given twice gets
        two), as NumPy's ``insert``.  A ragged sum starts each box with its identity this way,
        so one ``segment_reduce`` reduces every box as the library reduces it alone (D28).
        Here by positions (a cumulative sum and a gather); a library with an ``insert`` uses it."""
        n, k = x.shape[0], before.shape[0]
        if n == 0:
            return self.full((k,) + tuple(x.shape[1:]), fill, self.rep(x))
        slots = before + self.arange(k)  # where the inserted items land
        inserted = self.scatter(self.full((n + k,), 0, "Int"), slots, 1)
        source = self.arange(n + k) - self.cumulative_sum(inserted)  # each other item's place in x
        taken = self.gather(x, self.minimum(source, n - 1))
        flags = self.reshape(inserted == 1, (n + k,) + (1,) * (len(x.shape) - 1))
        return self.where(flags, self.full((), fill, self.rep(x)), taken)

    def repeat(self, x: Array, counts: Array | int, axis: int = 0) -> Array:
        """Each item of ``x`` (along ``axis``) repeated ``counts`` times (one count per item, or one for all)."""
        raise NotImplementedError

    def resize(self, x: Array, n: int) -> Array:
        """The vector ``x`` repeated cyclically to ``n`` atoms (``x`` has atoms if ``n`` > 0)."""
        raise NotImplementedError

    def select_items(self, x: Array, mask: Array) -> Array:
        """The cells of ``x`` below ``mask``'s axes where ``mask`` is true, row-major, one after
        another along a new leading axis (boolean-mask indexing)."""
        raise NotImplementedError

    def unique(self, x: Array) -> Array:
        """The distinct atoms of ``x``, ascending."""
        return self.ns.unique(x)

    def argsort(self, x: Array, descending: bool = False) -> Array:
        """The stable permutation that sorts the vector ``x``."""
        raise NotImplementedError

    def searchsorted(self, x: Array, value: Any, side: str = "left") -> int:
        return int(self.ns.searchsorted(x, value, side=side))

    def array_equal(self, a: Array, b: Array) -> bool:
        """Whether ``a`` and ``b`` have one shape and equal atoms (for layout decisions)."""
        return bool(self.ns.array_equal(a, b))

    def same_atoms(self, a: Array, b: Array) -> bool:
        """Whether two arrays of base atoms are the same value: one shape, one representation,
        equal atoms — ``nan`` equal to ``nan``, ``-0.0`` different from ``0.0``."""
        raise NotImplementedError

    # --- control ---------------------------------------------------------------------------------

    def slice_items(self, x: Array, axis: int, start: int | None, stop: int | None) -> Array:
        """``x``'s items ``start:stop`` along ``axis`` (``behead``, ``curtail``): a view where the
        library has them.  A tracing backend may remember where the slice came from, so that a
        loop over its items (:meth:`loop_items`) reads them from the whole array, not a copy."""
        return x[(slice(None),) * axis + (slice(start, stop), Ellipsis)]

    def loop_items(self, x: Array) -> Array:
        """``x`` as an array whose items a :meth:`loop` or :meth:`scan` step can take by its
        counter (which a tracing backend makes a traced value): ``x`` itself, but for that."""
        return x

    def loop(self, n: int, step: Callable[[int, Any], Any], init: Any) -> Any:
        """``acc = init; for i in 0 … n−1: acc = step(i, acc)``; the final ``acc`` (a fold over
        items: a tracing backend makes it one compiled loop)."""
        acc = init
        for i in range(n):
            acc = step(i, acc)
        return acc

    def scan(self, n: int, step: Callable[[int, Any], Any], init: Any, axis: int) -> Array:
        """As :meth:`loop`, keeping every ``acc`` after a step: their stack along ``axis``
        (``n`` > 0)."""
        out = []
        acc = init
        for i in range(n):
            acc = step(i, acc)
            out.append(acc)
        return self.stack(out, axis=axis)

    def while_loop(self, live: Callable[[Any], Array], step: Callable[[Any], Any], init: Any) -> Any:
        """``state = init; while some atom of live(state) is true: state = step(state)``; the final
        state (a tuple of arrays).  ``while`` over a frame, while tracing (spec D48): a tracing
        backend makes it one compiled loop whose state has a fixed shape."""
        state = init
        while self.any(live(state)):
            state = step(state)
        return state

    def known(self, x: Array) -> bool:
        """Whether the atoms of ``x`` are known now: always, but for a tracing backend's
        placeholders (:meth:`tracing`), whose atoms are known only when the compiled function runs."""
        return True

    def lane_ranks(self, lanes: Array, lead: bool | None = None) -> Array:
        """Each lane's rank among the lanes taken in its row of ``lanes`` (a 2-D Bool array): 0,
        1, … along the row for the lanes that are true (the others: any number, but always
        within 0 … width - 1) — the positions of a padded box's items
        (``remora.dynamics.padded``), as ``Int``.  ``lead``: True when every row's lanes taken
        are known to lead it (their ranks are their positions), False when known not to, None
        when not known (a tracing backend may decide at run time)."""
        if lead:
            return self.broadcast_to(self.reshape(self.arange(lanes.shape[1]), (1, -1)), lanes.shape)
        return self.maximum(self.cumulative_sum(self.astype(lanes, "Int"), axis=1) - 1, self.asarray(0, "Int"))

    def cond(self, pred, if_true: Callable[[], Array], if_false: Callable[[], Array]) -> Array:
        """``if_true()`` if the Bool scalar ``pred`` holds, else ``if_false()`` (both make arrays of
        one shape and type): a tracing backend traces both and the compiled function runs one."""
        return if_true() if bool(pred) else if_false()

    def bounded(self, x: Array, lo: int, hi: int) -> Array:
        """``x``, known to hold only atoms within ``lo … hi``: a tracing backend remembers it, so
        a check that follows from the bounds (``index`` at a padded box's positions) need not be
        compiled (:meth:`bounds`)."""
        return x

    def bounds(self, x: Array) -> tuple[int, int] | None:
        """The bounds :meth:`bounded` recorded for ``x`` while tracing, or None."""
        return None

    def tiled_factor(self, x: Array, width: int) -> tuple[Array, Array] | None:
        """``(a, v)`` when ``x`` (1-D) is known, while tracing, to be ``a * tile(v)``: ``a`` times the
        vector ``v`` of ``width`` atoms repeated along it (``x`` by rows of ``len(v)``: ``a``'s rows times ``v``) —
        what makes the sum of each row a matrix–vector product (spec D48).  Asking checks, at run
        time, what the product may assume (a Float ``v`` finite: a masked lane's 0 × ``v`` is 0).
        Eagerly, None."""
        return None

    def remade(self, x: Array) -> Array:
        """``x`` made again where it is asked for, while tracing, when the compiled function makes
        it from known operands (a triangle's flags): inside a ``cond`` branch, then not an operand
        of the ``cond``, written out in full.  Otherwise (and eagerly) ``x`` itself."""
        return x

    def known_lead(self, lanes: Array) -> bool | None:
        """Whether every row of the 2-D Bool ``lanes`` has its trues leading it, when that is known
        while tracing (flags the compiled function computes from known operands); else None."""
        return None

    def staged(self, x: Array) -> Array:
        """``x`` as something the compiled function computes rather than a constant of it: a
        known array that is large and whose consequences (a cumulative sum, a gather by it) would
        otherwise be folded into larger constants at compile time.  Eagerly, ``x`` itself."""
        return x

    def tracing(self) -> bool:
        """Whether this thread is tracing an evaluation for compilation (:meth:`compile`): values
        may then be placeholders whose atoms are not known yet."""
        return False

    def untraceable(self, construct: str) -> None:
        """Called before ``construct`` (an effect, such as ``read-nums``) does what a compiled
        function cannot repeat: a tracing backend abandons the trace and runs the evaluation
        eagerly instead (spec D48); others do nothing."""

    def compile(self, key: Any, run: Callable[[dict], Any], inputs: dict) -> Any:
        """``run(inputs)`` — the evaluation of a form, a program or an application, as a function
        of its input arrays (by name).  A compiling backend traces ``run`` once per ``key`` (an
        erased node) and input signature (dtypes and shapes) into one compiled function and
        calls that; ``run`` must read nothing that changes between calls but ``inputs``.  The
        engine that ``run`` drives is not this seam's business: any engine whose decisions
        depend on shapes only can be traced."""
        return self.compiled(key, inputs)(run, inputs)

    def compiled(self, key: Any, inputs: dict) -> Callable[[Callable[[dict], Any], dict], Any]:
        """What :meth:`compile` calls for ``key`` at the signature of ``inputs``: ``entry(run,
        inputs)`` is ``run(inputs)``, compiled by a compiling backend.  A caller that has seen a
        signature may keep its entry and call it with later inputs of the same dtypes and
        shapes, skipping the lookup (the API does: spec D48, "A compiled call")."""
        return _run

    def settle(self, x: Array, like: Array | None = None) -> Array:
        """A loop's state between two steps (``while``'s running cells, what it has finished), as
        the next step should start from it: a lazy backend bounds its graph here (Dask persists
        state that has grown, so a loop of ``n`` steps does not recompute all earlier steps at
        every check); an eager backend returns ``x``.  ``like``: the state the loop began with."""
        return x

    def require(self, ok: Array, message: str, culprits: Sequence[Array], fail: Callable[[str], Any]) -> None:
        """A run-time check: every atom of the Bool array ``ok`` must be true.  Where one is not,
        ``fail`` is called with ``message``, its ``{}`` placeholders filled with the atoms of
        ``culprits`` (arrays broadcastable to ``ok``'s shape) at the first such position
        (row-major).  An eager backend checks at once; a tracing one may check when the
        computation runs, and must then report the same message."""
        raise NotImplementedError


def _run(run: Callable[[dict], Any], inputs: dict) -> Any:
    """:meth:`Backend.compiled` of a backend that does not compile: ``run`` itself."""
    return run(inputs)
