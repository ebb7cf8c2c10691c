"""The Pygments lexer for Remora (``remora``, alias ``rem``, files ``*.rem``).

Registered through the ``pygments.lexers`` entry point, so ``pygmentize -l remora``, Sphinx,
MkDocs, Jupyter and the REPL (through prompt_toolkit) all highlight Remora with it.

It tokenizes with the reader's own token rules (:data:`remora.front.reader._TOKEN`) and classifies
each atom with the reader's :func:`~remora.front.reader.classify_atom`, so a program the reader
accepts never shows an error token, and what the reader rejects (strings, quotes, malformed
numbers, ``#;``) does.  Keywords come from the parser's tables, primitives from the primitive
registry and prelude names from the prelude's ``define``s — looked up on first use, so the
lexer stays current when a primitive or a prelude function is added.
"""

from __future__ import annotations

import functools
from typing import Iterator

from pygments.lexer import Lexer
from pygments.token import (
    Comment,
    Error,
    Keyword,
    Name,
    Number,
    Punctuation,
    Text,
    _TokenType,
)

__all__ = ["RemoraLexer", "classify"]


@functools.lru_cache(maxsize=1)
def _words() -> dict[str, _TokenType]:
    """The token type of every word with a fixed meaning: keywords, type constructors, kinds and
    sorts, primitives and the prelude's names (a later group never overrides an earlier one)."""
    from ..front.parse import BASE_TYPE_NAMES, EXPR_KEYWORDS, INDEX_KEYWORDS, KIND_NAMES, SORT_NAMES, TYPE_KEYWORDS
    from ..primitives import PRIMITIVES

    words: dict[str, _TokenType] = {}
    groups = (
        (EXPR_KEYWORDS, Keyword),
        (TYPE_KEYWORDS | set(BASE_TYPE_NAMES) | INDEX_KEYWORDS, Keyword.Type),
        (set(KIND_NAMES) | set(SORT_NAMES), Name.Class),
        (set(PRIMITIVES), Name.Builtin),
        (prelude_names(), Name.Builtin.Pseudo),
    )
    for names, token in groups:
        for name in names:
            words.setdefault(name, token)
    return words


def prelude_names() -> set[str]:
    """The names the prelude defines, read (not checked) from its files."""
    from .session import prelude_files
    from ..front.reader import SAtom, SList, read

    names: set[str] = set()
    try:
        files = prelude_files()
    except FileNotFoundError:
        return names
    for path in files:
        for node in read(path.read_text(encoding="utf-8"), str(path), library=True):
            if isinstance(node, SList) and len(node.items) >= 2 and _is(node.items[0], "define"):
                target = node.items[1]
                if isinstance(target, SList) and target.items:
                    target = target.items[0]
                if isinstance(target, SAtom) and target.is_symbol:
                    names.add(str(target.value))
    return names


def _is(node, word: str) -> bool:
    return getattr(node, "value", None) == word and isinstance(node.value, str)


def classify(token: str) -> _TokenType:
    """The token type of one atom, as the reader reads it."""
    from ..front.reader import classify_atom

    try:
        value = classify_atom(token)
    except ValueError:
        return Error
    if isinstance(value, bool):
        return Keyword.Constant
    if isinstance(value, int):
        return Number.Integer
    if isinstance(value, float):
        return Number.Float
    return _words().get(value, Name)


class RemoraLexer(Lexer):
    """Remora, the typed rank-polymorphic array language (Slepak, Shivers and Manolios)."""

    name = "Remora"
    aliases = ["remora", "rem"]
    filenames = ["*.rem"]
    mimetypes = ["text/x-remora"]
    url = "https://doi.org/10.1017/S0956796820000106"

    def get_tokens_unprocessed(self, text: str) -> Iterator[tuple[int, _TokenType, str]]:
        from ..front.reader import _TOKEN  # the reader's token rules, exactly

        pos = 0
        defining = 0  # 1 after `define`, 2 after `define (`: the next atom is the defined name
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            kind, tok = m.lastgroup, m.group()  # (the alternatives cover every character)
            if kind in ("nl", "ws"):
                yield pos, Text.Whitespace, tok
            elif kind == "comment":
                yield pos, Comment.Single, tok
            elif kind in ("open", "close"):
                defining = 2 if defining == 1 and tok == "(" else 0
                yield pos, Punctuation, tok
            elif kind == "atom":
                token = Error if tok == "#" and text.startswith(";", m.end()) else classify(tok)
                if defining and token is Name:
                    token = Name.Function
                defining = 1 if tok == "define" else 0
                yield pos, token, tok
            else:  # a string's quote or a quote: not Remora
                defining = 0
                yield pos, Error, tok
            pos = m.end()

    def analyse_text(text: str) -> float:  # type: ignore[misc]  (Pygments calls it on the class)
        return 0.3 if "(define" in text and ("(Shp" in text or "λ" in text or "[Float" in text) else 0.0
