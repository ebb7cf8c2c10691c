"""Remora in IPython and Jupyter: ``%load_ext remora`` (``pip install 'remora[notebook]'``).

- ``%%remora [-o NAME] [--type] [--backend NAME]`` runs the cell as a Remora program.  Its free
  variables that name data in the notebook's namespace are its inputs (typed by dtype and shape,
  as ``remora.evaluate``'s are): NumPy arrays and scalars, Python scalars, Python lists (as the
  bracket literal of their atoms), and — in a cell run with ``--backend jax`` or ``--backend
  dask`` — JAX or Dask arrays.  The value of its last expression is displayed and, with ``-o
  NAME``, stored in ``NAME`` as ``remora.evaluate`` returns it; ``--type`` checks the cell
  without running it and shows the type of its last form.  Definitions stay for the cells after
  (a kernel is one session, as the REPL is), on every backend, and a Python variable named in a
  later cell shadows them there.
- ``%remora EXPR`` runs one line and returns its value (a NumPy array, as ``remora.evaluate``).
- A value displays as :class:`RemoraValue`: text laid out as the REPL does (one row per line,
  summarised beyond 1,000 atoms), and HTML where a notebook shows it — a table for rank 1 and
  2 (summarised beyond 20 rows or columns), a box as its indices and its contents, the type in
  the paper's syntax.

An error shows as the command line shows it — ``<cell>:LINE:COL: error: …``, the line and a
caret, lines numbered within the cell — and never as a Python traceback: the error is raised as
itself (a ``RemoraError``, so the cell fails and "run all" stops) with IPython's
``_render_traceback_`` hook returning the report.
"""

from __future__ import annotations

import argparse
import html
import io
import shlex
from typing import Any

import numpy as np

from ..errors import RemoraError, RemoraTypeError
from ..statics.types import Type
from . import layout

CELL = "<cell>"
#: rows and columns of an HTML table beyond which it is summarised, and the items kept at each end
TABLE_LIMIT, TABLE_EDGE = 20, 10


# ---------------------------------------------------------------------------
# Rich display


class RemoraValue:
    """A Remora value with its type, displayed for people (plain text and HTML)."""

    def __init__(self, value: Any, type_: Type):
        self.value = np.asarray(value)
        self.type = type_

    def __repr__(self) -> str:
        return layout.show(self.value, self.type)

    def _repr_pretty_(self, p, cycle: bool) -> None:
        """As wide as IPython's pretty printer makes its lines (``max_width``, 79 by default)."""
        p.text(layout.show(self.value, self.type, layout.Display(width=getattr(p, "max_width", 79) or None)))

    def _repr_html_(self) -> str:
        return to_html(self.value, self.type)

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.value, dtype=dtype)


def to_html(value: np.ndarray, typ: Type) -> str:
    """A value as HTML, its type in a caption."""
    caption = f'<div class="remora-type"><code>{html.escape(str(typ))}</code></div>'
    return f'<div class="remora-value">{_html(value, typ)}{caption}</div>'


def _html(value: np.ndarray, typ: Type) -> str:
    atom = layout.atom_type(value, typ)
    if 0 in value.shape or value.ndim > 2:
        return f"<pre>{html.escape(layout.show(value, typ))}</pre>"
    if value.ndim == 0:
        return _atom_html(_host(value), atom)
    matrix = value.reshape((1,) + value.shape) if value.ndim == 1 else value
    host = _host(matrix)
    rows = _table_items(matrix.shape[0])
    cols = _table_items(matrix.shape[1])
    body = []
    for i in rows:
        if i is None:
            body.append("<tr>" + "".join("<td>⋮</td>" for _ in cols) + "</tr>")
            continue
        cells = ("<td>…</td>" if j is None else f"<td>{_atom_html(host[i][j], atom)}</td>" for j in cols)
        body.append("<tr>" + "".join(cells) + "</tr>")
    return '<table class="remora-array">' + "".join(body) + "</table>"


def _host(value: np.ndarray) -> Any:
    """Python atoms, as the printer takes them; a ``Float32`` as its shortest text already (its
    Python float would print all 17 digits of its 64-bit value)."""
    return value.astype(str).tolist() if value.dtype == np.float32 else value.tolist()


def _table_items(n: int) -> list[int | None]:
    if n <= TABLE_LIMIT:
        return list(range(n))
    return [*range(TABLE_EDGE), None, *range(n - TABLE_EDGE, n)]


def _atom_html(x: Any, atom: Type) -> str:
    from .show import BoxValue, box_contents_type, show_atom
    from ..statics.indices import show_value_of_index

    if isinstance(x, str):  # (a Float32's text)
        return f"<code>{html.escape(x)}</code>"
    if isinstance(x, BoxValue):
        indices = " ".join(show_value_of_index(i) for i in x.indices)
        inner = _html(np.asarray(x.value), box_contents_type(x, atom))
        return f'<div class="remora-box"><code>box {html.escape(indices)}</code>{inner}</div>'
    return f"<code>{html.escape(show_atom(x, atom))}</code>"


# ---------------------------------------------------------------------------
# Running cells


class CellRunner:
    """One kernel's Remora session: cells run in it, definitions stay for later cells."""

    def __init__(self, namespace: dict[str, Any]):
        from .backend_switch import OnBackends
        from .session import Session
        from ..dynamics.runtime import RunConfig

        self.namespace = namespace
        self.session = Session(run=RunConfig(stdin=io.StringIO("")))
        #: the kernel's session on every backend a cell has asked for (``--backend``)
        self.backends = OnBackends(self.session)

    def use(self, backend: str) -> None:
        """Run the next cells on ``backend``, with every definition made so far (an IPython
        ``UsageError`` for an unknown backend, or one whose extra is not installed)."""
        from IPython.core.error import UsageError

        try:
            self.session = self.backends.on(backend)[0]
        except (ValueError, ImportError) as err:
            raise UsageError(f"%%remora --backend {backend}: {err}") from None

    def run(self, source: str, check_only: bool = False):
        """(typed forms, value of the last form or None) of the cell.  Its inputs are bound for
        this cell only; its definitions stay for the cells after — those that ran, when running
        fails part way, and none with ``check_only`` — on every backend (:meth:`use`).  An
        input's value is let go after the cell unless a definition that stays refers to it."""
        from ..statics.typed import Global, TyDefine, form_type
        from .typed_index import referenced_keys

        session = self.session
        keep = dict(session.checker.globals)
        inputs: set[str] = set()
        held: set[str] = set()
        try:
            forms = session.forms(source, CELL)
            inputs = {session.bind(name, array) for name, array in self.inputs(forms)}
            typed = [session.check_form(f) for f in forms]
            if check_only or not typed:
                return typed, None
            value = None
            for form in typed:
                value = session.evaluate(form)
                if isinstance(form, TyDefine):
                    keep = {**keep, form.name: Global(form.key, form_type(form))}
                    held |= referenced_keys(form)
            return typed, value
        finally:
            session.checker.globals.clear()
            session.checker.globals.update(keep)
            for key in inputs - held:
                session.engine.globals.pop(key, None)

    def inputs(self, forms) -> list[tuple[str, Any]]:
        """The cell's free variables that name data in the namespace — arrays (NumPy's, JAX's,
        Dask's), Python or NumPy scalars, lists — as arrays of the session's backend, converted
        and refused as ``remora.evaluate`` converts and refuses inputs (a list as the bracket
        literal of its atoms would be).  The names the language binds — primitives, the
        prelude's functions — are not free: a Python ``count = 10`` leaves ``(count bs)`` the
        prelude's."""
        from .api import as_remora_array
        from .session import load_prelude
        from ..primitives import PRIMITIVES
        from .scopes import resolve

        out = []
        xp = self.session.engine.xp
        bound = PRIMITIVES.keys() | load_prelude()[0].keys()
        for name in sorted(resolve(forms).free_terms() - bound):
            value = self.namespace.get(name, _MISSING)
            if isinstance(value, (list, tuple)):
                value = list_as_array(name, value)
            library = _array_library(value)
            if library is not None and library != xp.name:
                raise RemoraTypeError(f"input `{name}` is a {library} array: run the cell with --backend {library} "
                                      f"(or pass numpy.asarray({name}))", origin=f"input {name}")
            if library is not None or isinstance(value, (bool, int, float, np.ndarray, np.generic)):
                array = as_remora_array(name, value, xp=xp)
                out.append((name, xp.from_numpy(array) if isinstance(array, np.ndarray) else array))
        return out


_MISSING = object()


def list_as_array(name: str, value: list | tuple) -> np.ndarray:
    """A Python list (nested to any depth, rectangular) of bools, ints or floats as the array a
    Remora bracket literal of the same atoms is: one atom type for all (no promotion: ``[1,
    2.5]`` is refused, as ``[1 2.5]`` is), ``int64``, ``float64`` or ``bool``.  What the notebook
    magic does with a list in the namespace (decisions.md D55); ``remora.evaluate`` asks for
    arrays."""
    what, origin = f"input `{name}`", f"input {name}"
    shape, atoms = _nested(value, what, origin)
    kinds = {bool if isinstance(a, bool) else int if isinstance(a, int) else float for a in atoms}
    if not atoms:
        raise RemoraTypeError(f"{what} is an empty list, which has no atom type; pass a NumPy array of the "
                              "dtype meant, e.g. numpy.zeros(0, numpy.int64)", origin=origin)
    if len(kinds) > 1:
        names = " and ".join(sorted({bool: "Bool", int: "Int", float: "Float"}[k] for k in kinds))
        raise RemoraTypeError(f"{what} is a list mixing {names} atoms: Remora never converts implicitly; "
                              "write every number alike (2.0 for 2) or pass a NumPy array", origin=origin)
    (kind,) = kinds
    if kind is int and not all(-(2**63) <= a < 2**63 for a in atoms):
        raise RemoraTypeError(f"{what} holds an int that does not fit in a 64-bit Int", origin=origin)
    dtype = {bool: np.bool_, int: np.int64, float: np.float64}[kind]
    return np.array(atoms, dtype=dtype).reshape(shape)


def _nested(value: Any, what: str, origin: str) -> tuple[tuple[int, ...], list]:
    """The shape and the atoms (row-major) of nested lists; a RemoraTypeError for a ragged one
    or an atom that is not a bool, int or float."""
    if isinstance(value, (list, tuple)):
        parts = [_nested(v, what, origin) for v in value]
        shapes = {shape for shape, _ in parts}
        if len(shapes) > 1:
            raise RemoraTypeError(f"{what} is a ragged list: its items have the shapes "
                                  f"{', '.join(map(str, sorted(shapes)))}; an array's items all have one shape",
                                  origin=origin)
        inner = shapes.pop() if shapes else ()
        return (len(value), *inner), [a for _, atoms in parts for a in atoms]
    if isinstance(value, (bool, int, float)):
        return (), [value]
    raise RemoraTypeError(f"{what} is a list holding a {type(value).__name__}; a list input holds bools, ints "
                          "or floats", origin=origin)


def _array_library(value: Any) -> str | None:
    """``"jax"`` or ``"dask"`` for an array of that library (told by its class's module, so
    neither is imported here), else None."""
    root = type(value).__module__.partition(".")[0]
    return {"jax": "jax", "jaxlib": "jax", "dask": "dask"}.get(root)


def _shown(err: RemoraError) -> RemoraError:
    """``err``, shown by IPython as the command line shows it: no Python traceback."""
    report = err.report()
    err._render_traceback_ = lambda: report.split("\n")  # type: ignore[attr-defined]
    return err.with_traceback(None)


def _cell_options(line: str) -> argparse.Namespace:
    from IPython.core.error import UsageError

    parser = argparse.ArgumentParser(prog="%%remora", add_help=False, exit_on_error=False)
    parser.add_argument("-o", "--output", metavar="NAME")
    parser.add_argument("--type", action="store_true")
    parser.add_argument("--backend", default="numpy")
    usage = "%%remora [-o NAME] [--type] [--backend NAME]"
    try:
        options, extra = parser.parse_known_args(shlex.split(line))
    except (argparse.ArgumentError, ValueError) as exc:
        raise UsageError(f"{usage}: {exc}") from None
    if extra:
        raise UsageError(f"{usage}: unexpected {' '.join(extra)}")
    if options.output is not None and not options.output.isidentifier():
        raise UsageError(f"%%remora -o NAME: {options.output!r} is not a Python name")
    return options


def _result(value: Any, typed, what: str, hint: str) -> np.ndarray:
    """The value as the API returns it: a fresh array (functions refused, located)."""
    from .. import backends
    from .api_results import _output, _refuse_functions
    from ..statics.typed import form_type

    _refuse_functions(form_type(typed[-1]), typed[-1].span, what, hint)
    return _output(backends.of(value), value)


def load_ipython_extension(ipython) -> None:
    from IPython.core.magic import Magics, line_cell_magic, magics_class

    @magics_class
    class RemoraMagics(Magics):
        """``%%remora`` and ``%remora``."""

        def __init__(self, shell):
            super().__init__(shell)
            self.runner = CellRunner(shell.user_ns)

        @line_cell_magic
        def remora(self, line: str, cell: str | None = None):
            """%%remora [-o NAME] [--type]: run the cell as a Remora program; %remora EXPR: the value of EXPR."""
            from ..statics.typed import TyExprForm, form_type

            self.runner.namespace = self.shell.user_ns
            if cell is None:
                try:
                    self.runner.use("numpy")
                    typed, value = self.runner.run(line)
                    if not typed:
                        return None
                    return _result(value, typed, "the value of this expression",
                                   "use the %%remora cell magic to see it, or apply it in Remora")
                except RemoraError as err:
                    raise _shown(err) from None
            options = _cell_options(line)
            try:
                self.runner.use(options.backend)
                typed, value = self.runner.run(cell, check_only=options.type)
                if not typed:
                    return None
                if options.type:
                    t = form_type(typed[-1])
                    if options.output:
                        self.shell.user_ns[options.output] = t
                    return t
                if options.output:
                    self.shell.user_ns[options.output] = _result(
                        value, typed, f"the value stored in {options.output}",
                        "leave out -o to see it, or apply it in Remora")
            except RemoraError as err:
                raise _shown(err) from None
            if isinstance(typed[-1], TyExprForm):
                return RemoraValue(value, form_type(typed[-1]))
            return None

    ipython.register_magics(RemoraMagics)


def unload_ipython_extension(ipython) -> None:
    """Nothing to undo: the magics stay until the kernel restarts (as IPython's own do)."""
