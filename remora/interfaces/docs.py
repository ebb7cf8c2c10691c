"""What a name is, for people: its type and its documentation (the REPL's ``:doc NAME``, the
language server's hover and signature help).

- A primitive: its type as an expression has it (an overloaded atom type shown as ``x``) and
  its documentation, from the one table that defines it (:mod:`remora.primitives`).
- A definition — the prelude's or a program's: its type and the comment lines written just
  above its ``define`` (``;; sum: the sum of a vector's items …``), the convention the
  prelude follows.
- A keyword: the forms it starts (contract §1).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Mapping

from ..errors import Span
from ..front import syntax as S
from ..front.reader import read
from .analysis import defined_name
from .signatures import parameter_names

#: the forms each keyword starts, as contract §1 writes them
KEYWORD_FORMS = {
    "define": "(define x e), (define (f (x τ) ...) e), (define (f (x τ) ...) : τ_r e), (define f : τ e)",
    "λ": "(λ ((x τ) ...) e): a function", "lambda": "(lambda ((x τ) ...) e): λ",
    "Tλ": "(Tλ ((t k) ...) e): abstraction over types", "t-lambda": "(t-lambda ((t k) ...) e): Tλ",
    "Iλ": "(Iλ ((n γ) ...) e): abstraction over indices", "i-lambda": "(i-lambda ((n γ) ...) e): Iλ",
    "let": "(let ((x e) ...) body): sequential bindings",
    "array": "(array (n ...) a ...): an array of atoms; (array (n ...) τ): an empty one",
    "frame": "(frame (n ...) e ...): an array of cells; (frame (n ...) τ): an empty one",
    "t-app": "(t-app e τ ...): type application", "i-app": "(i-app e ι ...): index application",
    "unbox": "(unbox (x_i ... x_e e) body): open a box (or a frame of boxes)",
    "box": "(box ι ... e τ): a box of a dependent sum type",
    "if": "(if c e_then e_else): c a Bool scalar; only the chosen branch is evaluated",
    "for": "(for ((i n) ...) e): the array of e over every index",
}


def describe(name: str, definitions: Mapping[str, object], comments: Mapping[str, str | None] | None = None) -> str | None:
    """``name``'s type and documentation as plain text, or None for a name nothing binds.
    ``definitions`` are the globals in scope (name → :class:`~remora.statics.typed.Global`: the
    prelude's and the program's), ``comments`` the comments above the program's own definitions
    (:func:`leading_comment`); the prelude's are read from its files."""
    from ..primitives import PRIMITIVES

    found = definitions.get(name)
    if found is not None and not name.startswith("%"):
        if comments is not None and name in comments:
            comment = comments[name]
        else:
            where = prelude_definitions().get(name)
            comment = leading_comment(where) if where is not None else None
        return f"{name} : {found.type}" + (f"\n\n{comment}" if comment else "")  # type: ignore[attr-defined]
    if name in PRIMITIVES:
        return f"{name} : {primitive_type(name)}\n\n{PRIMITIVES[name].doc.strip()}"
    if name in KEYWORD_FORMS:
        return f"{name} — a keyword: {KEYWORD_FORMS[name]}"
    return None


def leading_comment(span: Span) -> str | None:
    """The comment lines written just above the line of ``span`` (the ``;``s and one space taken
    off each), or None; a blank line ends them."""
    lines = span.source.text.split("\n")
    i = span.line - span.source.first_line - 1
    found: list[str] = []
    while 0 <= i < len(lines) and lines[i].lstrip().startswith(";"):
        found.append(lines[i].lstrip().lstrip(";").removeprefix(" ").rstrip())
        i -= 1
    return "\n".join(reversed(found)) or None


def primitive_type(name: str) -> str:
    """A primitive's type as an expression has it (``check`` prints it so), an overloaded atom
    type shown as ``x`` (Int or Float, or any atom type for ``select``)."""
    from ..primitives import PRIMITIVES
    from ..statics.indices import SCALAR
    from ..statics.primitive_types import primitive_type as type_of
    from ..statics.types import TArr

    return str(TArr(type_of(PRIMITIVES[name]), SCALAR))


@functools.lru_cache(maxsize=1)
def prelude_definitions() -> dict[str, Span]:
    """Where the prelude defines each of its names (the files as installed)."""
    from .session import prelude_files

    out: dict[str, Span] = {}
    for path in prelude_files():
        for node in read(path.read_text(encoding="utf-8"), str(Path(path).resolve()), library=True):
            target = defined_name(node)
            if target is not None:
                out[str(target.value)] = target.span
    return out


@functools.lru_cache(maxsize=1)
def prelude_parameters() -> dict[str, list[str]]:
    """The parameter names of the prelude's functions (by the λ each definition is)."""
    from ..front.parse import parse_top
    from .session import prelude_files

    out: dict[str, list[str]] = {}
    for path in prelude_files():
        for node in read(path.read_text(encoding="utf-8"), str(Path(path).resolve()), library=True):
            if defined_name(node) is not None:
                form = parse_top(node)
                names = parameter_names(form.value) if isinstance(form, S.Define) else None
                if names is not None:
                    out[form.name] = names
    return out
