"""Shared helpers: check or run Remora source and look at types, values and errors."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

# The tests (and the processes they start) keep the prelude cache in a directory of their own,
# never in the user's (spec/interfaces.md, REMORA_CACHE_DIR).
_CACHE = tempfile.mkdtemp(prefix="remora-test-cache-")
os.environ["REMORA_CACHE_DIR"] = _CACHE
atexit.register(shutil.rmtree, _CACHE, ignore_errors=True)

from remora.interfaces.session import Session
from remora.errors import RemoraError
from remora.statics.typed import form_type

ROOT = Path(__file__).resolve().parents[1]


def pytest_configure(config) -> None:
    """Guard: a parametrised test whose parameter set is empty fails the run at collection
    (``empty_parameter_set_mark = fail_at_collect``, pyproject.toml) — pytest's default skips
    it, and a test with no cases checks nothing.  A run under another configuration that lost
    the setting is refused rather than quietly skipping such tests."""
    if config.getini("empty_parameter_set_mark") != "fail_at_collect":
        raise pytest.UsageError("the tests need empty_parameter_set_mark = fail_at_collect (pyproject.toml): "
                                "a parametrised test with no cases must fail, not be skipped")


def subprocess_env() -> dict[str, str]:
    """The environment for running ``python -m remora`` from the repository in a subprocess:
    this checkout first on the path, and no ``REMORA_DEBUG`` (it would add tracebacks)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("REMORA_DEBUG", None)
    return env


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


def _static_agrees(value, typ) -> None:
    """Every result has exactly the shape and atom type its static type promises."""
    import numpy as np

    from remora.statics.types import TArr, TBase, prune
    from remora.backends.numpy_backend import DTYPES

    t = prune(typ)
    assert isinstance(t, TArr), f"top-level type is not an array type: {t}"
    dims = t.shape.dims()
    assert dims is not None, f"top-level shape is not fully known: {t}"
    assert tuple(np.shape(value)) == dims, f"value shape {np.shape(value)} but type says {t}"
    atom = prune(t.atom)
    expected = DTYPES[atom.name] if isinstance(atom, TBase) else DTYPES["object"]
    assert np.asarray(value).dtype == expected, f"value dtype {np.asarray(value).dtype} but type says {t}"


def run_program(source: str, engine: str = "plans", stdin: str = "") -> list[tuple[str, object]]:
    """(printed value, raw value) for every expression form, on one engine."""
    import io

    from remora.interfaces.session import show_result
    from remora.dynamics.runtime import RunConfig
    from remora.statics.typed import TyExprForm

    session = Session(engine=engine, run=RunConfig(stdin=io.StringIO(stdin)))
    out = []
    for form, value in session.run_text(source, "<test>"):
        _static_agrees(value, form_type(form))
        if isinstance(form, TyExprForm):
            shown = show_result(form, value)
            if engine == "plans":
                _replay_agrees(session, form, shown)
            out.append((shown, value))
    return out


def _replay_agrees(session, form, shown: str) -> None:
    """A planned expression evaluated again replays its plan: the same value as the trace gave."""
    from remora.interfaces.session import show_result
    from remora.plans import PLANS

    erased = session.last_erased
    if PLANS.plans(erased):
        before = PLANS.stats["replayed"]
        again = session.engine.eval_form(erased)
        assert PLANS.stats["replayed"] > before or PLANS.plans(erased) == [], "the plan was not replayed"
        _static_agrees(again, form_type(form))
        assert show_result(form, again) == shown, "a plan's replay disagrees with its trace"


def eval_values(source: str, stdin: str = "") -> list[str]:
    """The printed values of every expression form, after checking both engines agree on them."""
    from remora.dynamics.values import arrays_equal

    fast = run_program(source, "plans", stdin)
    slow = run_program(source, "reference", stdin)
    assert [p for p, _ in fast] == [p for p, _ in slow], "engines disagree"
    for (_, a), (_, b) in zip(fast, slow):
        if getattr(a, "dtype", None) != object:
            assert arrays_equal(a, b), "engines disagree"
    return [p for p, _ in fast]


def eval_value(source: str, stdin: str = "") -> str:
    """The printed value of the last expression form (both engines, checked to agree)."""
    return eval_values(source, stdin)[-1]


def eval_error(source: str, engine: str = "plans", stdin: str = "") -> RemoraError:
    """The error raised while checking or running ``source`` on ``engine``."""
    with pytest.raises(RemoraError) as info:
        run_program(source, engine, stdin)
    assert info.value.span is not None, f"error without a location: {info.value.message}"
    return info.value


def counting(monkeypatch, owner, name: str) -> list:
    """Count the calls of ``owner.name`` (still calling it)."""
    calls: list = []
    original = getattr(owner, name)

    def counted(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls
