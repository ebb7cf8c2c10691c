"""The signature 𝒮 of rule T-OP: each primitive's type, built from its table entry.

A primitive (:mod:`remora.primitives.registry`) is declared with its signature written as in
the paper's Fig. 2 — the function type without the enclosing quantifiers — and the sort or
kind of each variable.  The full type is derived here by the contract's rule: ``Pi``
outermost, then ``Forall``, then the function, in a scalar array; ``Dim`` variables before
``Shape`` variables, each group — and the type variables — in order of first appearance in
the signature; a layer with no variables is left out.  Scalar primitives overloaded on the
atom type use the variable ``x`` for it; each occurrence gets a fresh unknown for ``x``
(:func:`instantiate`), settled by its context.

The table itself knows nothing of types, so the primitives never need the front end or the
checker: the statics read the table, not the other way round.
"""

from __future__ import annotations

import re
import threading
from typing import Optional

from ..front.parse import parse_type
from ..front.reader import read
from ..primitives.registry import ANY_ATOM, OVERLOAD_VAR, RESULT_VAR, Primitive
from .indices import SCALAR, Var
from .kinding import Scope, kind_type
from .types import AtomMeta, TArr, TForall, TPi, Type, subst

#: name -> (the primitive, its type, its overloaded variable): built on first use, once
_TYPES: dict[str, tuple[Primitive, Type, Optional[Var]]] = {}
_LOCK = threading.Lock()
#: the result's overloaded atom type of a conversion (``floor``): one variable for every such
#: primitive, as each occurrence substitutes its own unknown for it
_RESULT = Var(RESULT_VAR, "Atom")


def primitive_type(prim: Primitive) -> Type:
    """The primitive's type as the contract prints it (overloaded ``x`` left as a variable)."""
    return _entry(prim)[1]


def instantiate(prim: Primitive, origin: str) -> Type:
    """The type of one occurrence: an overloaded atom type becomes a fresh unknown."""
    _, t, overload_var = _entry(prim)
    unknowns: dict = {}
    if overload_var is not None:
        allowed = None if prim.overload == ANY_ATOM else prim.overload
        unknowns[overload_var] = AtomMeta(allowed, origin)
    if prim.result_overload is not None:  # (as wide as x, if there is an x; else Int)
        unknowns[_RESULT] = AtomMeta(prim.result_overload, f"the result of {origin}", default=unknowns.get(overload_var))
    return subst(t, unknowns) if unknowns else t


def _entry(prim: Primitive) -> tuple[Primitive, Type, Optional[Var]]:
    """The cached type of ``prim``.  Threads checking at the same time must all see the same type
    *and* the same overloaded variable (``instantiate`` substitutes that very variable); a
    primitive registered again under a name gets a type of its own (the identity check)."""
    entry = _TYPES.get(prim.name)
    if entry is None or entry[0] is not prim:
        with _LOCK:
            entry = _TYPES.get(prim.name)
            if entry is None or entry[0] is not prim:
                entry = (prim, *_build_type(prim))
                _TYPES[prim.name] = entry
    return entry


def _first_appearance(signature: str, names: list[str]) -> list[str]:
    tokens = re.findall(r"[^\s()\[\]]+", signature)
    return [t for i, t in enumerate(tokens) if t in names and t not in tokens[:i]]


def _build_type(prim: Primitive) -> tuple[Type, Optional[Var]]:
    sorts = dict(prim.sorts)
    overload_var = Var(OVERLOAD_VAR, "Atom") if prim.overload is not None else None
    overload_vars = [overload_var] if overload_var else []
    if prim.result_overload is not None:
        overload_vars.append(_RESULT)
    order = _first_appearance(prim.signature, list(sorts))
    index_vars = [Var(n, sorts[n]) for n in order if sorts[n] == "Dim"]
    index_vars += [Var(n, sorts[n]) for n in order if sorts[n] == "Shape"]
    type_vars = [Var(n, sorts[n]) for n in order if sorts[n] in ("Atom", "Array")]
    scope = Scope().extend(index_vars + type_vars + overload_vars)
    (node,) = read(prim.signature, f"<primitive {prim.name}>")
    t: Type = kind_type(parse_type(node), scope, "Atom")
    if type_vars:
        t = TForall(tuple(type_vars), TArr(t, SCALAR))
    if index_vars:
        t = TPi(tuple(index_vars), TArr(t, SCALAR))
    return t, overload_var
