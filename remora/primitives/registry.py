"""The one table of primitives: each is defined once, with its type, meaning and documentation.

A primitive is declared with its signature written as in the paper's Fig. 2
(the function type, without the enclosing quantifiers) and the sort or kind of
each variable.  The full type is derived by the contract's rule: ``Pi`` outermost,
then ``Forall``, then the function, in a scalar array; ``Dim`` variables before
``Shape`` variables, each group — and the type variables — in order of first
appearance in the signature; a layer with no variables is left out.

Scalar primitives overloaded on the atom type (``+`` on ``Int`` or ``Float``) use
the type variable ``x`` for the overloaded atom type and list what it may be.
Each occurrence gets a fresh unknown for ``x``, settled by its context.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import Callable, Optional

from ..statics.indices import SCALAR, Var
from ..statics.types import AtomMeta, TArr, TForall, TPi, Type, subst

OVERLOAD_VAR = "x"
#: ``overload`` value for a primitive whose ``x`` may be any atom type (``select``).
ANY_ATOM = "any"


@dataclass
class Primitive:
    """One primitive operator: its name, its type, its whole-frame meaning, its documentation."""

    name: str
    signature: str
    sorts: dict[str, str]
    doc: str
    impl: Callable
    overload: Optional[frozenset[str] | str] = None
    #: The associative operation this primitive is, by name (``"add"``: backends.ASSOCIATIVE), so
    #: reduce/scan/fold can be one backend call; never a library's function.
    op: Optional[str] = None
    #: Whether the implementation needs the instantiated index arguments.
    wants_indices: bool = False
    #: Whether it has an effect (reads input): it then runs once per cell of any frame it is in.
    effectful: bool = False
    #: False for primitives registered from Python at run time (remora.register).
    builtin: bool = True
    #: Optional implementation over ragged boxes (see remora/dynamics/ragged.py); NotImplemented declines.
    segmented: Optional[Callable] = None
    _type: Optional[Type] = field(default=None, repr=False)
    _overload_var: Optional[Var] = field(default=None, repr=False)

    @property
    def type(self) -> Type:
        """The primitive's type as the contract prints it (overloaded ``x`` left as a variable).

        Built on first use, once: threads checking at the same time must all see the same type
        *and* the same overloaded variable (``instantiate`` substitutes that very variable).
        """
        if self._type is None:
            with _LOCK:
                if self._type is None:
                    t, self._overload_var = _build_type(self)
                    self._type = t  # last: a thread that sees the type also sees its variable
        return self._type

    def instantiate(self, origin: str) -> Type:
        """The type of one occurrence: overloaded atom types become a fresh unknown."""
        t = self.type
        if self._overload_var is None:
            return t
        allowed = None if self.overload == ANY_ATOM else self.overload
        return subst(t, {self._overload_var: AtomMeta(allowed, origin)})  # type: ignore[arg-type]

    def type_text(self) -> str:
        """The type for documentation, with the overloaded variable shown as ``x``."""
        return str(self.type)


PRIMITIVES: dict[str, Primitive] = {}
#: Serialises changes to the table (remora.register from several threads) and lazy type building.
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


def _first_appearance(signature: str, names: list[str]) -> list[str]:
    tokens = re.findall(r"[^\s()\[\]]+", signature)
    order = [t for i, t in enumerate(tokens) if t in names and t not in tokens[:i]]
    return order


def _build_type(prim: Primitive) -> tuple[Type, Optional[Var]]:
    from ..statics.kinding import Scope, kind_type
    from ..front.parse import parse_type
    from ..front.reader import read

    sorts = dict(prim.sorts)
    overload_var = None
    if prim.overload is not None:
        overload_var = Var(OVERLOAD_VAR, "Atom")
    order = _first_appearance(prim.signature, list(sorts))
    index_vars = [Var(n, sorts[n]) for n in order if sorts[n] == "Dim"]
    index_vars += [Var(n, sorts[n]) for n in order if sorts[n] == "Shape"]
    type_vars = [Var(n, sorts[n]) for n in order if sorts[n] in ("Atom", "Array")]
    scope = Scope().extend(index_vars + type_vars + ([overload_var] if overload_var else []))
    (node,) = read(prim.signature, f"<primitive {prim.name}>")
    t: Type = kind_type(parse_type(node), scope, "Atom")
    if type_vars:
        t = TForall(tuple(type_vars), TArr(t, SCALAR))
    if index_vars:
        t = TPi(tuple(index_vars), TArr(t, SCALAR))
    return t, overload_var


def is_primitive(name: str) -> bool:
    return name in PRIMITIVES


def get(name: str) -> Primitive:
    return PRIMITIVES[name]
