"""The reader: program text to S-expressions with source positions.

The token rules are sexpdata's (pinned 1.0.2): its brackets, whitespace, ``;`` comments and
atoms ending at any of them.  sexpdata itself knows nothing about positions and has several
traps (``t``/``nil`` become ``True``/``[]``, ``inf`` becomes a float, an unterminated string
raises ``AttributeError``, ``#;`` eats the rest of the line, deep nesting raises
``RecursionError``), so the reader is a small scanner that follows those rules exactly,
rejects everything Remora does not use with a located error, classifies each atom, and builds
the tree with a span on every node in the same single pass (decisions.md D42: parsing the text
a second time with sexpdata and zipping the two trees cost half of all reading, for a tree
the scanner had already made; the tests check that sexpdata reads every program they use the
same way).
"""

from __future__ import annotations

import re
from ..records import record
from typing import Union

from ..errors import RemoraSyntaxError, Source, Span

MAX_NESTING = 256
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


@record(frozen=True, eq=False)
class SAtom:
    """A token: an ``int``, ``float``, ``bool`` (``#t``/``#f``) or a symbol (``str``)."""

    value: Union[int, float, bool, str]
    span: Span

    @property
    def is_symbol(self) -> bool:
        return isinstance(self.value, str)

    def __repr__(self) -> str:
        return f"SAtom({self.value!r})"


@record(frozen=True, eq=False)
class SList:
    """A parenthesised ``( … )`` or bracketed ``[ … ]`` sequence."""

    items: tuple["SNode", ...]
    bracket: str
    span: Span

    def __repr__(self) -> str:
        return f"SList({self.bracket}{list(self.items)!r})"


SNode = Union[SAtom, SList]

# sexpdata's atom ends: its brackets, '"', its whitespace (string.whitespace) and ';'.
_TOKEN = re.compile(
    r"(?P<nl>\n)|(?P<ws>[ \t\r\x0b\x0c]+)|(?P<comment>;[^\n]*)|(?P<open>[(\[])"
    r"|(?P<close>[)\]])|(?P<string>\")|(?P<quote>')|(?P<atom>[^ \t\n\r\x0b\x0c()\[\]\";]+)"
)
_INT = re.compile(r"-?[0-9]+\Z")
_FLOAT = re.compile(r"-?([0-9]+\.[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?\Z|-?[0-9]+[eE][-+]?[0-9]+\Z")
_NUMERIC_START = re.compile(r"[-+]?\.?[0-9]")
_BAD_SYMBOL_CHARS = set("'`,\\|{}")
_CLOSER = {"(": ")", "[": "]"}


def visible(text: str) -> str:
    """``text`` for a message: unprintable characters (and line separators) written as escapes."""
    return "".join(c if c.isprintable() and c not in "\u2028\u2029" else repr(c)[1:-1] for c in text)


def classify_atom(text: str) -> Union[int, float, bool, str]:
    """The value of one token, or ``ValueError`` with a message saying what is wrong with it."""
    if text[:1].isalpha() and text.isalnum():  # a plain name (the common case): none of the below applies
        return text
    if text == "#t":
        return True
    if text == "#f":
        return False
    if text.startswith("#"):
        raise ValueError(f"unknown token `{visible(text)}`: the only `#` forms are #t and #f")
    if _INT.match(text):
        value = int(text)
        if not INT64_MIN <= value <= INT64_MAX:
            raise ValueError(f"integer literal {visible(text)} does not fit in a 64-bit Int")
        return value
    if _FLOAT.match(text):
        value = float(text)
        if value in (float("inf"), float("-inf")):
            raise ValueError(f"float literal {visible(text)} is too large for a 64-bit Float")
        return value
    if _NUMERIC_START.match(text):
        raise ValueError(f"malformed number `{visible(text)}`")
    bad = sorted(set(text) & _BAD_SYMBOL_CHARS)
    if bad or not text.isprintable():
        what = " ".join(repr(c) for c in bad) if bad else "an unprintable character"
        raise ValueError(f"bad token `{visible(text)}`: {what} cannot appear in a Remora name")
    return text


_NOT_SEEN = object()


class _Open:
    """A bracket the scanner has opened and not yet closed: where, and the nodes inside so far."""

    __slots__ = ("line", "col", "bracket", "items")

    def __init__(self, line: int, col: int, bracket: str):
        self.line, self.col, self.bracket = line, col, bracket
        self.items: list[SNode] = []

    def span(self, source: Source) -> Span:
        return Span(source, self.line, self.col, self.line, self.col + 1)


def read(text: str, name: str = "<expr>", library: bool = False, first_line: int = 1) -> list[SNode]:
    """Read all top-level forms of ``text``; ``name`` is what error reports call it, ``first_line``
    the number they give the text's first line."""
    source = Source(name, text, library, first_line)
    top, still_open = _scan(source)
    if still_open:
        o = still_open[-1]
        raise RemoraSyntaxError(
            f"unclosed `{o.bracket}`: missing `{_CLOSER[o.bracket]}` before the end of the input", o.span(source)
        )
    return top


def is_incomplete(text: str) -> bool:
    """Whether ``text`` reads well so far but leaves a bracket open, so that more input may
    complete it (what a REPL asks before reading another line).  Text with any other reading
    error is not incomplete: more input cannot mend it, and its error is reported as it stands."""
    try:
        _, still_open = _scan(Source("<input>", text))
    except RemoraSyntaxError:
        return False
    return bool(still_open)


#: the groups of _TOKEN, by number (``lastindex``)
_NL, _WS, _COMMENT, _OPEN, _CLOSE, _STRING, _QUOTE, _ATOM = range(1, 9)


def _scan(source: Source) -> tuple[list[SNode], list[_Open]]:
    """The nodes of every complete form up to the end of the input, and the brackets still open
    there (innermost last); a located error for anything Remora cannot read."""
    text = source.text
    line, line_start = source.first_line, 0
    top: list[SNode] = []
    stack: list[_Open] = []
    siblings = top
    atoms: dict[str, object] = {}  # (each distinct token is classified once)
    for m in _TOKEN.finditer(text):  # (the alternatives cover every character: one match after another)
        kind = m.lastindex
        if kind == _WS or kind == _COMMENT:
            continue
        if kind == _NL:
            line, line_start = line + 1, m.end()
            continue
        col = m.start() - line_start + 1
        if kind == _ATOM:
            tok = m.group()
            value = atoms.get(tok, _NOT_SEEN)
            if value is _NOT_SEEN:
                if tok == "#" and text.startswith(";", m.end()):
                    raise RemoraSyntaxError("datum comments (#;) are not supported; use ; to comment out a line",
                                            Span(source, line, col, line, col + 1))
                try:
                    value = atoms[tok] = classify_atom(tok)
                except ValueError as exc:
                    raise RemoraSyntaxError(str(exc), Span(source, line, col, line, col + len(tok))) from None
            siblings.append(SAtom(value, Span(source, line, col, line, col + len(tok))))  # type: ignore[arg-type]
        elif kind == _OPEN:
            if len(stack) >= MAX_NESTING:
                raise RemoraSyntaxError(f"brackets nested deeper than {MAX_NESTING} levels",
                                        Span(source, line, col, line, col + 1))
            opened = _Open(line, col, m.group())
            stack.append(opened)
            siblings = opened.items
        elif kind == _CLOSE:
            tok = m.group()
            if not stack:
                raise RemoraSyntaxError(f"unexpected `{tok}` with no open bracket to close",
                                        Span(source, line, col, line, col + 1))
            opened = stack.pop()
            if _CLOSER[opened.bracket] != tok:
                raise RemoraSyntaxError(
                    f"`{tok}` does not match the `{opened.bracket}` opened at line {opened.line}, "
                    f"column {opened.col} (expected `{_CLOSER[opened.bracket]}`)",
                    Span(source, line, col, line, col + 1),
                )
            siblings = stack[-1].items if stack else top
            siblings.append(SList(tuple(opened.items), opened.bracket, Span(source, opened.line, opened.col, line, col + 1)))
        elif kind == _STRING:
            raise RemoraSyntaxError("strings are not part of Remora", Span(source, line, col, line, col + 1))
        else:
            raise RemoraSyntaxError("quote (') is not part of Remora", Span(source, line, col, line, col + 1))
    return top, stack


def show(node: SNode) -> str:
    """The node as Remora source text (used in error messages)."""
    if isinstance(node, SAtom):
        v = node.value
        if v is True:
            return "#t"
        if v is False:
            return "#f"
        return repr(v) if isinstance(v, float) else str(v)
    inner = " ".join(show(i) for i in node.items)
    return f"{node.bracket}{inner}{_CLOSER[node.bracket]}"
