"""The reader: program text to S-expressions with source positions.

sexpdata (pinned 1.0.2) parses the data; it knows nothing about positions and has
several traps (``t``/``nil`` become ``True``/``[]``, ``inf`` becomes a float, an
unterminated string raises ``AttributeError``, deep nesting raises
``RecursionError``).  So the text is first *scanned* by a small span-recording
tokenizer that follows sexpdata's token rules exactly, rejects everything
Remora does not use with a located error, and records a position tree; then
sexpdata parses the (now known-good) text with a Remora atom classifier; finally
the two trees are zipped, giving every node its span.
"""

from __future__ import annotations

import re
from ..records import record
from typing import Union

import sexpdata

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


class _Parser(sexpdata.Parser):
    """sexpdata's parser with Remora's atoms: ``t``/``nil``/``inf``/``nan`` stay symbols.
    ``atoms`` holds each token's value as the scanner classified it (each is classified once)."""

    def __init__(self, text: str, atoms: dict[str, object]):
        super().__init__(text, nil=None, true=None, false=None)
        self.atoms = atoms

    def atom(self, token):  # noqa: D102 - sexpdata hook
        value = self.atoms.get(token, _NOT_SEEN)
        if value is _NOT_SEEN:
            value = classify_atom(token)
        return sexpdata.Symbol(value) if isinstance(value, str) else value


_NOT_SEEN = object()


class _Pos:
    """The scanner's record of one node: where it is, and its children if it is a list (its
    :class:`Span` is made once, when the node is)."""

    __slots__ = ("line", "col", "end_line", "end_col", "children", "bracket")

    def __init__(self, line: int, col: int, end_line: int, end_col: int, children=None, bracket: str = ""):
        self.line, self.col, self.end_line, self.end_col = line, col, end_line, end_col
        self.children: list[_Pos] | None = children
        self.bracket = bracket

    def span(self, source: Source) -> Span:
        return Span(source, self.line, self.col, self.end_line, self.end_col)


def read(text: str, name: str = "<expr>", library: bool = False, first_line: int = 1) -> list[SNode]:
    """Read all top-level forms of ``text``; ``name`` is what error reports call it, ``first_line``
    the number they give the text's first line."""
    source = Source(name, text, library, first_line)
    atoms: dict[str, object] = {}
    positions = _scan(source, atoms)
    try:
        data = _Parser(text, atoms).parse()
    except (Exception, RecursionError) as exc:  # the scanner should have caught it first
        raise RemoraSyntaxError(f"cannot read program: {exc}", _start_span(source)) from None
    return [_zip(d, p, source) for d, p in _aligned(data, positions, source)]


def _start_span(source: Source) -> Span:
    return Span(source, source.first_line, 1, source.first_line, 2)


def is_incomplete(text: str) -> bool:
    """Whether ``text`` reads well so far but leaves a bracket open, so that more input may
    complete it (what a REPL asks before reading another line).  Text with any other reading
    error is not incomplete: more input cannot mend it, and its error is reported as it stands."""
    try:
        _, still_open = _scan_tokens(Source("<input>", text), {})
    except RemoraSyntaxError:
        return False
    return bool(still_open)


def _scan(source: Source, atoms: dict[str, object]) -> list[_Pos]:
    """Tokenize like sexpdata does, returning the position tree or raising a located error."""
    top, still_open = _scan_tokens(source, atoms)
    if still_open:
        o = still_open[-1]
        raise RemoraSyntaxError(
            f"unclosed `{o.bracket}`: missing `{_CLOSER[o.bracket]}` before the end of the input", o.span(source)
        )
    return top


#: the groups of _TOKEN, by number (``lastindex``)
_NL, _WS, _COMMENT, _OPEN, _CLOSE, _STRING, _QUOTE, _ATOM = range(1, 9)


def _scan_tokens(source: Source, atoms: dict[str, object]) -> tuple[list[_Pos], list[_Pos]]:
    """The position tree of every token up to the end of the input, and the brackets still open
    there (innermost last); a located error for anything Remora cannot read.  ``atoms`` gets
    the value of every atom token (by its text)."""
    text = source.text
    line, line_start = source.first_line, 0
    top: list[_Pos] = []
    stack: list[_Pos] = []
    siblings = top
    for m in _TOKEN.finditer(text):  # (the alternatives cover every character: one match after another)
        kind = m.lastindex
        if kind == _WS or kind == _COMMENT:
            continue
        if kind == _NL:
            line, line_start = line + 1, m.end()
            continue
        start = m.start()
        col = start - line_start + 1
        if kind == _ATOM:
            tok = m.group()
            if tok not in atoms:
                if tok == "#" and text.startswith(";", m.end()):
                    raise RemoraSyntaxError("datum comments (#;) are not supported; use ; to comment out a line",
                                            Span(source, line, col, line, col + 1))
                try:
                    atoms[tok] = classify_atom(tok)
                except ValueError as exc:
                    raise RemoraSyntaxError(str(exc), Span(source, line, col, line, col + len(tok))) from None
            siblings.append(_Pos(line, col, line, col + len(tok)))
        elif kind == _OPEN:
            if len(stack) >= MAX_NESTING:
                raise RemoraSyntaxError(f"brackets nested deeper than {MAX_NESTING} levels",
                                        Span(source, line, col, line, col + 1))
            node = _Pos(line, col, line, col + 1, [], m.group())
            siblings.append(node)
            stack.append(node)
            siblings = node.children  # type: ignore[assignment]
        elif kind == _CLOSE:
            tok = m.group()
            if not stack:
                raise RemoraSyntaxError(f"unexpected `{tok}` with no open bracket to close",
                                        Span(source, line, col, line, col + 1))
            opener = stack.pop()
            if _CLOSER[opener.bracket] != tok:
                raise RemoraSyntaxError(
                    f"`{tok}` does not match the `{opener.bracket}` opened at line {opener.line}, "
                    f"column {opener.col} (expected `{_CLOSER[opener.bracket]}`)",
                    Span(source, line, col, line, col + 1),
                )
            opener.end_line, opener.end_col = line, col + 1
            siblings = stack[-1].children if stack else top  # type: ignore[assignment]
        elif kind == _STRING:
            raise RemoraSyntaxError("strings are not part of Remora", Span(source, line, col, line, col + 1))
        else:
            raise RemoraSyntaxError("quote (') is not part of Remora", Span(source, line, col, line, col + 1))
    return top, stack


def _aligned(data: list, positions: list[_Pos], source: Source):
    if len(data) != len(positions):  # cannot happen unless scanner and sexpdata disagree
        raise RemoraSyntaxError("cannot read program (reader disagreement)", _start_span(source))
    return zip(data, positions)


def _zip(datum, pos: _Pos, source: Source) -> SNode:
    span = Span(source, pos.line, pos.col, pos.end_line, pos.end_col)
    if pos.children is None:
        if isinstance(datum, (list, sexpdata.Brackets)):
            raise RemoraSyntaxError("cannot read program (reader disagreement)", span)
        value = str(datum) if isinstance(datum, sexpdata.Symbol) else datum
        return SAtom(value, span)
    items = datum.I if isinstance(datum, sexpdata.Brackets) else datum
    if not isinstance(items, (list, tuple)):
        raise RemoraSyntaxError("cannot read program (reader disagreement)", span)
    children = tuple(_zip(d, p, source) for d, p in _aligned(list(items), pos.children, source))
    return SList(children, pos.bracket, span)


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
