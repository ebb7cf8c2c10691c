"""Located user errors.

Every mistake a user can make surfaces as a :class:`RemoraError` that knows
where in the source it happened.  The CLI, the REPL and the Python API all
print the same report: ``FILE:LINE:COL: error: MESSAGE``, the source line, and
a caret under the culprit, followed by optional notes (index bindings,
counterexamples).  A Python traceback reaching a user is a bug.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

from .records import record


@record(frozen=True, eq=False)
class Source:
    """A program text with the name it is reported under (a path, ``<expr>``, ``<repl>``)."""

    name: str
    text: str
    #: the prelude's text: errors raised in it at run time are reported at the user's call
    library: bool = False
    #: the number of the text's first line (a REPL input is numbered as a line of its input stream)
    first_line: int = 1

    def line_text(self, line: int) -> str:
        lines = self.text.split("\n")
        if 1 <= line - self.first_line + 1 <= len(lines):
            return lines[line - self.first_line].rstrip("\r")
        return ""


@record(frozen=True, eq=False)
class Span:
    """A source region: 1-based line and column of its start and (exclusive) end."""

    source: Source
    line: int
    col: int
    end_line: int
    end_col: int

    def __repr__(self) -> str:
        return f"{self.source.name}:{self.line}:{self.col}"


@record(frozen=True, eq=False)
class Edit:
    """Replace the text of ``span`` by ``text`` (an empty span inserts it there)."""

    span: Span
    text: str


@record(frozen=True, eq=False)
class Fix:
    """A change that mends an error, as its message suggests it (``use int->float, or write
    2.0``, ``did you mean `tan`?``): what editors offer as a quick fix and ``remora check
    --output-format=json`` lists.  ``title`` says what it does."""

    title: str
    edits: tuple


def replace_with(span: Span, text: str, title: str | None = None) -> Fix:
    """The fix that writes ``text`` in place of ``span``."""
    return Fix(title or f"write `{text}`", (Edit(span, text),))


def wrap_in(span: Span, function: str) -> Fix:
    """The fix that applies ``function`` to the expression at ``span``: ``(function …)``."""
    before = Span(span.source, span.line, span.col, span.line, span.col)
    after = Span(span.source, span.end_line, span.end_col, span.end_line, span.end_col)
    return Fix(f"apply `{function}`", (Edit(before, f"({function} "), Edit(after, ")")))


class RemoraError(Exception):
    """A user-facing error with a source location.

    ``str(err)`` is exactly the report the command line prints; ``message`` is the bare
    one-line description; ``notes`` are extra lines printed after the caret.
    """

    kind = "error"

    def __init__(self, message: str, span: Span | None = None, notes: list[str] | None = None, *, origin: str = ""):
        super().__init__(message)
        self.message = message
        self.span = span
        self.notes: list[str] = list(notes or [])
        #: what the error concerns when it is about no source text (``input x``): the report
        #: names it in place of a place (``input x: error: …``)
        self.origin = origin
        #: the changes that would mend it, where its message suggests some (:class:`Fix`)
        self.fixes: list[Fix] = []

    def fixed_by(self, *fixes: Fix) -> "RemoraError":
        """This error, with ``fixes`` among the changes that would mend it."""
        self.fixes.extend(fixes)
        return self

    @property
    def line(self) -> int:
        return self.span.line if self.span else 0

    @property
    def column(self) -> int:
        return self.span.col if self.span else 0

    @property
    def file(self) -> str:
        return self.span.source.name if self.span else self.origin or "<unknown>"

    def with_span(self, span: Span | None) -> "RemoraError":
        """Give a location to an error raised where none was known (keeps an existing one)."""
        if self.span is None and span is not None:
            self.span = span
        return self

    def first_line(self) -> str:
        if self.span is None and self.origin:  # (about no source text: named, not located at 0:0)
            return f"{self.origin}: error: {self.message}"
        return f"{self.file}:{self.line}:{self.column}: error: {self.message}"

    def report(self) -> str:
        out = [self.first_line()]
        if self.span is not None:
            out.extend(_caret_lines(self.span))
        out.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(out)

    def __str__(self) -> str:
        return self.report()


class RemoraSyntaxError(RemoraError):
    """The text is not a well-formed Remora program (reader or form structure)."""


class RemoraTypeError(RemoraError):
    """The program is well-formed but ill-sorted, ill-kinded or ill-typed."""


class RemoraRuntimeError(RemoraError):
    """A well-typed program failed while running (division by zero, resource limit, ...)."""


class RemoraBackendError(RemoraRuntimeError):
    """The array library a program runs on failed (a Dask worker killed, a block too large to
    allocate): not the program's mistake, but reported at the form whose value was being computed."""


@contextlib.contextmanager
def located_at(span: Span | None) -> Iterator[None]:
    """A :class:`RemoraBackendError` raised inside located at ``span`` (the form or application
    whose value was being computed: a Dask value's tasks run long after the expression that built
    them, so that is the finest place to name)."""
    try:
        yield
    except RemoraBackendError as err:
        raise err.with_span(span)


def span_text(span: Span, limit: int = 60) -> str:
    """The source text a span covers (its first line, shortened), for quoting in messages."""
    text = span.source.line_text(span.line)
    end = span.end_col - 1 if span.end_line == span.line else len(text)
    quoted = text[span.col - 1 : end]
    return quoted if len(quoted) <= limit else quoted[: limit - 1] + "…"


def relocate_library_error(err: RemoraError, call: Span | None, callee: str | None = None) -> None:
    """An error raised inside a prelude definition is the user's application's error: point at the
    call, name the function called (``callee``, when it is written as a name), and say where in
    the prelude it happened — a user reads "`iterate` failed: iota/v of a negative length", not
    a message about code they never wrote."""
    if err.span is not None and err.span.source.library and call is not None and not call.source.library:
        where = err.span
        err.notes.insert(0, f"inside the prelude, at {where.source.name}:{where.line}:{where.col}: {span_text(where)}")
        err.message = f"`{callee}` failed: {err.message}" if callee else f"a prelude function failed: {err.message}"
        err.span = call


def _caret_lines(span: Span) -> list[str]:
    text = span.source.line_text(span.line)
    if not text.strip():
        return []
    start = max(span.col - 1, 0)
    end = span.end_col - 1 if span.end_line == span.line else len(text)
    end = max(min(end, len(text)), start + 1)
    # Reuse the line's own tabs so the caret lines up however the terminal expands them.
    pad = "".join(c if c == "\t" else " " for c in text[:start])
    return ["    " + text, "    " + pad + "^" * (end - start)]

