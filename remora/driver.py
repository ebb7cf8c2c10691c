"""The pipeline, stage by stage: read → parse → typecheck (→ erase → evaluate).

A :class:`Session` holds what persists between top-level forms — the typing
environment, and the values of definitions — so the command line, the REPL and
the Python API are three front doors to the same functions.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Iterator

from . import syntax as S
from . import typed as T
from .errors import RemoraError, RemoraSyntaxError, Span
from .parse import parse_top
from .reader import read
from .typecheck import Checker

RECURSION_LIMIT = 20000


@contextlib.contextmanager
def deep_recursion(span: Span | None = None) -> Iterator[None]:
    """Room for deeply nested (but bracket-limited) programs; a located error if even that runs out."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, RECURSION_LIMIT))
    try:
        yield
    except RecursionError:
        raise RemoraSyntaxError("this form is nested too deeply to process", span) from None
    finally:
        sys.setrecursionlimit(old)


class Session:
    """Checker state across top-level forms."""

    def __init__(self) -> None:
        self.checker = Checker()

    def forms(self, text: str, name: str) -> list[S.TopForm]:
        """Read and parse every top-level form (syntax errors surface before any checking)."""
        with deep_recursion():
            return [parse_top(node) for node in read(text, name)]

    def check_form(self, form: S.TopForm) -> T.TyForm:
        with deep_recursion(form.span):
            return self.checker.check_form(form)

    def check_text(self, text: str, name: str = "<expr>") -> list[T.TyForm]:
        return [self.check_form(f) for f in self.forms(text, name)]


def describe_form(form: T.TyForm) -> str:
    """What ``remora check`` prints for a form: ``name : TYPE`` or ``TYPE``."""
    t = T.form_type(form)
    return f"{form.name} : {t}" if isinstance(form, T.TyDefine) else str(t)


__all__ = ["Session", "describe_form", "RemoraError", "deep_recursion"]
