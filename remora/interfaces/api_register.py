"""``remora.register``: a NumPy function made a typed primitive (the table of primitives is
:mod:`remora.primitives.registry`).

A boundary module, as the API is: the function registered is called with NumPy arrays whatever
backend runs the program, and what it returns is checked against the declared type.
"""

from __future__ import annotations

import math
import threading
from typing import Any, Callable

import numpy as np

from ..backends.base import OBJECT
from ..backends.numpy_backend import DTYPES
from ..errors import RemoraError, RemoraTypeError
from ..front import syntax as S
from ..primitives.registry import PRIMITIVES, Primitive, define
from ..statics.primitive_types import primitive_type


#: what runs when a primitive is added, while no other can be: the API forgets what it checked
#: and compiled before the name existed
ON_NEW_PRIMITIVE: list[Callable[[], None]] = []


def register(name: str, signature: str, fn: Callable[..., Any], variables: str = "", doc: str = "") -> None:
    """Make the NumPy function ``fn`` the Remora primitive ``name`` of the given type.

    Parameters
    ----------
    name : str
        One symbol a program can call (not a keyword, a number, or a name already taken by a
        primitive or the prelude).
    signature : str
        A function type as in the paper's Fig. 2, e.g. ``(-> ((Arr Float (Shp))) (Arr Float
        (Shp)))``; quantifiers are added as for every primitive.
    fn : callable
        Receives each argument as a stack of cells — shape ``(n,) + cell``, one row per cell
        the application covers — and returns the stack of result cells, ``(n,) + result cell``
        (an array, or anything ``numpy.asarray`` makes one of): a NumPy ufunc, or a function
        reducing over ``axis=-1``, does.  Both engines call it so; only ``n`` differs.  Its
        arguments are read-only.
    variables : str, optional
        The sorts of the signature's variables, ``"n:Dim s:Shape t:Atom"``.
    doc : str, optional
        Its documentation (what hover and ``:doc`` show).

    Raises
    ------
    RemoraTypeError
        The name is taken (``register: error: …``), or the signature is ill-kinded.
    TypeError, ValueError
        An argument of the wrong Python type, a name no program can call, malformed
        ``variables``.

    Examples
    --------
    >>> import numpy as np, remora
    >>> remora.register("logistic", "(-> ((Arr Float (Shp))) (Arr Float (Shp)))",
    ...                 lambda x: 1 / (1 + np.exp(-x)), doc="The logistic function.")
    >>> remora.evaluate("(logistic [0.0 100.0])")
    array([0.5, 1. ])
    """
    from .session import load_prelude

    _check_register_arguments(name, signature, fn, doc)
    sorts = _variable_sorts(variables)
    with _REGISTERING:  # the name is free and then taken in one step, whatever other threads do
        if name in PRIMITIVES:
            raise RemoraTypeError(f"a primitive named `{name}` already exists", origin="register")
        if name in load_prelude()[0]:
            raise RemoraTypeError(f"`{name}` is defined by the prelude; choose another name", origin="register")
        _define(name, signature, fn, sorts, doc)
        for forget in ON_NEW_PRIMITIVE:
            forget()


_REGISTERING = threading.Lock()
_SORTS = ("Dim", "Shape", "Atom", "Array")


def _check_register_arguments(name: Any, signature: Any, fn: Any, doc: Any) -> None:
    """Wrong Python arguments are TypeErrors and ValueErrors that say what to pass."""
    for what, value in (("name", name), ("signature", signature), ("doc", doc)):
        if not isinstance(value, str):
            raise TypeError(f"remora.register: the {what} must be a str, not {type(value).__name__}")
    if not callable(fn):
        raise TypeError(f"remora.register: fn must be callable (a NumPy function), not {type(fn).__name__}")
    if not is_remora_name(name):
        raise ValueError(
            f"remora.register: {name!r} is not a name a Remora program can call: a primitive's name is one "
            "symbol — no spaces, brackets, quotes or `;`, not a number, not a keyword such as `define`"
        )


def _variable_sorts(variables: Any) -> dict[str, str]:
    """``"n:Dim s:Shape t:Atom"`` as a dictionary, or a ValueError that shows the expected form."""
    if not isinstance(variables, str):
        raise TypeError(f"remora.register: variables must be a str such as \"n:Dim t:Atom\", not {type(variables).__name__}")
    sorts: dict[str, str] = {}
    for item in variables.split():
        var, colon, sort = item.partition(":")
        if not colon or sort not in _SORTS or not is_remora_name(var):
            raise ValueError(
                f"remora.register: variables must be \"name:Sort ...\" with each Sort one of {', '.join(_SORTS)} "
                f"(e.g. \"n:Dim s:Shape t:Atom\"); {item!r} is not"
            )
        if var in sorts:
            raise ValueError(f"remora.register: the variable `{var}` is declared twice in {variables!r}")
        sorts[var] = sort
    return sorts


def is_remora_name(name: str) -> bool:
    """Whether ``name`` reads as one Remora symbol that an expression can refer to."""
    from ..front.parse import RESERVED, parse_expr
    from ..front.reader import SAtom, read

    try:
        nodes = read(name, "<name>")
    except RemoraError:
        return False
    if len(nodes) != 1 or not isinstance(nodes[0], SAtom) or nodes[0].value != name or name in RESERVED:
        return False
    try:
        return isinstance(parse_expr(nodes[0]), S.Ref)
    except RemoraError:
        return False


def _define(name: str, signature: str, fn: Callable[..., Any], sorts: dict[str, str], doc: str) -> None:
    """Add ``fn`` to the table of primitives as ``name`` (its signature kind-checked first)."""

    def impl(ctx, *args):
        frame = tuple(ctx.frame)
        n = math.prod(frame)
        stacks = [_read_only(a.reshape((n,) + a.shape[len(frame):])) for a in map(ctx.xp.to_numpy, args)]
        dtype = DTYPES[ctx.result_rep]
        try:
            returned = fn(*stacks)
        except Exception as exc:  # (any exception of the user's own Python function: a located run-time error)
            ctx.error(f"registered primitive `{name}` raised {type(exc).__name__}: {exc}")
        try:
            out = _result_array(returned, dtype)
        except (ValueError, TypeError) as exc:  # (NumPy's refusal of what it returned: a ragged list, …)
            ctx.error(f"registered primitive `{name}` returned what is not an array: {exc}")
        expected = (n,) + tuple(ctx.result_cell)
        if out.shape != expected:
            ctx.error(f"registered primitive `{name}` returned an array of shape {out.shape} for a stack of {n} "
                      f"cell{'s' if n != 1 else ''}; its type says {expected} (one result cell per row)")
        if ctx.result_rep != OBJECT and out.dtype != dtype:
            ctx.error(f"registered primitive `{name}` returned {out.dtype} atoms; its type says {dtype}")
        return ctx.xp.from_numpy(out.reshape(frame + tuple(ctx.result_cell)))

    prim = Primitive(name, signature, sorts, doc or f"Registered from Python: {fn!r}.", impl, builtin=False)
    primitive_type(prim)  # kind-check the signature now, not at first use
    define(prim)


def _read_only(a: np.ndarray) -> np.ndarray:
    """A view the registered function cannot write through: arguments may be the program's own
    arrays (definitions, constants), which nothing outside the program may change."""
    view = a.view()
    view.flags.writeable = False
    return view


def _result_array(out: Any, dtype: np.dtype) -> np.ndarray:
    """What a registered function returned, as an array.  A list without atoms says nothing
    about their type (``numpy.asarray([])`` is float64): it takes the declared one."""
    array = np.asarray(out)
    if array.size == 0 and not isinstance(out, (np.ndarray, np.generic)) and dtype != object:
        array = array.astype(dtype)
    return array
