"""A bug in remora reaches the tests, never a slow path or another answer (issue 29, the audit).

Every handler in ``remora/`` that catches ``Exception``, ``BaseException`` or everything (a bare
``except:``) either re-raises what it caught (its last statement a bare ``raise``: cleanup, such
as undoing a definition, and the exception goes on unchanged) or is one of the deliberate sites
below: the one "internal error" handler of each entry point, and the call of a user's own Python
function.  The JAX lowering (``backends/jax_*.py``) and the padded pass (``dynamics/padded.py``)
are left to their own rewrite.  The sites that were narrowed have a test of their own here.
"""

from __future__ import annotations

import ast
import pickle
from pathlib import Path

import numpy as np
import pytest

import remora
from conftest import ROOT

#: (module, enclosing function): why it may catch everything
DELIBERATE = {
    ("remora/interfaces/cli.py", "main"): "the command line's internal-error handler (message, exit 1)",
    ("remora/interfaces/repl.py", "handle"): "the REPL's internal-error handler (message, the session goes on)",
    ("remora/interfaces/analysis.py", "_analyse_form"): "the language server's (a diagnostic on the form)",
    ("remora/interfaces/api_register.py", "impl"): "a registered primitive calls the user's own Python function",
}


def _excluded(relative: str) -> bool:
    return relative.startswith("remora/backends/jax_") or relative == "remora/dynamics/padded.py"


def _broad(handler: ast.ExceptHandler) -> bool:
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(n is None or (isinstance(n, ast.Name) and n.id in ("Exception", "BaseException")) for n in names)


class _Handlers(ast.NodeVisitor):
    """Each broad handler with its innermost enclosing function."""

    def __init__(self) -> None:
        self.stack: list[str] = ["<module>"]
        self.found: list[tuple[str, int, bool]] = []

    def visit_FunctionDef(self, node) -> None:
        self.stack.append(node.name)
        self.generic_visit(node)
        self.stack.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if _broad(node):
            last = node.body[-1]
            self.found.append((self.stack[-1], node.lineno, isinstance(last, ast.Raise) and last.exc is None))
        self.generic_visit(node)


def _broad_handlers():
    """(module, enclosing function, line, whether it ends by re-raising) for each broad handler."""
    for path in sorted((ROOT / "remora").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if _excluded(relative):
            continue
        visitor = _Handlers()
        visitor.visit(ast.parse(path.read_text(encoding="utf-8")))
        for func, line, reraises in visitor.found:
            yield relative, func, line, reraises


def test_every_broad_handler_reraises_or_is_a_deliberate_entry_point():
    found = {(m, f, line) for m, f, line, reraises in _broad_handlers() if not reraises}
    stray = sorted((m, f, line) for m, f, line in found if (m, f) not in DELIBERATE)
    assert not stray, f"catch the exact condition expected instead (or re-raise): {stray}"


def test_each_entry_point_has_one_internal_error_handler():
    sites = [(m, f) for m, f, _, reraises in _broad_handlers() if not reraises]
    assert sorted(set(sites)) == sorted(DELIBERATE) and len(sites) == len(set(sites)), sites


def test_the_scan_finds_a_broad_handler(tmp_path):
    """(The scan itself can fail: it sees a bare ``except:`` and a tuple holding ``Exception``.)"""
    tree = ast.parse("try:\n    pass\nexcept:\n    pass\ntry:\n    pass\nexcept (KeyError, Exception):\n    pass\n")
    handlers = [n for n in ast.walk(tree) if isinstance(n, ast.ExceptHandler)]
    assert [_broad(h) for h in handlers] == [True, True]


# --- the sites narrowed ---------------------------------------------------------------------------


def test_a_damaged_prelude_cache_file_is_a_miss(tmp_path):
    from remora.interfaces import prelude_cache

    path = tmp_path / "prelude-x.pickle"
    prelude_cache._write(path, {"a": 1}, [])
    assert prelude_cache._read(path).bindings == {"a": 1}
    data = bytearray(path.read_bytes())
    data[len(data) // 2 + 8] ^= 0xFF  # (bit rot inside the payload, the length unchanged)
    path.write_bytes(bytes(data))
    assert prelude_cache._read(path) is None


def test_a_failure_unpickling_an_intact_prelude_cache_file_is_raised(tmp_path, monkeypatch):
    """Not a silent miss (every later process would check the prelude again, slowly, for ever)."""
    from remora.interfaces import prelude_cache

    path = tmp_path / "prelude-x.pickle"
    prelude_cache._write(path, {"a": 1}, [])

    def broken(self):
        raise KeyError("a bug in reviving the cache")

    monkeypatch.setattr(prelude_cache._Unpickler, "load", broken)
    with pytest.raises(KeyError):
        prelude_cache._read(path)


def test_a_prelude_that_cannot_be_pickled_is_raised_not_left_uncached(tmp_path):
    from remora.interfaces import prelude_cache

    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        prelude_cache._write(tmp_path / "prelude-x.pickle", {"f": lambda: 0}, [])
    assert not list(tmp_path.iterdir())


def test_an_unwritable_cache_directory_is_only_a_miss(tmp_path):
    from remora.interfaces import prelude_cache

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    prelude_cache._write(blocker / "prelude-x.pickle", {"a": 1}, [])  # (mkdir fails: OSError)


def test_a_registered_function_returning_no_array_is_a_located_error():
    import uuid

    name = f"ragged_{uuid.uuid4().hex[:8]}"
    remora.register(name, "(-> ((Arr Int (Shp))) (Arr Int (Shp)))", lambda a: [[1], [1, 2]])
    with pytest.raises(remora.RemoraRuntimeError) as info:
        remora.evaluate(f"({name} [1 2])")
    assert f"registered primitive `{name}` returned what is not an array" in info.value.message
    assert info.value.span is not None


def test_a_registered_function_that_raises_is_a_located_error():
    import uuid

    name = f"failing_{uuid.uuid4().hex[:8]}"

    def fails(a):
        raise ZeroDivisionError("the user's own")

    remora.register(name, "(-> ((Arr Int (Shp))) (Arr Int (Shp)))", fails)
    with pytest.raises(remora.RemoraRuntimeError) as info:
        remora.evaluate(f"({name} [1 2])", )
    assert f"registered primitive `{name}` raised ZeroDivisionError: the user's own" in info.value.message
    np.testing.assert_array_equal(remora.evaluate("(+ 1 [1 2])"), [2, 3])


def test_a_cache_naming_what_this_installation_lacks_is_a_miss(tmp_path, monkeypatch):
    """An intact file naming a module this installation lacks (another NumPy's, say: D40)."""
    import sys
    import types

    from remora.interfaces import prelude_cache

    module = types.ModuleType("remora_vanished_module")

    class Thing:
        pass

    Thing.__module__, Thing.__qualname__ = module.__name__, "Thing"
    module.Thing = Thing
    monkeypatch.setitem(sys.modules, module.__name__, module)
    data = pickle.dumps(({"a": Thing()}, []), protocol=prelude_cache.PROTOCOL)
    monkeypatch.delitem(sys.modules, module.__name__)
    path = tmp_path / "prelude-x.pickle"
    path.write_bytes(prelude_cache._digest(data) + data)
    assert prelude_cache._read(path) is None
