"""The one table of primitives: each is defined once, with its signature, meaning and documentation.

A primitive is declared with its signature written as in the paper's Fig. 2 (the function
type, without the enclosing quantifiers) and the sort or kind of each variable; its full type
is the statics' business (:mod:`remora.statics.primitive_types`), so this table needs nothing
from the front end or the checker.

Scalar primitives overloaded on the atom type (``+`` on ``Int`` or ``Float``) use the type
variable ``x`` for the overloaded atom type and list what it may be.  A conversion whose result
type is chosen by its context too (``floor`` of a ``Float32`` may make an ``Int`` or an
``Int32``) uses ``y`` for it: by default the integer type as wide as ``x``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable, Optional

OVERLOAD_VAR = "x"
#: the result's own overloaded atom type, in a conversion (``floor``)
RESULT_VAR = "y"
#: ``overload`` value for a primitive whose ``x`` may be any atom type (``select``).
ANY_ATOM = "any"


@dataclass
class Primitive:
    """One primitive operator: its name, its signature, its whole-frame meaning, its documentation."""

    name: str
    signature: str
    sorts: dict[str, str]
    doc: str
    impl: Callable
    overload: Optional[frozenset[str] | str] = None
    #: what ``y``, the result's overloaded atom type, may be (None: the signature has no ``y``)
    result_overload: Optional[frozenset[str]] = None
    #: The associative operation this primitive is, by name (``"add"``: backends.ASSOCIATIVE), so
    #: reduce/scan/fold can be one backend call; never a library's function.
    op: Optional[str] = None
    #: Whether it has an effect (reads input): it then runs once per cell of any frame it is in.
    effectful: bool = False
    #: False for primitives registered from Python at run time (remora.register).
    builtin: bool = True
    #: Optional implementation over ragged boxes (see remora/dynamics/ragged.py); NotImplemented declines.
    segmented: Optional[Callable] = None


PRIMITIVES: dict[str, Primitive] = {}
#: Serialises changes to the table (remora.register from several threads).
_LOCK = threading.RLock()


def define(prim: Primitive) -> Primitive:
    with _LOCK:
        if prim.name in PRIMITIVES:
            raise ValueError(f"primitive {prim.name} defined twice")
        PRIMITIVES[prim.name] = prim
    return prim


def primitive(name: str, signature: str, sorts: str = "", *, doc: str, **options) -> Callable[[Callable], Callable]:
    """Decorator: register the decorated whole-frame implementation as primitive ``name``."""

    def register(fn: Callable) -> Callable:
        define(Primitive(name, signature, _parse_sorts(sorts), doc, fn, **options))
        return fn

    return register


def _parse_sorts(spec: str) -> dict[str, str]:
    out = {}
    for item in spec.split():
        var, sort = item.split(":")
        out[var] = sort
    return out


def is_primitive(name: str) -> bool:
    return name in PRIMITIVES

