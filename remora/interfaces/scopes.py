"""Which binder each name in a program refers to: for go-to-definition, completion of locals
and the notebook's free variables.

This is name resolution only — the lexical structure of the syntax tree (:mod:`remora.syntax`)
as the checker sees it: ``λ`` parameters, ``let`` bindings (sequential), ``unbox`` variables,
``Tλ``/``Iλ`` binders and the binders of ``Forall``/``Pi``/``Sigma`` types are local; a
``define`` binds its name for the forms after it (D32).  Types are never computed here: they
come from the checker's typed tree (:mod:`remora.interfaces.typed_index`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Iterable

from ..front import syntax as S
from ..front.pointful import elaborate
from ..records import field_names, is_record
from ..errors import Span

#: what binds a name
DEFINE, PARAMETER, LET, UNBOX, TYPE_VARIABLE, INDEX_VARIABLE = (
    "definition", "parameter", "let binding", "unbox variable", "type variable", "index variable",
)


@dataclass(eq=False)
class Binding:
    """One binding occurrence: the binder's name and where it is written, what binds it (the
    syntax node), and the region where it is visible (None: the rest of the document)."""

    name: str
    span: Span
    kind: str
    node: object
    scope: Span | None = None
    #: a type or index variable's kind or sort (``Atom``, ``Dim`` …); a parameter's position
    sort: str = ""
    index: int = 0


@dataclass(eq=False)
class Use:
    """A name used: a term variable (``term``), or a type or index variable in a type."""

    name: str
    span: Span
    binding: Binding | None
    term: bool


@dataclass
class Scopes:
    bindings: list[Binding] = field(default_factory=list)
    uses: list[Use] = field(default_factory=list)
    #: the top-level definitions in force after the forms resolved so far, by name
    globals: dict[str, Binding] = field(default_factory=dict)

    def free_terms(self) -> set[str]:
        """The term variables used but bound nowhere in the program (inputs, globals, primitives)."""
        return {u.name for u in self.uses if u.term and u.binding is None}


def resolve(forms: Iterable[S.TopForm], scopes: Scopes | None = None) -> Scopes:
    """Resolve every name of ``forms`` (top-level forms in order) — into ``scopes`` if given,
    so the forms of a document can be added one at a time."""
    scopes = scopes if scopes is not None else Scopes()
    for form in forms:
        _Resolver(scopes).form(form)
    return scopes


def name_span(span: Span, name: str) -> Span:
    """The span of ``name`` where a binder written ``name`` or ``(name …)`` starts at ``span``."""
    text = span.source.line_text(span.line)
    i = span.col - 1
    if text[i : i + 1] in ("(", "["):
        i += 1
        while i < len(text) and text[i] in " \t":
            i += 1
    if text[i : i + len(name)] == name:
        return Span(span.source, span.line, i + 1, span.line, i + 1 + len(name))
    return span


_ATOMS = (S.Lit, S.Prim, S.Lam, S.TLam, S.ILam, S.Box)
_TYPES = (S.STBase, S.STName, S.STArr, S.STFun, S.STQuant)
_INDICES = (S.INat, S.IName, S.IShp, S.IPlus, S.IAppend, S.ISplice)


def _after(a: Span, b: Span) -> Span:
    """The region from the end of ``a`` to the end of ``b``."""
    return Span(a.source, a.end_line, a.end_col, b.end_line, b.end_col)


class _Resolver:
    def __init__(self, scopes: Scopes):
        self.scopes = scopes

    def bind(self, b: Binding) -> Binding:
        self.scopes.bindings.append(b)
        return b

    def use(self, name: str, span: Span, env: dict[str, Binding], term: bool) -> None:
        binding = env.get(name)
        if binding is None and term:
            binding = self.scopes.globals.get(name)
        self.scopes.uses.append(Use(name, span, binding, term))

    # --- top level ---------------------------------------------------------------

    def form(self, form: S.TopForm) -> None:
        if isinstance(form, S.Define):
            if form.declared is not None:  # a declared definition is in scope in its own body
                self.type(form.declared, {})
                self.scopes.globals[form.name] = self.bind(Binding(form.name, form.name_span, DEFINE, form))
                self.expr(form.value, {}, {})
                return
            self.expr(form.value, {}, {})
            self.scopes.globals[form.name] = self.bind(Binding(form.name, form.name_span, DEFINE, form))
        else:
            self.expr(form.expr, {}, {})

    # --- expressions (terms: ``env``; type and index variables: ``tenv``) ----------

    def expr(self, e: S.Expr, env: dict[str, Binding], tenv: dict[str, Binding]) -> None:
        if isinstance(e, S.Ref):
            self.use(e.name, e.span, env, True)
        elif isinstance(e, S.ArrayLit):
            for a in e.atoms:
                self.atom(a, env, tenv)
        elif isinstance(e, S.EmptyArray):
            self.type(e.atom_type, tenv)
        elif isinstance(e, S.Frame):
            for c in e.cells:
                self.expr(c, env, tenv)
        elif isinstance(e, S.EmptyFrame):
            self.type(e.cell_type, tenv)
        elif isinstance(e, S.App):
            for x in (e.fn, *e.args):
                self.expr(x, env, tenv)
        elif isinstance(e, S.TApp):
            self.expr(e.fn, env, tenv)
            for t in e.types:
                self.type(t, tenv)
        elif isinstance(e, S.IApp):
            self.expr(e.fn, env, tenv)
            for i in e.indices:
                self.index(i, tenv)
        elif isinstance(e, S.Unbox):
            self.unbox(e, env, tenv)
        elif isinstance(e, S.Let):
            self.let(e, env, tenv)
        elif isinstance(e, S.For):  # its indices are the parameters of the λs it abbreviates
            self.expr(elaborate(e), env, tenv)
        else:
            self.other(e, env, tenv)

    def other(self, node, env: dict[str, Binding], tenv: dict[str, Binding]) -> None:
        """A form this resolver has no rule for (an extension of the syntax): the names used
        anywhere inside it are still found, resolved in the scope around it."""
        for name in _field_names(node):
            self.any(getattr(node, name), env, tenv)

    def any(self, value, env: dict[str, Binding], tenv: dict[str, Binding]) -> None:
        if isinstance(value, tuple):
            for v in value:
                self.any(v, env, tenv)
        elif isinstance(value, _ATOMS):
            self.atom(value, env, tenv)
        elif isinstance(value, _TYPES):
            self.type(value, tenv)
        elif isinstance(value, _INDICES):
            self.index(value, tenv)
        elif _is_node(value) and not isinstance(value, Span):
            self.expr(value, env, tenv)

    def unbox(self, e: S.Unbox, env: dict[str, Binding], tenv: dict[str, Binding]) -> None:
        self.expr(e.boxed, env, tenv)
        inner_t = dict(tenv)
        for n in e.index_names:
            inner_t[n.name] = self.bind(Binding(n.name, n.span, INDEX_VARIABLE, e, e.body.span))
        value_span = e.value_span or e.span
        inner = {**env, e.value_name: self.bind(Binding(e.value_name, value_span, UNBOX, e, e.body.span))}
        self.expr(e.body, inner, inner_t)

    def let(self, e: S.Let, env: dict[str, Binding], tenv: dict[str, Binding]) -> None:
        inner = dict(env)
        for i, (name, value, span) in enumerate(e.bindings):
            self.expr(value, inner, tenv)
            inner[name] = self.bind(Binding(name, name_span(span, name), LET, e, _after(span, e.span), index=i))
        self.expr(e.body, inner, tenv)

    def atom(self, a: S.Atom, env: dict[str, Binding], tenv: dict[str, Binding]) -> None:
        if isinstance(a, S.Lam):
            inner = dict(env)
            for i, p in enumerate(a.params):
                self.type(p.type, tenv)
                inner[p.name] = self.bind(Binding(p.name, name_span(p.span, p.name), PARAMETER, a, a.body.span, index=i))
            self.expr(a.body, inner, tenv)
        elif isinstance(a, (S.TLam, S.ILam)):
            kind = TYPE_VARIABLE if isinstance(a, S.TLam) else INDEX_VARIABLE
            self.expr(a.body, env, self.binders(a.binders, kind, a, a.body.span, tenv))
        elif isinstance(a, S.Box):
            for i in a.indices:
                self.index(i, tenv)
            self.expr(a.body, env, tenv)
            self.type(a.type, tenv)

    def binders(self, binders, kind: str, node, scope: Span, tenv: dict[str, Binding]) -> dict[str, Binding]:
        inner = dict(tenv)
        for b in binders:
            inner[b.name] = self.bind(Binding(b.name, name_span(b.span, b.name), kind, node, scope, b.sort))
        return inner

    # --- types and indices -----------------------------------------------------------

    def type(self, t: S.SType, tenv: dict[str, Binding]) -> None:
        if isinstance(t, S.STName):
            self.use(t.name, t.span, tenv, False)
        elif isinstance(t, S.STArr):
            self.type(t.atom, tenv)
            self.index(t.shape, tenv)
        elif isinstance(t, S.STFun):
            for p in t.params:
                self.type(p, tenv)
            self.type(t.result, tenv)
        elif isinstance(t, S.STQuant):
            kind = TYPE_VARIABLE if t.quantifier == "Forall" else INDEX_VARIABLE
            self.type(t.body, self.binders(t.binders, kind, t, t.body.span, tenv))

    def index(self, i: S.SIndex, tenv: dict[str, Binding]) -> None:
        if isinstance(i, S.IName):
            self.use(i.name, i.span, tenv, False)
        elif isinstance(i, (S.IShp, S.IPlus, S.IAppend, S.ISplice)):
            for x in (i.dims if isinstance(i, S.IShp) else i.args):
                self.index(x, tenv)


def _is_node(value) -> bool:
    """A syntax node: remora's are records; an extension's may be a dataclass."""
    return is_record(value) or (dataclasses.is_dataclass(value) and not isinstance(value, type))


def _field_names(node) -> tuple[str, ...]:
    if is_record(node):
        return field_names(node)
    return tuple(f.name for f in dataclasses.fields(node))
