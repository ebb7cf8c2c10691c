"""One Remora document as an editor sees it: its errors, and what is under a cursor.

:class:`Document` runs the real pipeline — the reader, the parser and the checker of a
:class:`~remora.interfaces.session.Session`, form by form — and keeps, for every form that checked, its
typed tree (types for hover) and, for every form that parsed, its scopes (definitions and the
locals visible at a position).  Positions here are the reader's: 1-based lines and columns
counted in characters; :mod:`remora.interfaces.lsp` converts them to the protocol's.

A form that fails is reported and the analysis goes on with the next one; a form that uses
a name whose definition failed is skipped (its errors would only repeat the first one).  A
reader error (an unclosed bracket while typing) is reported, and the complete forms before
the broken one are still analysed.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

from ..front import syntax as S
from ..statics import typed as T
from ..errors import RemoraError, RemoraSyntaxError, Span
from ..front.reader import _TOKEN, SAtom, SList, SNode, read
from . import scopes as sc
from .typed_index import contains, innermost, node_with_span

#: words that start forms, offered by completion
KEYWORDS = ("define", "λ", "lambda", "Tλ", "t-lambda", "Iλ", "i-lambda", "let", "array", "frame",
            "t-app", "i-app", "unbox", "box")


@dataclass
class Form:
    """A top-level form: as read, as parsed (None if it failed to parse) and as checked (None
    if it failed, or was skipped)."""

    node: SNode
    syntax: S.TopForm | None = None
    typed: T.TyForm | None = None


@dataclass
class Completion:
    name: str
    detail: str  # its type (or what it is)
    kind: str  # keyword, primitive, prelude, definition, local


@dataclass
class Document:
    text: str
    name: str = "<document>"
    errors: list[RemoraError] = field(default_factory=list)
    forms: list[Form] = field(default_factory=list)
    scopes: sc.Scopes = field(default_factory=sc.Scopes)

    def __post_init__(self) -> None:
        from .session import Session

        session = Session()
        failed: set[str] = set()
        for node in self._read():
            form = Form(node)
            self.forms.append(form)
            if failed & _symbols(node):
                continue
            try:
                form.syntax = _parse(node)
            except RemoraError as err:
                self.errors.append(err)
                failed |= _defined_name(node)
                continue
            sc.resolve([form.syntax], self.scopes)
            form.typed = self._check(session, form.syntax)
            if form.typed is None and isinstance(form.syntax, S.Define):
                failed.add(form.syntax.name)

    # --- analysis ---------------------------------------------------------------------

    def _read(self) -> list[SNode]:
        """The forms of the text; after a reader error, the complete forms before it."""
        try:
            return read(self.text, self.name)
        except RemoraSyntaxError as err:
            self.errors.append(err)
            cut = _broken_form_line(self.text, err.line or 1)
            try:
                return read("\n".join(self.text.split("\n")[: cut - 1]), self.name)
            except RemoraSyntaxError:
                return []

    def _check(self, session, form: S.TopForm) -> T.TyForm | None:
        from .session import deep_recursion

        snapshot = dict(session.checker.globals)
        try:
            with deep_recursion(form.span):
                return session.check_form(form)
        except RemoraError as err:
            self.errors.append(err.with_span(form.span))
        except Exception as exc:  # a bug in remora: said at the form, and the analysis goes on
            self.errors.append(RemoraError(f"remora: internal error: {type(exc).__name__}: {exc}", form.span))
        session.checker.globals.clear()
        session.checker.globals.update(snapshot)
        return None

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
        form = next((f for f in self.forms if contains(f.node.span, binding.span.line, binding.span.col)), None)
        if form is None or form.typed is None:
            return "?"
        if binding.kind == sc.DEFINE:
            return str(T.form_type(form.typed))
        if binding.kind == sc.PARAMETER:
            lam = node_with_span(form.typed, binding.node.span, T.TyLam)
            return str(lam.params[binding.index][1]) if lam is not None else "?"
        if binding.kind == sc.LET:
            let = node_with_span(form.typed, binding.node.span, T.TyLet)
            return str(let.bindings[binding.index][1].type) if let is not None else "?"
        return "?"

    def completions(self, line: int, col: int) -> list[Completion]:
        """The names in scope at the position, with their types: keywords, primitives, the
        prelude's names, the definitions of the forms before it and the locals around it."""
        from .session import load_prelude
        from ..primitives import PRIMITIVES

        items: dict[str, Completion] = {k: Completion(k, "keyword", "keyword") for k in KEYWORDS}
        for name in PRIMITIVES:
            items[name] = Completion(name, primitive_type(name), "primitive")
        for name, binding in load_prelude()[0].items():
            items[name] = Completion(name, str(binding.type), "prelude")
        for form in self.forms:
            if (form.node.span.line, form.node.span.col) > (line, col):
                break
            if isinstance(form.syntax, S.Define) and not contains(form.node.span, line, col):
                detail = str(T.form_type(form.typed)) if form.typed is not None else "?"
                items[form.syntax.name] = Completion(form.syntax.name, detail, "definition")
        for b in self.scopes.bindings:
            if b.scope is not None and b.kind not in (sc.TYPE_VARIABLE, sc.INDEX_VARIABLE) and contains(b.scope, line, col):
                items[b.name] = Completion(b.name, self.binding_type(b), "local")
        return list(items.values())


def _parse(node: SNode) -> S.TopForm:
    from .session import deep_recursion
    from ..front.parse import parse_top

    with deep_recursion(node.span):
        return parse_top(node)


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


def primitive_type(name: str) -> str:
    """A primitive's type as an expression has it (``check`` prints it so), an overloaded atom
    type shown as ``x`` (Int or Float, or any atom type for ``select``)."""
    from ..primitives import PRIMITIVES
    from ..statics.indices import SCALAR
    from ..statics.primitive_types import primitive_type as type_of
    from ..statics.types import TArr

    return str(TArr(type_of(PRIMITIVES[name]), SCALAR))


def _symbols(node: SNode) -> set[str]:
    """Every symbol written in a form."""
    out: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, SList):
            stack.extend(n.items)
        elif isinstance(n, SAtom) and isinstance(n.value, str):
            out.add(n.value)
    return out


def _defined_name(node: SNode) -> set[str]:
    """The name a ``define`` form (even a malformed one) defines, if it says."""
    if isinstance(node, SList) and len(node.items) >= 2 and getattr(node.items[0], "value", None) == "define":
        target = node.items[1]
        if isinstance(target, SList) and target.items:
            target = target.items[0]
        if isinstance(target, SAtom) and isinstance(target.value, str):
            return {target.value}
    return set()


def _broken_form_line(text: str, error_line: int) -> int:
    """The first line of the top-level form that contains ``error_line`` (``error_line`` itself
    if no form spans it): everything before that line is complete forms."""
    depth, line, start = 0, 1, None
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind == "nl":
            line += 1
            if line > error_line:
                break
        elif kind == "open":
            if depth == 0:
                start = line
            depth += 1
        elif kind == "close" and depth > 0:
            depth -= 1
            if depth == 0:
                start = None
    return start if start is not None and depth > 0 else error_line


@functools.lru_cache(maxsize=1)
def prelude_definitions() -> dict[str, Span]:
    """Where the prelude defines each of its names (the files as installed)."""
    from .session import prelude_files

    out: dict[str, Span] = {}
    for path in prelude_files():
        for node in read(path.read_text(encoding="utf-8"), str(Path(path).resolve()), library=True):
            if isinstance(node, SList) and len(node.items) >= 2 and getattr(node.items[0], "value", None) == "define":
                target = node.items[1]
                if isinstance(target, SList) and target.items:
                    target = target.items[0]
                if isinstance(target, SAtom) and isinstance(target.value, str):
                    out[target.value] = target.span
    return out


__all__ = ["Document", "Completion", "KEYWORDS", "prelude_definitions", "primitive_type"]
