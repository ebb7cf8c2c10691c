"""Z3 for what canonical forms cannot do: counterexamples and (later) instantiation.

Canonical forms decide every hypothesis-free index equality (paper §2.2), so a
well-typed program never needs z3 and never imports it.  When an equality,
suffix or prefix question comes out *false*, z3 finds an assignment of the
index variables under which the two sides differ, for the error message.

Encoding (``../shared/notes.md`` §2): a Dim is an ``Int`` with ``≥ 0``; a Shape is
a ``Seq(Int)`` whose elements are ``≥ 0``; ``(Shp a b)`` is
``Concat(Unit(a), Unit(b))``; ``++`` is ``Concat``.  A fresh solver per question (so an answer
depends only on the question), and answers memoised on the canonical forms.

z3's Python objects all live in one z3 context, which is not thread-safe: two threads using it
at once crash the process.  So every use of z3 — the lazy import, building terms, solving, and
dropping the objects afterwards — happens under one lock (:func:`_serialised`); the answers are
plain Python values, so nothing of z3 escapes it.

Bounded work: every question, and every top-level form (see :func:`deadline`), has a
wall-clock budget shared by all its z3 checks; each check gets what is left as its timeout,
and none starts once it is spent.  The least assignment is found by our own search over
plain ``Solver`` checks rather than by z3's ``Optimize``: its lexicographic objectives
ignore the timeout (15–23 s for 120 variables with a 2 s one) and it warns about
quantified constraints.  z3's warnings are switched off at import: they would reach the
user's terminal.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
from ..records import factory, record
from typing import Any, Callable, Iterator

from .indices import Dim, Index, Shape, Var, free_vars, show_value_of_index

QUESTION_SECONDS = 2.0  # all the z3 work of one question (a counterexample, an enumeration)
FORM_SECONDS = 6.0  # all the z3 work of one top-level form


class Undecided(Exception):
    """z3 could not answer within the budget (or answered ``unknown``)."""


@record
class SolverStats:
    """How often z3 was consulted (reported by the benchmarks)."""

    queries: int = 0
    cache_hits: int = 0
    imported: bool = False


stats = SolverStats()


@record
class _Z3:
    z3: Any
    consts: dict = factory(dict)


_state: _Z3 | None = None
_cache: dict[tuple, dict[Var, object] | None] = {}
_lock = threading.RLock()


def _serialised(fn: Callable) -> Callable:
    """Run ``fn`` holding the z3 lock, and let go of every z3 object it made before releasing it.

    The z3 objects are ``fn``'s locals, freed (which calls into z3) when its frame ends: that is
    inside the lock, since the frame ends before this wrapper's ``with`` does.  An exception's
    traceback would keep the frame — and the objects — alive past the lock, so its frames are
    cleared first.
    """

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with _lock:
            try:
                return fn(*args, **kwargs)
            except BaseException as exc:
                import traceback  # (only here: a well-typed program never needs it)

                traceback.clear_frames(exc.__traceback__)
                raise

    return wrapper


@_serialised
def _get() -> _Z3:
    global _state
    if _state is None:
        import z3  # lazy: ~50 ms and ~30 MB, paid only when an index question is false

        z3.set_param("warning", False)  # z3 prints its warnings itself, on the user's terminal
        _state = _Z3(z3)
        stats.imported = True
    return _state


def z3_loaded() -> bool:
    return _state is not None


def _ordered(variables) -> list[Var]:
    return sorted(variables, key=lambda v: (v.name, v.serial))


# ---------------------------------------------------------------------------
# Budgets

_local = threading.local()  # each thread's stack of deadlines (monotonic seconds)


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Bound all z3 work inside (also usable as a decorator); nested budgets only shorten it."""
    stack = _local.__dict__.setdefault("deadlines", [])
    stack.append(time.monotonic() + seconds)
    try:
        yield
    finally:
        stack.pop()


def form_budget(method: Callable) -> Callable:
    """Decorate the checking of one top-level form: all its z3 work shares ``FORM_SECONDS``."""

    @functools.wraps(method)
    def bounded(*args, **kwargs):
        with deadline(FORM_SECONDS):
            return method(*args, **kwargs)

    return bounded


def _remaining_ms() -> int:
    stack = _local.__dict__.get("deadlines") or []
    if not stack:
        return int(QUESTION_SECONDS * 1000)
    return int((min(stack) - time.monotonic()) * 1000)


def _check(solver) -> bool:
    """``solver.check()`` within the budget: True for sat, False for unsat, else :class:`Undecided`."""
    z3 = _get().z3
    left = _remaining_ms()
    if left <= 0:
        raise Undecided()
    solver.set("timeout", left)
    stats.queries += 1
    answer = solver.check()
    if answer == z3.unknown:
        raise Undecided()
    return answer == z3.sat


# ---------------------------------------------------------------------------
# Encoding


def _const(st: _Z3, v: Var):
    c = st.consts.get(v)
    if c is None:
        z3 = st.z3
        name = f"{v.name}!{v.serial}"
        c = z3.Int(name) if v.sort == "Dim" else z3.Const(name, z3.SeqSort(z3.IntSort()))
        st.consts[v] = c
    return c


def _dim(st: _Z3, d: Dim):
    z3 = st.z3
    term = z3.IntVal(d.const)
    for v, c in d.terms:
        term = term + c * _const(st, v)
    return term


def _shape(st: _Z3, s: Shape):
    z3 = st.z3
    parts = []
    for item in s.items:
        parts.append(_const(st, item) if isinstance(item, Var) else z3.Unit(_dim(st, item)))
    if not parts:
        return z3.Empty(z3.SeqSort(z3.IntSort()))
    return parts[0] if len(parts) == 1 else z3.Concat(*parts)


def _domain(st: _Z3, variables: set[Var], bound: int | None) -> list:
    """Every Dim is a natural, every Shape a sequence of naturals (optionally small ones)."""
    z3 = st.z3
    out = []
    for v in _ordered(variables):  # a fixed order: z3's answers must not depend on set order
        c = _const(st, v)
        if v.sort == "Dim":
            out.append(c >= 0)
            if bound is not None:
                out.append(c <= bound)
        else:
            i = z3.Int(f"i!{v.serial}")
            lo = z3.And(i >= 0, i < z3.Length(c))
            out.append(z3.ForAll([i], z3.Implies(lo, c[i] >= 0)))
            if bound is not None:
                out.append(z3.Length(c) <= 2)
                out.append(z3.ForAll([i], z3.Implies(lo, c[i] <= bound)))
    return out


def _model_value(st: _Z3, model, v: Var):
    z3 = st.z3
    value = model.eval(_const(st, v), model_completion=True)
    if v.sort == "Dim":
        return value.as_long()
    length = model.eval(z3.Length(_const(st, v)), model_completion=True).as_long()
    return tuple(model.eval(value[i], model_completion=True).as_long() for i in range(length))


def _find(variables: set[Var], build: Callable[[_Z3], Any]) -> dict[Var, object] | None:
    """An assignment of ``variables`` satisfying ``build``'s formula, small values first, or None
    if there is none (:class:`Undecided` if z3 cannot tell within the budget).

    A fresh solver each time (only error messages ask): the answer then depends only on the
    question, never on what an incremental solver learnt from earlier ones.
    """
    st = _get()
    with deadline(QUESTION_SECONDS):
        for bound in (3, None):
            solver = st.z3.Solver()
            solver.add(*_domain(st, variables, bound))
            solver.add(build(st))
            model = _least_model(st, solver, variables)
            if model is not None:
                return {v: _model_value(st, model, v) for v in _ordered(variables)}
    return None


def _least_model(st: _Z3, solver, variables: set[Var]):
    """A model of ``solver`` with the least values, variable by variable in name order (a Dim's
    value, a Shape's length), or None if unsatisfiable: the same answer whatever z3's search.

    Each variable's least value is found by bisection below the current model's value; most
    variables are already 0 in the model and cost no check.
    """
    if not _check(solver):
        return None
    model = solver.model()
    for v in _ordered(variables):
        c = _const(st, v)
        measure = c if v.sort == "Dim" else st.z3.Length(c)
        low, high = 0, model.eval(measure, model_completion=True).as_long()
        while low < high:
            mid = (low + high) // 2
            solver.push()
            solver.add(measure <= mid)
            if _check(solver):
                model = solver.model()
                high = model.eval(measure, model_completion=True).as_long()
            else:
                low = mid + 1
            solver.pop()
        solver.add(measure == high)
    return model


@_serialised
def _memo(key: tuple, variables: set[Var], build) -> dict[Var, object] | None:
    if key in _cache:
        stats.cache_hits += 1
        return _cache[key]
    try:
        result = _find(variables, build)
    except Undecided:  # out of budget: no counterexample now (and none remembered)
        return None
    _cache[key] = result
    return result


# ---------------------------------------------------------------------------
# Questions asked by the typechecker's error messages


def differ(a: Index, b: Index) -> dict[Var, object] | None:
    """An assignment under which ``a`` and ``b`` are different, or None if none was found."""
    variables = free_vars(a) | free_vars(b)

    def build(st):
        if isinstance(a, Dim):
            return _dim(st, a) != _dim(st, b)  # type: ignore[arg-type]
        return _shape(st, a) != _shape(st, b)  # type: ignore[arg-type]

    return _memo(("differ", a, b), variables, build)


def not_suffix(cell: Shape, whole: Shape) -> dict[Var, object] | None:
    """An assignment under which ``cell`` is not a suffix of ``whole``."""
    variables = free_vars(cell) | free_vars(whole)
    return _memo(
        ("suffix", cell, whole), variables, lambda st: st.z3.Not(st.z3.SuffixOf(_shape(st, cell), _shape(st, whole)))
    )


def not_prefix_related(a: Shape, b: Shape) -> dict[Var, object] | None:
    """An assignment under which neither of ``a``, ``b`` is a prefix of the other."""
    variables = free_vars(a) | free_vars(b)

    def build(st):
        z3 = st.z3
        x, y = _shape(st, a), _shape(st, b)
        return z3.Not(z3.Or(z3.PrefixOf(x, y), z3.PrefixOf(y, x)))

    return _memo(("prefix", a, b), variables, build)


def show_assignment(assignment: dict[Var, object]) -> str:
    """``n = 0, s = (Shp 1)``, variables in name order."""
    items = sorted(assignment.items(), key=lambda kv: (kv[0].name, kv[0].serial))
    return ", ".join(f"{v.name} = {show_value_of_index(val)}" for v, val in items)


@_serialised
def natural_solutions(equations, variables: set[Var], limit: int) -> list[dict[Var, int]]:
    """Up to ``limit`` different assignments of naturals to ``variables`` satisfying ``a = b`` for
    each equation, the least first (in name order: always the same ones).

    Raises :class:`Undecided` when z3 cannot tell within the budget: a caller must not read
    fewer answers than ``limit`` as "there are no more".
    """
    st = _get()
    z3 = st.z3
    found: list[dict[Var, int]] = []
    with deadline(QUESTION_SECONDS):
        while len(found) < limit:
            solver = z3.Solver()
            solver.add(*_domain(st, variables, None))
            for a, b in equations:
                solver.add(_dim(st, a) == _dim(st, b))
            for assignment in found:
                solver.add(z3.Or(*[_const(st, v) != value for v, value in assignment.items()]))
            model = _least_model(st, solver, variables)
            if model is None:
                break
            found.append({v: _model_value(st, model, v) for v in _ordered(variables)})
    return found
