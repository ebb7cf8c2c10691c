"""``remora check PATH...``: every error of every program, as linters report them.

- One program (a ``FILE``, ``-`` or ``-e EXPR``) prints what contract §3 says: ``name : TYPE``
  or ``TYPE`` for each form that checks, in order, on standard output; an error is reported on
  standard error where its form would have printed, and checking goes on with the next form
  (:mod:`remora.interfaces.analysis`).
- Several programs, or a directory (searched recursively for ``*.rem``, hidden directories left
  out), print only their errors: a type listing of many files would bury them.
- After any error a closing line says how many: ``Found 3 errors in 2 files (checked 9 files)``
  (mypy's wording); a check of several files without errors says ``No errors in 9 files``.
- ``--output-format=json`` prints one JSON array on standard output instead — an object per
  error with its file, position, end, severity, message, notes and fixes, field names as in
  ruff's JSON (spec/interfaces.md has its schema) — and nothing else.

The exit status is 1 if any program has an error, 2 if a file could not be read (the others are
still checked), else 0.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import Fix, RemoraError, Span

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


@dataclass
class Outcome:
    """What a check found: the errors, by file, and the files it could not read."""

    checked: int = 0
    errors: list[RemoraError] = field(default_factory=list)
    files_with_errors: set[str] = field(default_factory=set)
    unreadable: int = 0

    def add(self, name: str, err: RemoraError) -> None:
        self.errors.append(err)
        self.files_with_errors.add(name)

    @property
    def status(self) -> int:
        return EXIT_USAGE if self.unreadable else EXIT_ERROR if self.errors else EXIT_OK


def program_files(path: str) -> list[str]:
    """The programs a ``PATH`` operand names: itself if it is not a directory, else every
    ``*.rem`` below it (in sorted order, hidden directories left out), named as found."""
    if not os.path.isdir(path):
        return [path]
    found = []
    for folder, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(os.path.join(folder, f) for f in sorted(files) if f.endswith(".rem"))
    return found


def check_programs(sources: list[tuple[str, Callable[[], str]]], make_session: Callable[[], Any],
                   show: Callable[[Any], str] | None, emit: Callable[[str], None],
                   report: Callable[[RemoraError], None], unreadable: Callable[[str, Exception], None]) -> Outcome:
    """Check each program — (name, function reading its text) — in a session of its own
    (``make_session``: the prelude and inputs bound); ``show`` is what a form that checks
    prints (None: nothing), through ``emit``; each error goes to ``report`` as it is found."""
    from .analysis import analyse
    from .streams import SourceError

    outcome = Outcome()
    for name, read_text in sources:
        try:
            text = read_text()
        except SourceError as exc:
            outcome.unreadable += 1
            unreadable(name, exc)
            continue
        outcome.checked += 1
        for form in analyse(make_session(), text, name):
            if form.error is not None:
                outcome.add(name, form.error)
                report(form.error)
            elif form.typed is not None and show is not None:
                emit(show(form.typed))
    return outcome


def summary(outcome: Outcome, several: bool, expression: bool = False) -> str | None:
    """The closing line: ``Found N errors in M files``; for several files without errors,
    ``No errors in K files``; else None."""
    if outcome.errors:
        n, m = len(outcome.errors), len(outcome.files_with_errors)
        line = f"Found {_count(n, 'error')}"
        if not expression:
            line += f" in {_count(m, 'file')}"
        if several:
            line += f" (checked {_count(outcome.checked, 'file')})"
        return line
    if several:
        return f"No errors in {_count(outcome.checked, 'file')}"
    return None


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


# ---------------------------------------------------------------------------
# JSON (ruff's field names; the schema is in spec/interfaces.md)


def as_json(errors: list[RemoraError]) -> str:
    """The errors as the JSON array ``--output-format=json`` prints."""
    return json.dumps([diagnostic(err) for err in errors], indent=2, ensure_ascii=False)


def diagnostic(err: RemoraError) -> dict:
    """One error as a JSON object: where (1-based rows and columns in characters, the end
    exclusive; null for an error about no source text, e.g. an input), what, and its fixes."""
    return {
        "filename": err.file,
        "location": _location(err.span, end=False),
        "end_location": _location(err.span, end=True),
        "severity": err.kind,
        "code": _code(err),
        "message": err.message,
        "notes": list(err.notes),
        "fixes": [_fix(f) for f in err.fixes],
    }


def _location(span: Span | None, end: bool) -> dict | None:
    if span is None:
        return None
    return {"row": span.end_line, "column": span.end_col} if end else {"row": span.line, "column": span.col}


def _code(err: RemoraError) -> str:
    """The stage that found the error: ``syntax-error``, ``type-error``, ``runtime-error`` (a
    data file's contents are checked when read), or ``error``."""
    from ..errors import RemoraRuntimeError, RemoraSyntaxError, RemoraTypeError

    for cls, code in ((RemoraSyntaxError, "syntax-error"), (RemoraTypeError, "type-error"),
                      (RemoraRuntimeError, "runtime-error")):
        if isinstance(err, cls):
            return code
    return "error"


def _fix(fix: Fix) -> dict:
    return {
        "message": fix.title,
        "edits": [{"content": e.text, "location": _location(e.span, end=False),
                   "end_location": _location(e.span, end=True)} for e in fix.edits],
    }


def read_program(path: str) -> Callable[[], str]:
    """The function that reads the program at ``path`` (``-``: standard input)."""
    import sys

    from .streams import read_source

    if path == "-":
        return lambda: sys.stdin.read().replace("\r\n", "\n")
    return lambda: read_source(path)
