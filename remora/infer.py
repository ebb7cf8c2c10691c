"""Automatic instantiation of Forall/Pi functions (contract §4)."""

from __future__ import annotations

from .errors import RemoraTypeError
from .types import show_type


def instantiate_for_application(checker, e, fn, args, env):
    """Instantiate the polymorphic function array ``fn`` for the arguments ``args``."""
    raise RemoraTypeError(
        f"this function is polymorphic, of type {show_type(fn.type)}: give its arguments with i-app/t-app",
        fn.span,
    )
