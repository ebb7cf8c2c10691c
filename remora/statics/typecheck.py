"""The typing judgment ``Θ; Δ; Γ ⊢ t : τ`` (paper Fig. 7), producing the typed tree.

One method per typing rule, named after it (``t_var``, ``t_app``, ``t_unbox``, …), reached
through one table from syntax class to rule (:data:`RULES`).  Index equality is canonical-form
equality (:mod:`remora.statics.indices`); type equivalence (T-EQV) is
:func:`remora.statics.unify.unify`, which also settles the atom type of overloaded
primitives from their context.  Applications of ``Forall``/``Pi`` functions
without explicit instantiation are handed to :mod:`remora.statics.infer`.
"""

from __future__ import annotations

import math
from ..records import factory, record
from typing import Callable, Optional

from ..atoms import FLOATING, INTEGRAL, RESTRICTED_KINDS
from . import control, pointful, smt
from ..front import syntax as S
from . import typed as T
from ..errors import Fix, RemoraTypeError, Span, replace_with, span_text, wrap_in
from .infer import elaborate_application, needs_inference
from .frames import FramePart, cell_frame, counterexample_clause, principal_frame, shapes_differ_message
from .indices import SCALAR, Index, Shape, Var, concrete_shape
from .builders import framed, index_application, ranked, type_application
from .kinding import Scope, fresh_vars, kind_type, require_value as _require_value, sort_index
from .primitive_types import instantiate
from ..front.parse import BASE_TYPE_NAMES
from ..primitives import PRIMITIVES, is_primitive
from .spelling import did_you_mean
from .types import (
    BOOL,
    FLOAT,
    INT,
    AtomMeta,
    LiteralMeta,
    TArr,
    TBase,
    TForall,
    TFun,
    TPi,
    TSigma,
    TVar,
    Type,
    free_vars,
    kind_of,
    metas,
    prune,
    describe_allowed,
    show_type,
    subst,
    zonk,
)
from .conversions import arrays_differ, atom_mismatch
from .derivatives import t_grad
from .literals import check_literals
from .unify import default_metas, unify


@record(frozen=True)
class Gamma:
    """Γ: term variables and their types; a chain of scopes over the globals.

    A scope is a dictionary, so a lookup costs one probe per enclosing binding form — λ,
    ``unbox``, ``let`` — however many names each binds: a ``let`` of 10⁵ bindings is one scope
    (filled as its bindings are checked, see ``t_let``), not 10⁵ nested ones.  A local is
    found as its type; a global as its :class:`~remora.statics.typed.Global` (type and key).
    """

    bindings: dict[str, Type] = factory(dict)
    parent: Optional["Gamma"] = None
    globals: Optional[dict[str, T.Global]] = None

    def lookup(self, name: str) -> Optional[Type | T.Global]:
        env: Optional[Gamma] = self
        while env is not None:
            t = env.bindings.get(name)
            if t is not None:
                return t
            if env.globals is not None and name in env.globals:
                return env.globals[name]
            env = env.parent
        return None

    def extend(self, pairs: list[tuple[str, Type]]) -> "Gamma":
        return Gamma(dict(pairs), self)

    def names(self) -> list[str]:
        out: list[str] = []
        env: Optional[Gamma] = self
        while env is not None:
            out.extend(env.bindings)
            out.extend(env.globals or ())
            env = env.parent
        return out


@record(frozen=True)
class Env:
    scope: Scope  # Θ and Δ
    gamma: Gamma  # Γ

    def with_vars(self, vars_: list[Var] | tuple[Var, ...]) -> "Env":
        return Env(self.scope.extend(vars_), self.gamma)

    def with_terms(self, pairs: list[tuple[str, Type]]) -> "Env":
        return Env(self.scope, self.gamma.extend(pairs))


@record
class Checker:
    """Checks top-level forms one after another; definitions accumulate in ``globals``, each
    name bound to the :class:`~remora.statics.typed.Global` in force for the forms checked after it."""

    globals: dict[str, T.Global] = factory(dict)
    #: unknown atom types created while checking the current top-level form
    pending: list[AtomMeta] = factory(list)
    #: how applications were instantiated, by problem (see infer.elaborate_application)
    solved: dict = factory(dict)
    #: the name of the definition being checked (for the hint on an undeclared self-reference)
    defining: Optional[str] = None
    #: the atom types of the number literals of the current top-level form (checked at its end)
    literals: list[LiteralMeta] = factory(list)

    # --- top level --------------------------------------------------------------

    @smt.form_budget
    def check_form(self, form: S.TopForm, local: dict[str, Type] | None = None, key: str | None = None) -> T.TyForm:
        """Check one top-level form; a definition's type is fixed (unknowns defaulted) here.
        ``local`` binds names as locals around the form (values the run supplies in its own
        environment: a Python Function's arguments, one set per call); ``key`` is a definition's
        key if not a fresh one (the prelude's, :func:`~remora.statics.typed.library_key`)."""
        self.pending, self.literals = [], []
        env = Env(Scope(), Gamma(dict(local or {}), globals=self.globals))
        if isinstance(form, S.Define):
            key = key or T.fresh_key(form.name)
            self.defining = form.name
            try:
                value = control.define_value(self, form, env, key)
            finally:
                self.defining = None
            result: T.TyForm = T.TyDefine(form.name, value, form.span, key, form.declared is not None)
        else:
            result = T.TyExprForm(self.synth(form.expr, env), form.span)
        default_metas(self.pending)
        check_literals(self.literals)
        node = result.value if isinstance(result, T.TyDefine) else result.expr
        T.zonk_tree(node)
        if isinstance(result, T.TyDefine):
            self.globals[result.name] = T.Global(result.key, node.type)
        return result

    def declare(self, name: str, t: Type) -> str:
        """Bind ``name`` to a new global of type ``t`` (an input) for the forms checked from now
        on; its key, under which the engine must hold its value."""
        key = T.fresh_key(name)
        self.globals[name] = T.Global(key, t)
        return key

    def check_program(self, program: S.Program) -> list[T.TyForm]:
        return [self.check_form(f) for f in program.forms]

    # --- expressions ------------------------------------------------------------

    def synth(self, e: S.Expr, env: Env) -> T.TyExpr:
        """``e``'s type by the rule for its syntax class (:data:`RULES`), as a typed tree."""
        return RULES[type(e)](self, e, env)

    def t_var(self, e: S.Ref, env: Env) -> T.TyExpr:  # T-VAR (and T-OP for a primitive name)
        found = env.gamma.lookup(e.name)
        if isinstance(found, T.Global):
            return T.TyRef(found.type, e.span, e.name, found.key)
        if found is not None:
            return T.TyRef(found, e.span, e.name)
        if is_primitive(e.name):
            prim = self.t_op(S.Prim(e.name, e.span), env)
            return T.TyArray(TArr(prim.type, SCALAR), e.span, (), (prim,))
        if e.name in BASE_TYPE_NAMES:
            raise RemoraTypeError(f"`{e.name}` is a type, not an expression", e.span)
        close = did_you_mean(e.name, env.gamma.names() + list(PRIMITIVES))
        hint = control.undeclared_hint(e.name, self.defining) or (f"; did you mean `{close}`?" if close else "")
        err = RemoraTypeError(f"unbound variable `{e.name}`{hint}", e.span)
        raise err.fixed_by(replace_with(e.span, close)) if close and "did you mean" in hint else err

    def t_array(self, e: S.ArrayLit, env: Env) -> T.TyExpr:  # T-ARRAY
        weak: dict[str, LiteralMeta] = {}  # (the literal's integers share one atom type, its floats another)
        atoms = tuple(self.literal(a, weak) if type(a) is S.Lit else self.atom(a, env) for a in e.atoms)
        _check_count(len(atoms), e.dims, "array literal", "atoms", e.span)
        atom_type = atoms[0].type
        for i, a in enumerate(atoms[1:], start=2):
            if not unify(atom_type, a.type):
                raise RemoraTypeError(
                    f"mixed atom types in an array literal: atom 1 has type {show_type(atom_type)}, "
                    f"but atom {i} has type {show_type(a.type)}",
                    a.span,
                )
        return T.TyArray(ranked(TArr(atom_type, concrete_shape(e.dims)), e.span), e.span, e.dims, atoms)

    def t_empty_array(self, e: S.EmptyArray, env: Env) -> T.TyExpr:  # T-EMPTYARRAY
        atom_type = kind_type(e.atom_type, env.scope, "Atom")
        return T.TyArray(ranked(TArr(atom_type, concrete_shape(e.dims)), e.span), e.span, e.dims, ())

    def t_frame(self, e: S.Frame, env: Env) -> T.TyExpr:  # T-FRAME
        cells = tuple(self.synth(c, env) for c in e.cells)
        _check_count(len(cells), e.dims, "frame", "cells", e.span)
        first = _array_type(cells[0].type, "a frame cell", cells[0].span)
        for i, c in enumerate(cells[1:], start=2):
            if not unify(first, c.type):
                raise RemoraTypeError(_cells_differ(first, c.type, i), c.span)
        return T.TyFrame(ranked(TArr(first.atom, concrete_shape(e.dims) + first.shape), e.span), e.span, e.dims, cells)

    def t_empty_frame(self, e: S.EmptyFrame, env: Env) -> T.TyExpr:  # T-EMPTYFRAME
        cell = _array_type(kind_type(e.cell_type, env.scope, "Array"), "the cell type of an empty frame", e.span)
        return T.TyFrame(ranked(TArr(cell.atom, concrete_shape(e.dims) + cell.shape), e.span), e.span, e.dims, ())

    def t_app(self, e: S.App, env: Env) -> T.TyExpr:  # T-APP
        graded = t_grad(self, e, env)  # (T-GRAD: ``(grad f)`` for f of any parameters)
        if graded is not None:
            return graded
        fn = self.synth(e.fn, env)
        args = tuple(self.synth(a, env) for a in e.args)
        fn_type = _array_type(fn.type, "the function position", fn.span)
        if needs_inference(fn_type, args):
            fn, args = elaborate_application(e, fn, args, _describe_fn(e.fn), self.solved)
            fn_type = _array_type(fn.type, "the function position", fn.span)
        atom = prune(fn_type.atom)
        if not isinstance(atom, TFun):
            raise RemoraTypeError(
                f"expected an array of functions in function position, but it has type {show_type(fn.type)}", fn.span
            )
        return self.apply_function(e, fn, args, fn_type, atom)

    def apply_function(self, e: S.App, fn: T.TyExpr, args: tuple[T.TyExpr, ...], fn_type: TArr, fun: TFun) -> T.TyExpr:
        """T-APP once the function array's atom type is a function type."""
        name = _describe_fn(e.fn)
        if len(args) != len(fun.params):
            raise RemoraTypeError(
                f"{name} takes {len(fun.params)} argument{'s' * (len(fun.params) != 1)}, but is given {len(args)}",
                e.span,
            )
        parts = [FramePart("the function", fn_type.shape, fn.span)]
        for i, (arg, param) in enumerate(zip(args, fun.params), start=1):
            parts.append(self._argument_frame(i, arg, prune(param), name, e, args, fun))
        frame = principal_frame(parts, e.span)
        return T.TyApp(framed(fun.result, frame, "the result of this application", e.span), e.span, fn, args)

    def _argument_frame(self, i, arg, param, name, e, args, fun) -> FramePart:
        if isinstance(param, TVar):  # an Array-kinded type variable: the argument must be exactly that
            if not unify(arg.type, param):
                raise RemoraTypeError(
                    f"argument {i} of {name} has type {show_type(arg.type)}, but {name} expects {show_type(param)}",
                    arg.span,
                )
            return FramePart(f"argument {i}", SCALAR, arg.span)
        assert isinstance(param, TArr)
        arg_type = _array_type(arg.type, f"argument {i} of {name}", arg.span)
        frame = cell_frame(arg_type.shape, param.shape)
        if frame is None:
            raise RemoraTypeError(
                f"argument {i} of {name} has shape {arg_type.shape}, but {name} takes cells of shape "
                f"{param.shape}, which is not a suffix of it"
                + counterexample_clause(param.shape, arg_type.shape, "suffix"),
                arg.span,
            )
        if not unify(arg_type.atom, param.atom):
            fixes: list[Fix] = []  # (what the message suggests, as edits)
            err = RemoraTypeError(atom_mismatch(i, arg, arg_type.atom, param.atom, name, e, args, fun, fixes), arg.span)
            raise err.fixed_by(*fixes)
        return FramePart(f"argument {i}", frame, arg.span, arg_type.shape, param.shape)

    def t_tapp(self, e: S.TApp, env: Env) -> T.TyExpr:  # T-TAPP
        fn = self.synth(e.fn, env)
        univ = self._abstraction(fn, TForall, "t-app")
        _check_arity(len(e.types), univ.vars, "t-app", "type", e.span)
        types = []
        for node, var in zip(e.types, univ.vars):
            t = kind_type(node, env.scope)
            if not kind_fits(t, var.sort):
                raise RemoraTypeError(
                    f"t-app: `{show_type(t)}` has kind {kind_of(t)}, but the Forall's variable "
                    f"`{var.name}` has kind {var.sort}",
                    node.span,
                )
            types.append(t)
        return type_application(fn, tuple(types), e.span)

    def t_iapp(self, e: S.IApp, env: Env) -> T.TyExpr:  # T-IAPP
        fn = self.synth(e.fn, env)
        pi = self._abstraction(fn, TPi, "i-app")
        _check_arity(len(e.indices), pi.vars, "i-app", "index", e.span)
        indices = []
        for node, var in zip(e.indices, pi.vars):
            ix = sort_index(node, env.scope)
            sort = "Dim" if not isinstance(ix, Shape) else "Shape"
            if sort != var.sort:
                raise RemoraTypeError(
                    f"i-app: the index `{ix}` has sort {sort}, but the Pi's variable `{var.name}` has sort {var.sort}",
                    node.span,
                )
            indices.append(ix)
        return index_application(fn, tuple(indices), e.span)

    def _abstraction(self, fn: T.TyExpr, cls: type, form: str):
        fn_type = _array_type(fn.type, f"{form}'s function position", fn.span)
        atom = prune(fn_type.atom)
        if not isinstance(atom, cls):
            what, quant = ("type", "Forall") if cls is TForall else ("index", "Pi")
            raise RemoraTypeError(_not_abstraction(form, what, quant, fn.type), fn.span)
        return atom

    def t_unbox(self, e: S.Unbox, env: Env) -> T.TyExpr:  # T-UNBOX
        boxed = self.synth(e.boxed, env)
        boxed_type = _array_type(boxed.type, "the unboxed expression", boxed.span)
        sigma = prune(boxed_type.atom)
        if not isinstance(sigma, TSigma):
            raise RemoraTypeError(
                f"unbox needs an array of boxes (atoms of a Sigma type), but this has type {show_type(boxed.type)}",
                boxed.span,
            )
        if len(e.index_names) != len(sigma.vars):
            raise RemoraTypeError(
                f"unbox names {len(e.index_names)} index variable{'s' * (len(e.index_names) != 1)}, but the "
                f"box's type {show_type(sigma)} has {len(sigma.vars)}: write (unbox ("
                + " ".join([v.name for v in sigma.vars] + [e.value_name])
                + " e) body)",
                e.span,
            )
        vars_ = [Var(n.name, v.sort) for n, v in zip(e.index_names, sigma.vars)]
        from .types import var_replacement

        contents = subst(sigma.body, {sv: var_replacement(nv) for sv, nv in zip(sigma.vars, vars_)})
        inner = env.with_vars(vars_).with_terms([(e.value_name, contents)])
        # Only unknowns not yet settled can learn anything here; the settled ones leave the
        # list for good (so a let of many unboxes is checked in linear time, not quadratic).
        self.pending = [m for m in self.pending if metas(zonk(m))]
        outer_unknowns = list(self.pending)
        body = self.synth(e.body, inner)
        for m in outer_unknowns:  # an unknown from outside must not learn about the box's indices
            if free_vars(zonk(m)) & set(vars_):
                raise RemoraTypeError(
                    f"inside this unbox, {m.origin} from outside would get the type {show_type(zonk(m))}, which "
                    "mentions the box's indices, known only inside the unbox",
                    e.body.span,
                )
        leaked = free_vars(body.type) & set(vars_)
        if leaked:
            names = ", ".join(sorted(v.name for v in leaked))
            raise RemoraTypeError(
                f"the type of the unbox body, {show_type(body.type)}, mentions {names}, which is only known inside "
                "the unbox; hide it in a box (box … (Sigma …)) or reduce it away",
                e.body.span,
            )
        result = framed(body.type, boxed_type.shape, "the result of this unbox", e.span)
        return T.TyUnbox(result, e.span, tuple(vars_), e.value_name, boxed, body)

    def t_let(self, e: S.Let, env: Env) -> T.TyExpr:  # the let sugar: nested β-redexes (T-APP, T-LAM)
        """Sequential bindings in ONE scope, filled as they are checked: binding i is checked
        while the scope holds bindings 0 … i−1 only (checking is done with a binding before the
        next is added, and nothing keeps Γ afterwards), and lookups stay one probe per scope —
        so a let of n bindings is checked in time linear in n."""
        scope = Gamma({}, env.gamma)
        inner = Env(env.scope, scope)
        bindings = []
        for name, value, _ in e.bindings:
            typed_value = self.synth(value, inner)
            bindings.append((name, typed_value))
            scope.bindings[name] = typed_value.type
        body = self.synth(e.body, inner)
        return T.TyLet(body.type, e.span, tuple(bindings), body)

    #: T-IF (contract §6), in :mod:`.control` with the other control forms
    t_if = control.t_if
    #: the pointful ``for`` (contract §12): its ranges, then its elaboration (:mod:`.pointful`)
    t_for = pointful.t_for

    # --- atoms ------------------------------------------------------------------

    def atom(self, a: S.Atom, env: Env) -> T.TyAtom:
        """``a``'s type by the rule for its syntax class (:data:`RULES`), as a typed atom."""
        return RULES[type(a)](self, a, env)

    def t_lit(self, a: S.Lit, env: Env) -> T.TyAtom:  # base values (Int, Float, Bool constants)
        return self.literal(a, {})

    def literal(self, a: S.Lit, weak: dict[str, "LiteralMeta"]) -> T.TyAtom:
        """A Bool is a ``Bool``; a number is *weak* (contract §10): its atom type is an unknown
        shared by the literal's numbers of its class, ``Int``/``Int32`` or ``Float``/``Float32``,
        which its context settles (``Int``/``Float`` when nothing does)."""
        if isinstance(a.value, bool):
            return T.TyLit(BOOL, a.span, a.value)
        kind = "int" if isinstance(a.value, int) else "float"
        meta = weak.get(kind)
        if meta is None:
            meta = weak[kind] = LiteralMeta(INTEGRAL, INT) if kind == "int" else LiteralMeta(FLOATING, FLOAT)
            self.pending.append(meta)
            self.literals.append(meta)
        node = T.TyLit(meta, a.span, a.value)
        meta.literals.append(node)
        return node

    def t_op(self, a: S.Prim, env: Env) -> T.TyPrim:  # T-OP
        t = instantiate(PRIMITIVES[a.name], a.name)
        self.pending.extend(metas(t))
        return T.TyPrim(t, a.span, a.name)

    def t_lam(self, a: S.Lam, env: Env) -> T.TyAtom:  # T-LAM
        params = [(p.name, kind_type(p.type, env.scope, "Array")) for p in a.params]
        body = self.synth(a.body, env.with_terms(params))
        return T.TyLam(TFun(tuple(t for _, t in params), body.type), a.span, tuple(params), body)

    def t_tlam(self, a: S.TLam, env: Env) -> T.TyAtom:  # T-TLAM
        vars_ = fresh_vars(a.binders)
        _require_value(a.body, "Tλ")
        body = self.synth(a.body, env.with_vars(vars_))
        return T.TyTLam(TForall(tuple(vars_), body.type), a.span, tuple(vars_), body)

    def t_ilam(self, a: S.ILam, env: Env) -> T.TyAtom:  # T-ILAM
        vars_ = fresh_vars(a.binders)
        _require_value(a.body, "Iλ")
        body = self.synth(a.body, env.with_vars(vars_))
        return T.TyILam(TPi(tuple(vars_), body.type), a.span, tuple(vars_), body)

    def t_box(self, a: S.Box, env: Env) -> T.TyAtom:  # T-BOX
        if not (isinstance(a.type, S.STQuant) and a.type.quantifier == "Sigma"):
            raise RemoraTypeError(
                f"a box is annotated with a Sigma type, (Sigma ((x γ) ...) τ), not `{span_text(a.type.span)}`",
                a.type.span,
            )
        sigma = kind_type(a.type, env.scope, "Atom")
        if not isinstance(sigma, TSigma):
            raise RemoraTypeError(f"a box is annotated with a Sigma type, not {show_type(sigma)}", a.type.span)
        if len(a.indices) != len(sigma.vars):
            raise RemoraTypeError(
                f"this box gives {len(a.indices)} ind{'ex' if len(a.indices) == 1 else 'ices'}, but "
                f"{show_type(sigma)} quantifies {len(sigma.vars)}",
                a.span,
            )
        indices: list[Index] = [sort_index(n, env.scope, v.sort) for n, v in zip(a.indices, sigma.vars)]
        expected = subst(sigma.body, dict(zip(sigma.vars, indices)))
        body = self.synth(a.body, env)
        if not unify(body.type, expected):
            raise RemoraTypeError(_box_mismatch(body.type, expected, sigma, indices), a.body.span)
        return T.TyBox(sigma, a.span, tuple(indices), body)


def kind_fits(t: Type, kind: str) -> bool:
    """Whether a type of ``t``'s kind may instantiate a variable of kind ``kind`` (Floating ⊂
    Numeric ⊂ Atom: a restricted kind takes its base types and variables of a kind within it)."""
    members = RESTRICTED_KINDS.get(kind)
    if members is not None:
        t = prune(t)
        if isinstance(t, TBase):
            return t.name in members
        return isinstance(t, TVar) and RESTRICTED_KINDS.get(t.var.sort, frozenset({""})) <= members
    return kind_of(t) == kind


#: Fig. 7 as a table: each syntax class, and the typing rule (a method named after it) that
#: types it.  T-EQV is not a row: it is ``unify`` inside the rules, wherever two types must agree.
RULES: dict[type, Callable] = {
    S.Ref: Checker.t_var,
    S.ArrayLit: Checker.t_array,
    S.EmptyArray: Checker.t_empty_array,
    S.Frame: Checker.t_frame,
    S.EmptyFrame: Checker.t_empty_frame,
    S.App: Checker.t_app,
    S.TApp: Checker.t_tapp,
    S.IApp: Checker.t_iapp,
    S.Unbox: Checker.t_unbox,
    S.Let: Checker.t_let,
    S.If: Checker.t_if,
    S.For: Checker.t_for,
    S.Lit: Checker.t_lit,
    S.Prim: Checker.t_op,
    S.Lam: Checker.t_lam,
    S.TLam: Checker.t_tlam,
    S.ILam: Checker.t_ilam,
    S.Box: Checker.t_box,
}


# ---------------------------------------------------------------------------
# Helpers shared by the rules


def _check_count(count: int, dims: tuple[int, ...], what: str, items: str, span: Span) -> None:
    need = math.prod(dims)
    if count != need:
        dims_text = " ".join(map(str, dims))
        raise RemoraTypeError(
            f"this {what} has {count} {items}, but its dimensions ({dims_text}) call for {need}", span
        )


def _array_type(t: Type, what: str, span: Span) -> TArr:
    t = prune(t)
    if isinstance(t, TArr):
        return t
    raise RemoraTypeError(
        f"{what} has type {show_type(t)}, a type variable of kind Array: its shape is unknown here, so it "
        "cannot be lifted or framed; instantiate it (t-app) first",
        span
    )


def _check_arity(given: int, vars_: tuple[Var, ...], form: str, what: str, span: Span) -> None:
    if given != len(vars_):
        names = " ".join(v.name for v in vars_)
        plural = "indices" if what == "index" else "types"
        raise RemoraTypeError(
            f"{form} supplies {given} {what if given == 1 else plural}, but the abstraction binds "
            f"{len(vars_)} ({names})",
            span,
        )


def _not_abstraction(form: str, what: str, quant: str, t: Type) -> str:
    atom = prune(t.atom) if isinstance(prune(t), TArr) else prune(t)  # type: ignore[union-attr]
    hint = ""
    if form == "t-app" and isinstance(atom, TPi):
        hint = "; apply its index arguments first with i-app"
    elif form == "i-app" and isinstance(atom, TForall):
        hint = "; apply its type arguments with t-app"
    return f"{form} needs an array of {what} abstractions ({quant}), but this has type {show_type(t)}{hint}"


def _cells_differ(first: TArr, other: Type, i: int) -> str:
    other = prune(other)
    msg = f"the cells of a frame must have one type: cell 1 has type {show_type(first)}, but cell {i} has type {show_type(other)}"
    if isinstance(other, TArr) and other.shape != first.shape:
        msg += counterexample_clause(first.shape, other.shape, "equal")
    return msg + arrays_differ(first, other)


def _box_mismatch(actual: Type, expected: Type, sigma: TSigma, indices: list[Index]) -> str:
    binding = ", ".join(f"{v.name} = {ix}" for v, ix in zip(sigma.vars, indices))
    msg = f"the box's contents have type {show_type(actual)}, but {show_type(sigma)} with {binding} needs {show_type(expected)}"
    a, x = prune(actual), prune(expected)
    if isinstance(a, TArr) and isinstance(x, TArr) and a.shape != x.shape:
        msg += "; the shapes " + shapes_differ_message(a.shape, x.shape) + " differ"
    return msg


def _describe_fn(fn: S.Expr) -> str:
    """How messages name the function of an application: `+`, `f`, `append` in (t-app (i-app append …) …)."""
    while isinstance(fn, (S.TApp, S.IApp)):
        fn = fn.fn
    if isinstance(fn, S.Ref):
        return "the function" if fn.name.startswith("%") else f"`{fn.name}`"
    if isinstance(fn, S.ArrayLit) and not fn.dims:
        atom = fn.atoms[0]
        if isinstance(atom, S.Prim):
            return f"`{atom.name}`"
        if isinstance(atom, S.Lam):
            return "this λ"
    return "the function"
