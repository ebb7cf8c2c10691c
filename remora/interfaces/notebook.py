"""Remora in IPython and Jupyter: ``%load_ext remora`` (``pip install 'remora[notebook]'``).

- ``%%remora [-o NAME] [--type]`` runs the cell as a Remora program.  Its free variables that
  name arrays or scalars in the notebook's namespace are its inputs (typed by dtype and shape,
  as ``remora.evaluate``'s are); the value of its last expression is displayed and, with
  ``-o NAME``, stored in ``NAME`` as a NumPy array; ``--type`` checks the cell without running
  it and shows the type of its last form.  Definitions stay for the cells after (a kernel is one
  session, as the REPL is), and a Python variable named in a later cell shadows them there.
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

from ..errors import RemoraError
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
        p.text(repr(self))

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
        from .session import Session
        from ..dynamics.runtime import RunConfig

        self.namespace = namespace
        self.session = Session(run=RunConfig(stdin=io.StringIO("")))

    def run(self, source: str, check_only: bool = False):
        """(typed forms, value of the last form or None) of the cell.  Its inputs are bound for
        this cell only; its definitions stay for the cells after — those that ran, when running
        fails part way, and none with ``check_only``.  An input's value is let go after the
        cell unless a definition that stays refers to it."""
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

    def inputs(self, forms) -> list[tuple[str, np.ndarray]]:
        """The cell's free variables that name arrays or scalars in the namespace, as Remora
        arrays (a value of an unsupported dtype is the API's error, naming it).  The names the
        language binds — primitives, the prelude's functions — are not free: a Python ``count
        = 10`` leaves ``(count bs)`` the prelude's."""
        from .api import as_remora_array
        from .session import load_prelude
        from ..primitives import PRIMITIVES
        from .scopes import resolve

        out = []
        bound = PRIMITIVES.keys() | load_prelude()[0].keys()
        for name in sorted(resolve(forms).free_terms() - bound):
            value = self.namespace.get(name, _MISSING)
            if isinstance(value, (bool, int, float, np.ndarray, np.generic)):
                out.append((name, as_remora_array(name, value)))
            elif _library_array(value):  # (a JAX or Dask array: its atoms, of its own dtype)
                out.append((name, as_remora_array(name, np.asarray(value))))
        return out


_MISSING = object()


def _library_array(value: Any) -> bool:
    """Whether ``value`` is an array of JAX or Dask (what JAX users have: ``float32`` by default)."""
    return type(value).__module__.split(".")[0] in ("jax", "jaxlib", "dask") and hasattr(value, "dtype")


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
    try:
        options, extra = parser.parse_known_args(shlex.split(line))
    except (argparse.ArgumentError, ValueError) as exc:
        raise UsageError(f"%%remora [-o NAME] [--type]: {exc}") from None
    if extra:
        raise UsageError(f"%%remora [-o NAME] [--type]: unexpected {' '.join(extra)}")
    if options.output is not None and not options.output.isidentifier():
        raise UsageError(f"%%remora -o NAME: {options.output!r} is not a Python name")
    return options


def _result(value: Any, typed, what: str, hint: str) -> np.ndarray:
    """The value as the API returns it: a fresh array (functions refused, located)."""
    from .. import backends
    from .api import _output, _refuse_functions
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
                    typed, value = self.runner.run(line)
                    if not typed:
                        return None
                    return _result(value, typed, "the value of this expression",
                                   "use the %%remora cell magic to see it, or apply it in Remora")
                except RemoraError as err:
                    raise _shown(err) from None
            options = _cell_options(line)
            try:
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
