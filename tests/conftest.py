"""Shared helpers: check or run Remora source and look at types, values and errors."""

from __future__ import annotations

import pytest

from remora.driver import Session
from remora.errors import RemoraError
from remora.typed import form_type


def check_types(source: str) -> list[str]:
    """The printed type of every top-level form."""
    return [str(form_type(f)) for f in Session().check_text(source, "<test>")]


def check_type(source: str) -> str:
    """The printed type of the last top-level form."""
    return check_types(source)[-1]


def check_error(source: str, kind: type[RemoraError] = RemoraError) -> RemoraError:
    """The error raised when checking ``source`` (the test fails if there is none)."""
    with pytest.raises(kind) as info:
        Session().check_text(source, "<test>")
    err = info.value
    assert err.span is not None, f"error without a location: {err.message}"
    return err
