"""One Remora document as an editor sees it: its errors, and what is under a cursor.

:class:`Document` runs the real pipeline — the reader, the parser and the checker of a
:class:`~remora.interfaces.session.Session`, form by form — and keeps, for every form that checked, its
typed tree (types for hover) and, for every form that parsed, its scopes (definitions and the
locals visible at a position).  Positions here are the reader's: 1-based lines and columns
counted in characters; :mod:`remora.interfaces.lsp` converts them to the protocol's.

The forms are analysed as ``remora check`` analyses them (:mod:`remora.interfaces.analysis`): a
form that fails is reported and the analysis goes on with the next one; a form that uses a name
whose definition failed is skipped; a form the reader cannot read (an unclosed bracket while
typing) is reported, and the forms around it are still analysed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..front import syntax as S
from ..statics import typed as T
from ..errors import Fix, RemoraError, Span
from . import scopes as sc
from .analysis import Form, analyse
from .docs import prelude_definitions, prelude_parameters, primitive_type
from .signatures import Signature, call_at, parameter_names, signature
from .typed_index import contains, innermost, node_with_span

#: words that start forms, offered by completion
KEYWORDS = ("define", "λ", "lambda", "Tλ", "t-lambda", "Iλ", "i-lambda", "let", "array", "frame",
            "t-app", "i-app", "unbox", "box", "for")


@dataclass
class Completion:
    name: str
    detail: str  # its type (or what it is)
    kind: str  # keyword, primitive, prelude, definition, local
    type: Any = None  # its type, where known (a Type)
    params: list[str] | None = None  # the names of its parameters, where a λ gives them


@dataclass
class Document:
    text: str
    name: str = "<document>"
    errors: list[RemoraError] = field(default_factory=list)
    forms: list[Form] = field(default_factory=list)
    scopes: sc.Scopes = field(default_factory=sc.Scopes)

    def __post_init__(self) -> None:
        from .session import Session

        for form in analyse(Session(), self.text, self.name, contain_bugs=True):
            if form.error is not None:
                self.errors.append(form.error)
            if form.node is not None:
                self.forms.append(form)
            if form.syntax is not None:
                sc.resolve([form.syntax], self.scopes)

    # --- queries (1-based line and column) ---------------------------------------------

    def form_at(self, line: int, col: int) -> Form | None:
        for form in self.forms:
            if contains(form.node.span, line, col):
                return form
        return None

    def use_at(self, line: int, col: int) -> sc.Use | None:
        return _innermost_of((u for u in self.scopes.uses if contains(u.span, line, col)), lambda u: u.span)

    def binding_at(self, line: int, col: int) -> sc.Binding | None:
        return _innermost_of((b for b in self.scopes.bindings if contains(b.span, line, col)), lambda b: b.span)

    def definition(self, line: int, col: int) -> Span | None:
        """Where the name under the position is bound: a binder in the document, or a prelude
        definition."""
        use = self.use_at(line, col)
        if use is not None:
            if use.binding is not None:
                return use.binding.span
            return prelude_definitions().get(use.name) if use.term else None
        binding = self.binding_at(line, col)
        return binding.span if binding is not None else None

    def hover(self, line: int, col: int) -> str | None:
        """What to show for the position, as Markdown: the type of the innermost expression
        under it (a primitive's documentation too), or the type of a binder or a variable."""
        binding = self.binding_at(line, col)
        if binding is not None:
            return _code(f"{binding.name} : {self.binding_type(binding)}")
        use = self.use_at(line, col)
        if use is not None and not use.term:
            sort = use.binding.sort if use.binding is not None else "?"
            return _code(f"{use.name} : {sort}") + f"\n\n{use.binding.kind if use.binding else 'unbound'}"
        form = self.form_at(line, col)
        found = innermost(form.typed, line, col) if form is not None and form.typed is not None else None
        if found is None:
            return None
        used, written = found
        if isinstance(written, T.TyPrim):
            return _primitive_hover(written.name, str(used.type))
        if isinstance(written, T.TyRef):
            return _code(f"{written.name} : {used.type}")
        return _code(str(used.type))

    def binding_type(self, binding: sc.Binding) -> str:
        """The type (or sort) of what a binder binds, from the typed tree where there is one."""
        if binding.kind in (sc.TYPE_VARIABLE, sc.INDEX_VARIABLE):
            return binding.sort
        t = self.bound_type(binding)
        return "?" if t is None else str(t)

    def bound_type(self, binding: sc.Binding) -> Any:
        """The type of what a term binder binds (None where its form did not check)."""
        form = next((f for f in self.forms if contains(f.node.span, binding.span.line, binding.span.col)), None)
        if form is None or form.typed is None:
            return None
        if binding.kind == sc.DEFINE:
            return T.form_type(form.typed)
        if binding.kind == sc.PARAMETER:
            lam = node_with_span(form.typed, binding.node.span, T.TyLam)
            return lam.params[binding.index][1] if lam is not None else None
        if binding.kind == sc.LET:
            let = node_with_span(form.typed, binding.node.span, T.TyLet)
            return let.bindings[binding.index][1].type if let is not None else None
        return None

    def completions(self, line: int, col: int) -> list[Completion]:
        """The names in scope at the position, with their types: keywords, primitives, the
        prelude's names, the definitions of the forms before it and the locals around it."""
        from .session import load_prelude
        from ..primitives import PRIMITIVES

        from ..statics.primitive_types import primitive_type as type_of

        items: dict[str, Completion] = {k: Completion(k, "keyword", "keyword") for k in KEYWORDS}
        for name, prim in PRIMITIVES.items():
            items[name] = Completion(name, primitive_type(name), "primitive", type_of(prim))
        params = prelude_parameters()
        for name, binding in load_prelude()[0].items():
            items[name] = Completion(name, str(binding.type), "prelude", binding.type, params.get(name))
        for form in self.forms:
            if (form.node.span.line, form.node.span.col) > (line, col):
                break
            if isinstance(form.syntax, S.Define) and not contains(form.node.span, line, col):
                t = T.form_type(form.typed) if form.typed is not None else None
                items[form.syntax.name] = Completion(form.syntax.name, "?" if t is None else str(t), "definition", t,
                                                     parameter_names(form.syntax.value))
        for b in self.scopes.bindings:
            if b.scope is not None and b.kind not in (sc.TYPE_VARIABLE, sc.INDEX_VARIABLE) and contains(b.scope, line, col):
                t = self.bound_type(b)
                items[b.name] = Completion(b.name, "?" if t is None else str(t), "local", t)
        return list(items.values())

    def signature_at(self, line: int, col: int) -> tuple[Signature, int] | None:
        """The signature of the function applied around the position, and the argument the
        position is at (see :mod:`remora.interfaces.signatures`)."""
        from .docs import describe, leading_comment

        call = call_at(self.text, line, col)
        if call is None:
            return None
        found = next((c for c in self.completions(line, col) if c.name == call.name), None)
        if found is None or found.type is None:
            return None
        if found.kind == "definition":
            form = next((f for f in self.forms if isinstance(f.syntax, S.Define) and f.syntax.name == call.name
                         and (f.node.span.line, f.node.span.col) <= (line, col)), None)
            doc = leading_comment(form.node.span) if form is not None else None
        elif found.kind in ("primitive", "prelude"):
            from .session import load_prelude

            text = describe(call.name, load_prelude()[0])
            doc = text.partition("\n\n")[2] or None if text else None
        else:
            doc = None
        sig = signature(call.name, found.type, found.params, doc)
        return (sig, call.argument) if sig is not None else None

    # --- references, renaming, symbols, fixes -----------------------------------------

    def occurrences(self, line: int, col: int) -> tuple[sc.Binding | None, str, list[Span]] | None:
        """The binder of the name under the position (None for a name the document does not
        bind: a primitive's, the prelude's), its name, and every place it is written — the
        binder first — in this document."""
        binding = self.binding_at(line, col)
        if binding is None:
            use = self.use_at(line, col)
            if use is None:
                return None
            binding = use.binding
            if binding is None:
                spans = [u.span for u in self.scopes.uses if u.binding is None and u.name == use.name and u.term == use.term]
                return None, use.name, spans
        return binding, binding.name, [binding.span] + [u.span for u in self.scopes.uses if u.binding is binding]

    def rename(self, line: int, col: int, new: str) -> list[Span]:
        """The places to write ``new`` to rename the name under the position: a RemoraError
        (saying why) when it cannot be — a name the document does not bind, a name that is not
        a name, or one whose new uses would mean something else."""
        from .api_register import is_remora_name

        found = self.occurrences(line, col)
        if found is None or found[0] is None:
            what = f"`{found[1]}` is not defined in this document" if found else "there is no name here"
            raise RemoraError(f"cannot rename: {what}")
        binding, name, spans = found
        if not is_remora_name(new):
            raise RemoraError(f"cannot rename `{name}` to `{new}`: that is not a name a program can use")
        scope = binding.scope or _rest(binding.span)
        for other in self.scopes.bindings:  # a `new` bound inside the scope, around some of the uses
            if other.name == new and other is not binding and contains(scope, other.span.line, other.span.col) and any(
                    contains(other.scope or _rest(other.span), s.line, s.col) for s in spans[1:]):
                raise RemoraError(f"cannot rename `{name}` to `{new}`: a `{new}` bound at line "
                                  f"{other.span.line} would take some of its uses")
        for use in self.scopes.uses:
            if use.name == new and contains(scope, use.span.line, use.span.col):
                raise RemoraError(f"cannot rename `{name}` to `{new}`: `{new}` is used where `{name}` is "
                                  f"visible (line {use.span.line}), and would then mean `{name}`")
        return spans

    def symbols(self) -> list[tuple[str, bool, Span, Span, str]]:
        """The document's definitions: (name, whether it is a function, the whole form, the
        name as written, its type)."""
        from .signatures import function_type

        out = []
        for form in self.forms:
            if isinstance(form.syntax, S.Define):
                t = T.form_type(form.typed) if form.typed is not None else None
                out.append((form.syntax.name, t is not None and function_type(t) is not None, form.node.span,
                            form.syntax.name_span, "?" if t is None else str(t)))
        return out

    def fixes(self, line: int, col: int, end_line: int, end_col: int) -> list[tuple[RemoraError, Fix]]:
        """The fixes of the errors whose span meets the region, with their errors."""
        out = []
        for err in self.errors:
            span = err.span
            if span is not None and (span.line, span.col) <= (end_line, end_col) and (line, col) <= (span.end_line, span.end_col):
                out.extend((err, fix) for fix in err.fixes)
        return out


def _rest(span: Span) -> Span:
    """From ``span`` to the end of its document."""
    return Span(span.source, span.line, span.col, 10**9, 1)


def _innermost_of(items, span_of):
    best = None
    for item in items:
        if best is None or _extent(span_of(item)) <= _extent(span_of(best)):
            best = item
    return best


def _extent(span: Span) -> tuple[int, int]:
    return (span.end_line - span.line, span.end_col - span.col)


def _code(text: str) -> str:
    return f"```remora\n{text}\n```"


def _primitive_hover(name: str, used: str) -> str:
    from ..primitives import PRIMITIVES

    prim = PRIMITIVES.get(name)
    if prim is None:
        return _code(f"{name} : {used}")
    general = primitive_type(name)
    text = _code(f"{name} : {used}")
    if general != used:
        text += "\n\n" + _code(general)
    return text + "\n\n" + prim.doc.strip()


__all__ = ["Document", "Completion", "KEYWORDS", "prelude_definitions", "primitive_type"]
