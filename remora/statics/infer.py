"""Automatic instantiation (contract §4): applying Forall/Pi functions without t-app/i-app.

The quantified variables of the function (and of any polymorphic function passed
as an argument) become unknowns.  Each argument of shape ``ι_a`` must be a frame
followed by a cell matching its parameter; the frame is a prefix of ``ι_a``'s
canonical components, so each argument has a handful of possible frames.  The
search tries total frame length 0, then 1, 2, … and stops at the first length
with a solution: the smallest argument frames, i.e. the function consumes as
much of each argument as it can.  Two different solutions there are an
ambiguity, reported with the ``i-app`` that would pick each — and so is a
solution in which only a function argument's lifting frame (below) would fix
some variable: every frame fits.

Where a function is expected and the given one has smaller cells by a common
frame ``F``, it is wrapped in the λ that applies it over ``F`` (the
rank-polymorphic application the paper already means).

The outcome is recorded in the typed tree as ordinary (``implicit``) ``t-app``/
``i-app`` nodes and wrapper λs, and the application is then checked by the
ordinary T-APP rule — so inference can only ever produce what explicit
instantiation would have meant.
"""

from __future__ import annotations

from ..records import record
from typing import Iterator, Optional

from ..atoms import NUMBERS, RESTRICTED_KINDS
from .conversions import PREFACE, convert, numeric_name
from . import smt
from . import typed as T
from .replay import Layer, Outcome, problem_key, replay
from ..errors import RemoraTypeError
from .indices import SCALAR, Dim, Shape, Var, dim_var, show_index
from .unknowns import (
    IMeta,
    Sol,
    frames_fit,
    has_index_unknowns,
    head,
    index_unknowns,
    least_value,
    settle_pending,
    u_shapes,
    u_types,
    walk,
    walk_index,
    walk_shape,
)
from .types import (
    AtomMeta, TArr, TForall, TFun, TPi, TSigma, TVar, Type, describe_allowed, metas, prune, show_type, subst,
)
from .unify import commit

@record
class Level:
    """One quantifier layer opened into unknowns: ``i`` (Pi, indices) or ``t`` (Forall, types)."""

    kind: str
    vars: tuple[Var, ...]
    unknowns: tuple


def open_quantifiers(t: Type) -> tuple[list[Level], Type]:
    """Peel the Pi/Forall layers off an array-of-abstractions type, variables becoming unknowns.

    The layers are peeled first and the unknowns substituted once, at the end: substituting
    each layer's into everything inside it would copy the inner layers once per layer (the
    unknowns are all new, so one substitution of them all means the same)."""
    levels: list[Level] = []
    unknown_of: dict = {}
    t = prune(t)
    while isinstance(t, TArr) and isinstance(prune(t.atom), (TPi, TForall)):
        quant = prune(t.atom)
        unknowns = tuple(_unknown(v) for v in quant.vars)  # type: ignore[union-attr]
        levels.append(Level("i" if isinstance(quant, TPi) else "t", quant.vars, unknowns))  # type: ignore[union-attr]
        unknown_of.update(zip(quant.vars, unknowns))  # type: ignore[union-attr]
        body = prune(quant.body)  # type: ignore[union-attr]
        if isinstance(body, TVar) and isinstance(unknown_of.get(body.var), Type):
            body = prune(unknown_of[body.var])  # (an Array-kinded variable: its unknown is an array type)
        if not isinstance(body, TArr):
            break
        t = TArr(body.atom, t.shape + body.shape)
    return levels, subst(t, unknown_of)


def _unknown(v: Var):
    if v.sort == "Dim":
        return dim_var(IMeta(v.name, "Dim"))
    if v.sort == "Shape":
        return Shape((IMeta(v.name, "Shape"),))
    if v.sort == "Array":
        return TArr(AtomMeta(None, v.name, display=v.name), Shape((IMeta(v.name, "Shape"),)))
    return AtomMeta(RESTRICTED_KINDS.get(v.sort), v.name, display=v.name)


def needs_inference(fn_type: Type, args: tuple[T.TyExpr, ...]) -> bool:
    """Whether T-APP alone cannot type this application: something to instantiate or to lift."""
    fn_type = prune(fn_type)
    atom = prune(fn_type.atom) if isinstance(fn_type, TArr) else None
    if isinstance(atom, (TPi, TForall)):
        return True
    if not isinstance(atom, TFun) or len(atom.params) != len(args):
        return False
    for param, arg in zip(atom.params, args):
        p, a = prune(param), prune(arg.type)
        if not (isinstance(p, TArr) and isinstance(a, TArr)):
            continue
        if isinstance(prune(a.atom), (TPi, TForall)) and not isinstance(prune(p.atom), (TPi, TForall)):
            return True
        if isinstance(prune(p.atom), TFun) and isinstance(prune(a.atom), TFun):
            if next(u_types(p.atom, a.atom, Sol()), None) is None:
                return True
    return False


@record
class Found:
    """One way to instantiate the application."""

    sol: Sol
    frames: list[Shape]
    lifts: list[Optional[Shape]]


class Application:
    """The inference problem of one application ``(f a ...)``."""

    def __init__(self, e, fn: T.TyExpr, args: tuple[T.TyExpr, ...], name: str):
        self.e, self.fn, self.args, self.name = e, fn, args, name
        self.levels, callee = open_quantifiers(fn.type)
        self.callee = prune(callee)
        fun = prune(self.callee.atom) if isinstance(self.callee, TArr) else None
        if not isinstance(fun, TFun):
            raise RemoraTypeError(
                f"expected an array of functions in function position, but {name} has type {show_type(fn.type)}",
                fn.span,
            )
        if len(fun.params) != len(args):
            raise RemoraTypeError(
                f"{name} takes {len(fun.params)} argument{'s' * (len(fun.params) != 1)}, but is given {len(args)}",
                e.span,
            )
        self.fun = fun
        self._own: set | None = None  # (the unknown atom types of its levels, once asked for)
        self.arg_levels: list[list[Level]] = []
        self.arg_types: list[Type] = []
        for arg, param in zip(args, fun.params):
            wants_polymorphic = isinstance(prune(param), TArr) and isinstance(prune(prune(param).atom), (TPi, TForall))
            opened = _is_polymorphic(arg.type) and not wants_polymorphic
            levels, t = open_quantifiers(arg.type) if opened else ([], prune(arg.type))
            self.arg_levels.append(levels)
            self.arg_types.append(t)

    # --- search -------------------------------------------------------------------

    def solve(self) -> Found:
        # Each argument's frame lengths that fit on their own: the only ones worth trying together.
        self.options = [self._fitting_lengths(i) for i in range(len(self.args))]
        if any(not o for o in self.options):
            raise self._no_fit()
        totals = {0}
        for lengths in self.options:
            totals = {t + k for t in totals for k in lengths}
        incomplete: list[tuple[Found, list[str]]] = []
        for cost in sorted(totals):
            found_here: list[Found] = []
            for found in self._paths(0, Sol(), [], [], cost):
                if any(f is not None and has_index_unknowns(f) for f in found.lifts):
                    # Nothing but the lifting frame fixes some variable: every frame fits (D18).
                    raise self._lifting_ambiguous(found)
                missing = self._unsolved(found.sol)
                if missing:
                    incomplete.append((found, missing))
                    continue
                found_here.append(found)
            if found_here:
                complete = found_here
                if len(found_here) > 1:  # the same instantiation found by different paths counts once
                    unique: dict[str, Found] = {}
                    for found in found_here:
                        unique.setdefault(self._key(found), found)
                    complete = list(unique.values())
                # Function arguments too consume as much as they can: the smallest lifting frames.
                least = min(_lift_cost(f) for f in complete)
                best = [f for f in complete if _lift_cost(f) == least]
                if len(best) > 1:
                    raise self._ambiguous(best)
                return best[0]
        if incomplete:
            names = ", ".join(dict.fromkeys(incomplete[0][1]))
            raise RemoraTypeError(
                f"cannot infer {names} for {self.name}: the arguments do not determine "
                f"{'it' if ',' not in names else 'them'}; write the instantiation with i-app/t-app",
                self.fn.span,
            )
        raise self._no_fit()

    def _paths(self, i: int, sol: Sol, frames: list, lifts: list, budget: int) -> Iterator[Found]:
        if i == len(self.args):
            if budget:
                return
            for s in settle_pending(sol):
                walked = [walk_shape(f, s) for f in frames]
                if frames_fit([walk_shape(self.callee.shape, s)] + walked):
                    yield Found(s, walked, [None if f is None else walk_shape(f, s) for f in lifts])
            return
        for s, frame, lift in self.match_arg(i, sol, budget, self.options[i]):
            yield from self._paths(i + 1, s, frames + [frame], lifts + [lift], budget - len(frame.items))

    def match_arg(
        self, i: int, sol: Sol, max_frame: int, lengths: Optional[list[int]] = None
    ) -> Iterator[tuple[Sol, Shape, Optional[Shape]]]:
        """Each (solution, frame, lifting frame) fitting argument ``i`` to its parameter
        (with a frame of at most ``max_frame`` components, and one of ``lengths`` if given)."""
        param = head(self.fun.params[i], sol)
        arg = head(self.arg_types[i], sol)
        if not (isinstance(param, TArr) and isinstance(arg, TArr)):
            for s in u_types(param, arg, sol):
                yield s, SCALAR, None
            return
        items = walk_shape(arg.shape, sol).items
        for k in lengths if lengths is not None else range(len(items) + 1):
            if k > min(max_frame, len(items)):
                break
            for s2, lift in self._cell_fits(param, arg, items, k, sol):
                yield s2, Shape(items[:k]), lift

    @staticmethod
    def _cell_fits(param: TArr, arg: TArr, items: tuple, k: int, sol: Sol) -> Iterator[tuple[Sol, Optional[Shape]]]:
        """Each (solution, lifting frame) with which the argument's cell after a frame of ``k``
        components fits the parameter."""
        cell = Shape(items[k:])
        for s1 in u_shapes(param.shape, cell, sol):
            yield from _u_function_atoms(param.atom, arg.atom, s1)

    def _fitting_lengths(self, i: int) -> list[int]:
        """The frame lengths with which argument ``i`` alone fits its parameter (as
        :meth:`match_arg` would find them: one solution for each is enough to know)."""
        sol = Sol()
        param = head(self.fun.params[i], sol)
        arg = head(self.arg_types[i], sol)
        if not (isinstance(param, TArr) and isinstance(arg, TArr)):
            return [0] if next(u_types(param, arg, sol), None) is not None else []
        items = walk_shape(arg.shape, sol).items
        return [k for k in range(len(items) + 1) if next(self._cell_fits(param, arg, items, k, sol), None) is not None]

    def _all_levels(self) -> list[Level]:
        return self.levels + [lv for lvs in self.arg_levels for lv in lvs]

    def _own_atoms(self) -> set:
        own = set()
        for level in self._all_levels():
            for u in level.unknowns:
                own.add(u.atom if isinstance(u, TArr) else u)
        return own

    def _unsolved(self, sol: Sol) -> list[str]:
        if self._own is None:
            self._own = self._own_atoms()
        own = self._own
        return [v.name for level in self._all_levels() for v, u in zip(level.vars, level.unknowns) if _has_unknowns(u, sol, own)]

    def _key(self, found: Found) -> str:
        parts = [self.instantiation_text(found.sol)]
        parts += [str(f) for f in found.lifts if f is not None]
        parts += [str(f) for f in found.frames]
        return " ".join(parts)

    def instantiation_text(self, sol: Sol, subject: str | None = None) -> str:
        text = _apply_levels(subject or _short(self.name), self.levels, sol)
        for i, levels in enumerate(self.arg_levels):
            if levels:
                text += f" with argument {i + 1} as " + _apply_levels(f"<argument {i + 1}>", levels, sol)
        return text

    # --- failures -------------------------------------------------------------------

    def _ambiguous(self, options: list[Found]) -> RemoraTypeError:
        a, b = options[0], options[1]
        text_a, text_b = self.instantiation_text(a.sol), self.instantiation_text(b.sol)
        if text_a == text_b:
            text_a += f" with argument frames {' '.join(map(str, a.frames))}"
            text_b += f" with argument frames {' '.join(map(str, b.frames))}"
        return RemoraTypeError(
            f"ambiguous application of {self.name}: both {text_a} and {text_b} fit with the smallest "
            "argument frames; write the i-app that picks one",
            self.e.span,
        )

    def _lifting_ambiguous(self, found: Found) -> RemoraTypeError:
        """A solution whose lifting frame is still unknown stands for one instantiation per frame:
        name two of them (the frame's unknowns at their least, and one of them a step larger)."""
        i = next(k for k, f in enumerate(found.lifts) if f is not None and has_index_unknowns(f))
        bumped = index_unknowns(found.lifts[i])[0]
        a, b = (self.instantiation_text(self._grounded(found.sol, bump)) for bump in (None, bumped))
        if a == b:
            a += f" with argument {i + 1} lifted over {_grounded_shape(found.lifts[i], None)}"
            b += f" with argument {i + 1} lifted over {_grounded_shape(found.lifts[i], bumped)}"
        return RemoraTypeError(
            f"ambiguous application of {self.name}: both {a} and {b} fit with the smallest argument "
            f"frames (argument {i + 1} is a function that can be lifted over any frame, and nothing "
            "else decides which); write the i-app that picks one",
            self.e.span,
        )

    def _grounded(self, sol: Sol, bump: Optional[IMeta]) -> Sol:
        """``sol`` with every unknown index left in the application at its least value (a Dim 0,
        a Shape empty), except ``bump`` one larger (1, or ``(Shp 1)``)."""
        metas: list[IMeta] = []
        for level in self._all_levels():
            for u in level.unknowns:
                value = _resolved(u, sol)
                if isinstance(value, (Dim, Shape)):
                    metas += index_unknowns(Shape((value,)) if isinstance(value, Dim) else value)
                elif isinstance(value, TArr):
                    metas += index_unknowns(value.shape)
        for m in dict.fromkeys(metas + ([bump] if bump is not None else [])):
            sol = sol.with_index(m, least_value(m, m is bump))
        return sol

    def _no_fit(self) -> RemoraTypeError:
        fits = []
        for i in range(len(self.args)):
            options = list(self.match_arg(i, Sol(), 10**6))
            if not options:
                return RemoraTypeError(self._argument_misfit(i), self.args[i].span)
            fits.append(options[0])
        from .conflicts import explain_conflict  # (only for a failure's message)

        conflict = explain_conflict(self)
        if conflict is not None:
            return conflict
        details = "; ".join(
            f"argument {i + 1} (shape {_shape_text(self.arg_types[i])}) fits with frame {frame}"
            + (f" when {self._bindings(s)}" if self._bindings(s) else "")
            for i, (s, frame, _) in enumerate(fits)
        )
        return RemoraTypeError(
            f"no instantiation of {self.name} fits all its arguments at once: {details}; "
            "but these disagree, or their frames are not prefix-compatible",
            self.e.span,
        )

    def _argument_misfit(self, i: int) -> str:
        param, arg = self.fun.params[i], self.arg_types[i]
        names = _distinct_names(param, arg)
        msg = (
            f"argument {i + 1} of {self.name} has type {show_type(arg)}, but {self.name} takes "
            f"{self.show(param, names)}"
        )
        p, a = prune(param), prune(arg)
        if isinstance(p, TArr) and isinstance(a, TArr):
            pa, aa = prune(p.atom), prune(a.atom)
            if isinstance(pa, TFun) and isinstance(aa, TFun):
                if not any(True for _ in _u_function_atoms(pa, aa, Sol())):
                    overloaded = {m for m in metas(aa) if m.allowed}  # (an overloaded primitive's `x`)
                    where = "".join(f" ({m.display or 'x'} is {describe_allowed(m)})" for m in overloaded)
                    typed = f"has type {show_type(arg)}"
                    return msg.replace(typed, typed + where, 1) + (
                        ": the function given does not fit the function expected, at any frame")
            elif next(u_types(pa, aa, Sol()), None) is None:
                what = self.show(pa)
                if isinstance(pa, AtomMeta) and pa.allowed:
                    what += f" ({pa.display or 'it'} is {describe_allowed(pa)})"
                return msg + f": atoms of type {show_type(aa)} cannot be {what}" + _promotion(p, a)
            return msg + f": no frame of {a.shape} leaves a cell of the form {show_index(p.shape, names)}"
        return msg

    def show(self, t: Type, names: Optional[dict] = None) -> str:
        """``t`` (a parameter's type) as the signature writes it: an unknown array type named
        as its ``Array`` variable (``T``), not as ``(Arr T T)``."""
        arrays = {}
        for level in self._all_levels():
            for v, u in zip(level.vars, level.unknowns):
                if v.sort == "Array":
                    arrays[u] = TVar(v)
        return show_type(_replace_types(t, arrays), names)

    def _bindings(self, sol: Sol) -> str:
        out = []
        own = self._own_atoms()
        for level in self.levels:
            for v, u in zip(level.vars, level.unknowns):
                if not _has_unknowns(u, sol, own) and not isinstance(walk(u, sol), AtomMeta):
                    out.append(f"{v.name} = {_show_value(u, sol)}")
        return ", ".join(out)

    # --- elaboration ----------------------------------------------------------------------

    def outcome(self, found: Found) -> Outcome:
        """Commit the solution; what it instantiates each quantifier layer with, and the lifts."""
        commit(found.sol)
        return Outcome(
            _levels_outcome(self.levels, found.sol),
            tuple(_levels_outcome(levels, found.sol) for levels in self.arg_levels),
            tuple(found.lifts),
        )


#: how many outcomes a checker remembers (see :func:`elaborate_application`)
SOLVED_LIMIT = 10_000


def elaborate_application(e, fn: T.TyExpr, args: tuple[T.TyExpr, ...], name: str, solved: Optional[dict] = None):
    """The instantiated function array and arguments for ``(fn args ...)``.

    ``solved`` remembers outcomes by problem (decisions.md D41): an application of a function
    array of one type to arguments of given types is instantiated the same way whenever all
    those types are ground — nothing in them can change — so a checker searches once for each
    such problem and replays the outcome after that."""
    problem = problem_key(fn, args) if solved is not None else None
    key, weak = problem if problem is not None else (None, ())
    outcome = solved.get(key) if key is not None else None  # type: ignore[union-attr]
    if outcome is not None:
        outcome = outcome.concrete(weak)
    else:
        application = Application(e, fn, args, name)
        try:
            found = application.solve()
        except smt.Undecided:
            raise RemoraTypeError(
                f"cannot decide how to instantiate {name}: its index equations could not be solved in the "
                "time allowed; write the instantiation with i-app/t-app",
                e.span,
            ) from None
        outcome = application.outcome(found)
        kept = outcome.generic(weak) if key is not None else None
        if kept is not None and kept.replayable():
            if len(solved) >= SOLVED_LIMIT:  # type: ignore[arg-type]
                solved.clear()  # type: ignore[union-attr]
            solved[key] = kept  # type: ignore[index]
    return replay(fn, args, outcome)


# ---------------------------------------------------------------------------
# Helpers


def _distinct_names(param: Type, arg: Type) -> dict:
    """Display names for the function's unknowns that differ from the argument's own variables
    (the prelude's ``n`` is not the user's ``n``)."""
    from .types import free_vars

    taken = {v.name for v in free_vars(arg) if not isinstance(v, IMeta)}
    names = {}
    for v in free_vars(param):
        if isinstance(v, IMeta) and v.name in taken:
            k = 1
            while f"{v.name}.{k}" in taken:
                k += 1
            names[v] = f"{v.name}.{k}"
    return names


def _u_function_atoms(param_atom: Type, arg_atom: Type, sol: Sol) -> Iterator[tuple[Sol, Optional[Shape]]]:
    """Atom types equal — or, for functions, equal up to a common lifting frame ``F`` of all cells."""
    p, a = head(param_atom, sol), head(arg_atom, sol)
    if not (isinstance(p, TFun) and isinstance(a, TFun) and len(p.params) == len(a.params)):
        for s in u_types(p, a, sol):
            yield s, None
        return
    lift = Shape((IMeta("F", "Shape"),))
    pairs = list(zip(p.params + (p.result,), a.params + (a.result,)))
    yield from _lifted_pairs(pairs, lift, sol)


def _lifted_pairs(pairs, lift: Shape, sol: Sol) -> Iterator[tuple[Sol, Shape]]:
    if not pairs:
        yield sol, lift
        return
    (want, have), rest = pairs[0], pairs[1:]
    want, have = head(want, sol), head(have, sol)
    if isinstance(want, TArr) and isinstance(have, TArr):
        for s1 in u_types(want.atom, have.atom, sol):
            for s2 in u_shapes(want.shape, lift + have.shape, s1):
                yield from _lifted_pairs(rest, lift, s2)
    else:
        for s in u_types(want, have, sol):
            yield from _lifted_pairs(rest, lift, s)


def _levels_outcome(levels: list[Level], sol: Sol) -> tuple[Layer, ...]:
    return tuple(Layer(level.kind, tuple(_resolved(u, sol) for u in level.unknowns)) for level in levels)


def _resolved(u, sol: Sol):
    if isinstance(u, (Dim, Shape)):
        return walk_index(u, sol)
    value = walk(u, sol)
    if isinstance(value, TArr):  # an Array-kinded unknown
        return TArr(value.atom, walk_shape(value.shape, sol))
    return value


def _replace_types(t: Type, table: dict) -> Type:
    """``t`` with each occurrence of a key of ``table`` (compared structurally) replaced."""
    t = prune(t)
    if t in table:
        return table[t]
    if isinstance(t, TArr):
        return TArr(_replace_types(t.atom, table), t.shape)
    if isinstance(t, TFun):
        return TFun(tuple(_replace_types(p, table) for p in t.params), _replace_types(t.result, table))
    if isinstance(t, (TForall, TPi, TSigma)):
        return type(t)(t.vars, _replace_types(t.body, table))
    return t


def _is_polymorphic(t: Type) -> bool:
    t = prune(t)
    return isinstance(t, TArr) and isinstance(prune(t.atom), (TPi, TForall))


def _lift_cost(found: Found) -> int:
    return sum(len(f.items) for f in found.lifts if f is not None)


def _grounded_shape(s: Shape, bump: Optional[IMeta]) -> Shape:
    sol = Sol()
    for m in index_unknowns(s):
        sol = sol.with_index(m, least_value(m, m is bump))
    return walk_shape(s, sol)


def _has_unknowns(u, sol: Sol, own: set) -> bool:
    """Whether the application's unknown ``u`` is still undetermined (``own``: its unknown atom types).

    An unknown atom type that ended up equal to an overloaded primitive's (``+`` in an
    argument) counts as determined: that one is settled later, by defaulting if need be.
    """
    if isinstance(u, (Dim, Shape)):
        return has_index_unknowns(Shape((walk_index(u, sol),))) if isinstance(u, Dim) else has_index_unknowns(walk_index(u, sol))
    value = walk(u, sol)
    if isinstance(value, TArr):
        return head(value.atom, sol) in own or has_index_unknowns(value.shape)
    return value in own


def _apply_levels(text: str, levels: list[Level], sol: Sol) -> str:
    for level in levels:
        values = " ".join(_show_value(u, sol) for u in level.unknowns)
        text = f"({'i-app' if level.kind == 'i' else 't-app'} {text} {values})"
    return text


def _show_value(u, sol: Sol) -> str:
    value = _resolved(u, sol)
    return show_index(value) if isinstance(value, (Dim, Shape)) else show_type(value)


def _shape_text(t: Type) -> str:
    t = prune(t)
    return str(t.shape) if isinstance(t, TArr) else show_type(t)


def _short(name: str) -> str:
    return name.strip("`") if name.startswith("`") else "f"


def _promotion(p: TArr, a: TArr) -> str:
    wanted, given = numeric_name(p.atom), numeric_name(a.atom)
    if wanted is None or given is None or wanted == given:
        return ""
    if NUMBERS[wanted].integral and not NUMBERS[given].integral:
        return f"; {PREFACE}use floor, ceiling, round or truncate"
    return f"; {PREFACE}{convert(given, wanted)}"
