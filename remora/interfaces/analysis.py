"""Every error of a program, form by form: what ``remora check`` and the language server report.

Running a program stops at its first error (a type error runs nothing); checking it for a
person goes on.  :func:`analyse` checks the top-level forms in order with one
:class:`~remora.interfaces.session.Session`, and after an error goes on with the next form:

- a form the reader cannot read (a stray ``)``, a string, an unclosed bracket) is reported,
  its text is blanked (line breaks kept, so every position stays where it was) and reading
  starts again: the forms around it are still read;
- a form that fails to parse or to check is reported, and the checker's definitions go back to
  what they were before it;
- a form that uses a name whose definition failed is skipped: its errors would only repeat the
  first one.

Only the first error of a form is found: the checker stops there (the rest of the form may
depend on what failed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from ..errors import RemoraError, RemoraSyntaxError
from ..front import syntax as S
from ..front.reader import _TOKEN, SAtom, SList, SNode, read
from ..statics import typed as T

#: reader errors recovered from in one text before the rest is given up (each costs a reading)
MAX_READER_ERRORS = 100


@dataclass
class Form:
    """A top-level form: as read (None for a reader error), as parsed (None if it failed to
    parse) and as checked (None if it failed or was skipped), with its error if it has one."""

    node: SNode | None
    syntax: S.TopForm | None = None
    typed: T.TyForm | None = None
    error: RemoraError | None = None


def analyse(session, text: str, name: str, *, contain_bugs: bool = False) -> Iterator[Form]:
    """Every form of ``text`` (reported as ``name``), checked in order in ``session``, as it is
    done; a reader error comes as a :class:`Form` without a node, in its place among the forms.
    With ``contain_bugs`` (an editor's server, which must go on) an exception that is not a
    :class:`RemoraError` — a bug in remora — becomes an error of its form; otherwise it propagates."""
    nodes, reader_errors = read_forms(text, name)
    failed: set[str] = set()
    for node in nodes:
        while reader_errors and _position(reader_errors[0]) < (node.span.line, node.span.col):
            yield Form(None, error=reader_errors.pop(0))
        form = Form(node)
        if not failed & _symbols(node):
            _analyse_form(session, form, contain_bugs)
            if form.error is not None:
                failed |= _defined_name(node)
        else:  # (skipped: not checked, but parsed if it parses, so its names are still known)
            form.syntax = _parsed(node)
        yield form
    for err in reader_errors:
        yield Form(None, error=err)


def _analyse_form(session, form: Form, contain_bugs: bool) -> None:
    """Parse and check one form, recording its typed tree or its error."""
    from ..front.parse import parse_top
    from .session import deep_recursion

    assert form.node is not None
    snapshot = dict(session.checker.globals)
    try:
        with deep_recursion(form.node.span):
            form.syntax = parse_top(form.node)
        form.typed = session.check_form(form.syntax)
        return
    except RemoraError as err:
        form.error = err.with_span(form.node.span)
    except Exception as exc:
        if not contain_bugs:
            raise
        form.error = RemoraError(f"remora: internal error: {type(exc).__name__}: {exc}", form.node.span)
    session.checker.globals.clear()
    session.checker.globals.update(snapshot)


def _parsed(node: SNode) -> S.TopForm | None:
    from ..front.parse import parse_top
    from .session import deep_recursion

    try:
        with deep_recursion(node.span):
            return parse_top(node)
    except RemoraError:
        return None


def read_forms(text: str, name: str) -> tuple[list[SNode], list[RemoraSyntaxError]]:
    """The forms the reader can read, and its errors in order: a form it cannot read is
    reported, blanked, and the text read again (see the module's docstring)."""
    errors: list[RemoraSyntaxError] = []
    readable = text
    while True:
        try:
            nodes = read(readable, name)
        except RemoraSyntaxError as err:
            errors.append(err)
            if len(errors) >= MAX_READER_ERRORS:
                return [], errors
            readable = _blank(readable, *_broken_form(readable, err.line or 1, err.column or 1))
            continue
        if nodes and readable is not text:
            # The forms' source is the text as written (the blanks only hid what could not be
            # read; every position is the same), so reports quote the lines as they are.
            nodes[0].span.source.text = text
        return nodes, sorted(errors, key=_position)


def _position(err: RemoraError) -> tuple[int, int]:
    return (err.line, err.column)


def _broken_form(text: str, line: int, col: int) -> tuple[int, int]:
    """The offsets (start, end) of the top-level form holding the position, brackets counted
    as the reader counts them (to the end of the text if it never closes); outside every form
    (a stray ``)``, a bad token), the token alone — a string to its closing quote."""
    offset = _offset(text, line, col)
    depth, start = 0, None
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind in ("nl", "ws", "comment"):
            continue
        if depth == 0 and m.end() > offset and kind != "open":
            if kind == "string":
                close = text.find('"', m.end(), _line_end(text, m.end()))
                return m.start(), (close + 1 if close >= 0 else _line_end(text, m.end()))
            return m.start(), m.end()
        if kind == "open":
            if depth == 0:
                start = m.start()
            depth += 1
        elif kind == "close" and depth > 0:
            depth -= 1
            if depth == 0:
                if m.end() > offset:
                    return start, m.end()  # type: ignore[return-value]
                start = None
    return (start if start is not None else offset), len(text)


def _line_end(text: str, offset: int) -> int:
    end = text.find("\n", offset)
    return len(text) if end < 0 else end


def _offset(text: str, line: int, col: int) -> int:
    lines = text.split("\n")
    return sum(len(t) + 1 for t in lines[: line - 1]) + col - 1


def _blank(text: str, start: int, end: int) -> str:
    """``text`` with the characters from ``start`` to ``end`` made spaces, line breaks kept."""
    return text[:start] + "".join(c if c == "\n" else " " for c in text[start:end]) + text[end:]


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


def defined_name(node: SNode) -> SAtom | None:
    """The name a ``define`` form (even a malformed one) defines, as written, if it says."""
    if isinstance(node, SList) and len(node.items) >= 2 and getattr(node.items[0], "value", None) == "define":
        target = node.items[1]
        if isinstance(target, SList) and target.items:
            target = target.items[0]
        if isinstance(target, SAtom) and isinstance(target.value, str):
            return target
    return None


def _defined_name(node: SNode) -> set[str]:
    name = defined_name(node)
    return {name.value} if name is not None else set()  # type: ignore[set-item]
