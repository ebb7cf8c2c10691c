"""A recording made shorter before it is written out: what the engine does that a plan need not.

The whole-frame engine is written for every shape; once the shapes are fixed, many of its calls
do nothing — a ``permute_dims`` by the identity permutation, a ``reshape`` or ``broadcast_to``
to the shape the array already has, a ``compact`` of an array with no broadcast axis — and some
compute what nothing reads (the engine's bookkeeping of frames it then decides not to use).
Each costs a Python call per replay: at the smallest sizes that is most of a plan's time.

The pass rewrites a :class:`~.trace.Recording`'s steps without touching a value or a dtype:

- an identity view becomes its operand (the later steps use the operand's name);
- a ``compact`` of ``broadcast_to(v, S)`` that keeps all of ``v``'s items is ``v`` with unit
  axes added (a ``reshape``), so the data-dependent shape guard the ``compact`` needed is gone;
- a ``permute_dims`` that only moves axes of length 1 is a ``reshape``; a ``reshape`` of a
  ``reshape`` is one ``reshape`` of the first operand (when nothing in the plan writes in place:
  a folded chain may share memory where the chain had a copy);
- a ``select_items`` by a mask folded into the plan (a triangle's rows) is a gather at the
  mask's positions, found once (``compress`` finds them again on every call);
- a ``reduce`` by an exactly associative and commutative operation (Int or Bool ``add``,
  ``multiply``, ``minimum``, ``maximum``, ``logical_and``/``or``/``xor``) of a ``concat`` along
  the same axis is the operation over each part's reduction: the joined array (a histogram's
  zero row appended to a 10⁶-row matrix: 512 MB) is never made.  Float is left alone: its sum's
  rounding follows the items' order and grouping (D22);
- a call made again on the same operands (the program's ``(* x x)`` written twice) is made once,
  when nothing in the plan writes in place;
- a call whose result nothing reads (no later step, no guard, no check, not the result) is
  dropped — backend calls are pure except the writing ones (``scatter``, item assignment);
  kept all the same: a call with a shape guard (the trace decided something on that shape, so
  the guard must run even if the value is not used again) and a call whose function says it
  has effects (``effects``: a ``while``/``if`` site, whose cells' run-time checks may fail).

Guards, run-time checks and loops are always kept.  A loop's step is simplified the same way.
"""

from __future__ import annotations

from typing import Any

from .trace import LoopIndex, Recording, Step, Sym

#: backend calls that write into an argument (never dropped; they stop chain folding)
_WRITES = {"scatter"}


def simplify(steps: list[Step], result: Any, xp) -> tuple[list[Step], Any]:
    """(the steps, the result) with identity views, foldable chains and dead calls removed
    (``xp``: the backend the plan calls)."""
    alias: dict[str, Sym] = {}
    pure = not _writes(steps)
    steps = _rewrite(steps, alias, {}, xp, pure, {} if pure else None)
    result = _subst(result, alias)
    return _live(steps, _names(result)), result


def _writes(steps: list[Step]) -> bool:
    for step in steps:
        if step.kind == "setitem" or step.label in _WRITES:
            return True
        if step.kind == "loop" and _writes(step.extra[0].steps):
            return True
    return False


# ---------------------------------------------------------------------------
# rewriting


def _rewrite(steps: list[Step], alias: dict, views: dict, xp, folding: bool, made: dict | None) -> list[Step]:
    """The steps with identity views dropped (``alias``: name → the Sym now standing for it) and
    chains of views cut short; ``views``: name → (source, permutation, unit-only) such that the
    array is ``reshape(permute_dims(source, permutation), its shape)`` — a view when unit-only.
    ``made`` (when nothing writes in place): each call made so far by what it computes, so that
    a call repeated on the same operands is made once (the program's ``(* x x)`` written twice)."""
    out: list[Step] = []
    joined: dict[str, tuple] = {}  # a concat's name → (its parts, its axis)
    for step in steps:
        args = _subst(step.args, alias)
        if step.kind == "loop":
            sub, counter, acc, result = step.extra
            inner = Recording(sub.tracer, sub.params)
            inner.steps = _rewrite(sub.steps, alias, dict(views), xp, folding, None if made is None else dict(made))
            out.append(Step("loop", step.label, step.fn, args, step.outs,
                            extra=(inner, counter, acc, _subst(result, alias))))
            continue
        new = Step(step.kind, step.label, step.fn, args, step.outs, step.shape_guard, step.extra)
        if step.label == "select_items" and step.kind == "call" and _constant_mask(args):
            new = _select_at_positions(new, xp)
        if step.kind == "call" and step.label in ("concat", "reduce"):
            new = _reduce_of_parts(new, joined, xp)
        if step.kind == "call" and type(step.outs) is Sym and args and type(args[0]) is Sym:
            new = _view(new, views, xp, folding)
            if type(new) is Sym:
                alias[step.outs.name] = new
                continue
        if made is not None and new.kind == "call" and new.label not in _FRESH and not new.shape_guard:
            key = _key((new.label, new.fn, new.args))
            if key is not None:
                first = made.get(key)
                if first is not None and _same_kind(first, new.outs):
                    for a, b in zip(_tuple(new.outs), _tuple(first)):
                        alias[a.name] = b
                    continue
                made[key] = new.outs
        out.append(new)
    return out


#: calls that make a new buffer each time (two are never the same array)
_FRESH = {"empty", "full", "scatter"}


def _tuple(outs) -> tuple:
    return outs if type(outs) is tuple else (outs,)


def _same_kind(a, b) -> bool:
    return len(_tuple(a)) == len(_tuple(b)) and all(
        x.value.shape == y.value.shape and x.value.dtype == y.value.dtype for x, y in zip(_tuple(a), _tuple(b)))


def _key(x: Any):
    """What a call's function and arguments compute, hashable — or None if unsure. Traced arrays
    by name, numbers by their exact spelling (``-0.0`` is not ``0.0``), 0-d constants by dtype and
    bytes, other objects by identity (a plan keeps them alive)."""
    t = type(x)
    if t is Sym:
        return ("s", x.name)
    if t in (tuple, list):
        parts = tuple(_key(y) for y in x)
        return None if any(p is None for p in parts) else (t.__name__, parts)
    if t is slice:
        return _key(("slice", x.start, x.stop, x.step))
    if t in (int, bool, str) or x is None or x is Ellipsis:
        return (t.__name__, x)
    if t is float:
        return ("float", repr(x))
    if t is LoopIndex:
        return ("i", x.loop, x.a, x.b)
    if getattr(x, "shape", None) == () and getattr(x, "dtype", None) is not None and hasattr(x, "tobytes"):
        return ("0d", x.dtype.str, x.tobytes())
    strides = getattr(x, "strides", None)
    if strides is not None and getattr(x, "size", 0) and getattr(x, "dtype", None) is not None \
            and x.dtype.kind in "fiub" and all(st == 0 for st in strides):
        return ("one atom", x.dtype.str, tuple(x.shape), x[(0,) * x.ndim].tobytes())  # (a scalar, broadcast)
    try:
        hash(x)
    except TypeError:
        return ("id", id(x))
    return ("o", x)


def _view(step: Step, views: dict, xp, folding: bool) -> Sym | Step:
    """``step``, or the operand it gives back unchanged (a Sym), or a cheaper step to its value."""
    label, x, out = step.label, step.args[0], step.outs
    shape = tuple(out.value.shape)
    if label in ("reshape", "broadcast_to", "compact") and tuple(x.value.shape) == shape:
        return x  # (a compact with no broadcast axis at trace time: the later steps expect this shape)
    if label == "loop_items" and out.value is x.value:
        return x  # (the backend's items are its arrays' own)
    if label == "broadcast_to":
        views[out.name] = ("broadcast", x)
        return step
    if label == "compact":
        made = views.get(x.name)
        if made is not None and type(made[0]) is str and made[1].value.size == out.value.size:
            # ``compact(broadcast_to(v, S))`` keeping all of ``v``'s items: ``v`` with unit axes
            src, perm, unit = _form(views, made[1])
            return _as_view(step, (src, perm, unit), views, xp, folding, view=True)
        return step
    if label == "permute_dims":
        axes = tuple(step.args[1])
        if axes == tuple(range(len(axes))):
            return x
        src, perm, unit = _form(views, x)
        if not (unit and folding):
            src, perm = x, tuple(range(x.ndim))
        # x's axes longer than 1 are, in order, those of permute_dims(src, perm)
        long_src = [a for a in perm if src.value.shape[a] != 1]
        where = dict(zip([k for k in range(x.ndim) if x.value.shape[k] != 1], long_src))
        order = [where[k] for k in axes if x.value.shape[k] != 1]
        perm = tuple(order + [a for a in range(src.ndim) if src.value.shape[a] == 1])
        return _as_view(step, (src, perm, True), views, xp, folding, view=src is x)
    if label == "reshape":
        src, perm, unit = _form(views, x)
        if not folding:
            src, perm, unit = x, tuple(range(x.ndim)), True
        return _as_view(step, (src, perm, unit and _long(x.value.shape) == _long(shape)), views, xp, folding)
    return step


def _constant_mask(args: tuple) -> bool:
    """Whether a ``select_items`` selects by a mask folded into the plan (a triangle's rows: the
    mask follows from shapes alone) from a traced array."""
    return (len(args) == 2 and type(args[0]) is Sym and type(args[1]) is not Sym
            and getattr(getattr(args[1], "dtype", None), "kind", "") == "b")


def _select_at_positions(step: Step, xp) -> Step:
    """``select_items(x, mask)`` with a constant ``mask`` as a gather at the mask's positions,
    found once, here: selecting by a mask finds them on every call (NumPy's ``compress`` is a
    ``nonzero`` then a ``take``; 79 ms of the triangular workload's 148 at n = 4000, the take
    alone 20 ms).  The shape no longer depends on data: no guard."""
    x, mask = step.args
    cells = (mask.size,) + tuple(x.value.shape[mask.ndim:])
    positions = xp.nonzero(xp.reshape(mask, (-1,)))[0]

    def select_at(x, positions):
        return xp.gather(xp.reshape(x, cells), positions)

    return Step("call", "select_at", select_at, (x, positions), step.outs)


#: operations whose reduction is the same in any grouping and order, on Int and Bool
_EXACT = {"add", "multiply", "minimum", "maximum", "logical_and", "logical_or", "logical_xor"}


def _reduce_of_parts(step: Step, joined: dict, xp) -> Step:
    """A ``reduce`` of a ``concat`` (remembered in ``joined``) as ``op`` over each nonempty
    part's reduction, when that is exactly the same value (see :data:`_EXACT`); else ``step``."""
    if step.label == "concat":
        if type(step.outs) is Sym and len(step.args) == 2 and type(step.args[1]) is int:
            joined[step.outs.name] = step.args
        return step
    if len(step.args) != 3 or type(step.args[1]) is not Sym or step.args[1].name not in joined:
        return step
    op, x, axis = step.args
    parts, along = joined[x.name]
    dtype = x.value.dtype
    if op not in _EXACT or dtype.kind not in "iub" or along != axis or not all(
            type(p) is Sym and p.value.dtype == dtype for p in parts):
        return step
    parts = tuple(p for p in parts if p.value.shape[axis] > 0)
    if not parts or len(parts) == 1 and parts[0].value.shape == x.value.shape:
        return step
    combine = xp.elementwise(op)

    def reduce_parts(*parts):
        value = xp.reduce(op, parts[0], axis)
        for part in parts[1:]:
            value = combine(value, xp.reduce(op, part, axis))
        return value

    return Step("call", "reduce_parts", reduce_parts, parts, step.outs)


def _form(views: dict, x: Sym) -> tuple:
    made = views.get(x.name)
    if made is None or type(made[0]) is str:
        return x, tuple(range(x.ndim)), True
    return made


def _as_view(step: Step, form: tuple, views: dict, xp, folding: bool, view: bool = False) -> Sym | Step:
    """``step``'s value as ``form`` says: its source itself, or one reshape of it (when chains
    may be folded, or ``view``: the reshape only adds or drops unit axes of a view), or ``step``
    itself — remembered as ``form`` for the views made from it next."""
    src, perm, _ = form
    shape = tuple(step.outs.value.shape)
    views[step.outs.name] = form
    if perm == tuple(range(len(perm))) and (folding or view):
        if tuple(src.value.shape) == shape:
            return src
        return Step("call", "reshape", xp.reshape, (src, shape), step.outs)
    return step


def _long(shape: tuple) -> list:
    return [d for d in shape if d != 1]


def _subst(x: Any, alias: dict) -> Any:
    t = type(x)
    if t is Sym:
        return alias.get(x.name, x)
    if t is tuple:
        return tuple(_subst(y, alias) for y in x)
    if t is list:
        return [_subst(y, alias) for y in x]
    if t is slice:
        return slice(_subst(x.start, alias), _subst(x.stop, alias), _subst(x.step, alias))
    return x


# ---------------------------------------------------------------------------
# dead calls


def _live(steps: list[Step], needed: set) -> list[Step]:
    """``steps`` without the pure calls whose results nothing in ``needed`` or later reads."""
    kept: list[Step] = []
    for step in reversed(steps):
        if step.kind == "call" and not _kept(step) and not (_outs(step) & needed):
            continue
        if step.kind == "loop":
            sub, counter, acc, result = step.extra
            inner = Recording(sub.tracer, sub.params)
            inner.steps = _live(sub.steps, _names(result))
            step = Step("loop", step.label, step.fn, step.args, step.outs, extra=(inner, counter, acc, result))
            needed |= _uses(inner.steps) | _names(result)
        needed |= _names(step.args)
        kept.append(step)
    kept.reverse()
    return kept


def _kept(step: Step) -> bool:
    """Whether a call stays even when nothing reads its value: it writes, guards a decision
    the trace took on its shape, or may raise a run-time error."""
    # (a ``compact``'s shape follows its operand's strides, not its values: whatever the trace
    # decided from it computes the same values, and a folded ``compact`` is no longer read)
    guarded = step.shape_guard and step.label != "compact"
    return step.label in _WRITES or guarded or getattr(step.fn, "effects", False)


def _outs(step: Step) -> set:
    outs = step.outs if type(step.outs) is tuple else (step.outs,) if step.outs is not None else ()
    return {o.name for o in outs}


def _uses(steps: list[Step]) -> set:
    names: set = set()
    for step in steps:
        names |= _names(step.args)
        if step.kind == "loop":
            names |= _uses(step.extra[0].steps) | _names(step.extra[3])
    return names


def _names(x: Any) -> set:
    t = type(x)
    if t is Sym:
        return {x.name}
    if t in (tuple, list):
        return set().union(*(_names(y) for y in x)) if x else set()
    if t is slice:
        return _names((x.start, x.stop, x.step))
    return set()
