"""η: a λ whose body is an associative primitive applied to its parameters *is* that primitive.

**Law.**  ``(λ ((x (Arr t F)) (y (Arr t F))) (p x y))`` — a λ whose body applies a primitive
``p`` with scalar cells to exactly its parameters, in order, all of one type — denotes ``p``
lifted over the frame ``F``: applied to any arguments it takes the same steps (lift, map, δ) as
``p`` applied to them.  That is η-reduction, which holds in Remora for any such λ.  When ``p``
is *commutative* exactly (``+``, ``*``, ``and``, ``or``, ``xor``: IEEE ``+`` and ``*`` are
commutative, signed zeros and ``nan`` included), ``(λ (x y) (p y x))`` denotes ``p`` too.
``min``/``max`` are not swapped: NumPy's ``minimum(-0.0, 0.0)`` is ``-0.0`` but
``minimum(0.0, -0.0)`` is ``0.0``.

**Use.**  ``reduce``, ``fold`` and ``scan`` know an associative primitive by its operation name
(``"add"``) and compute with one library reduction or accumulation instead of a loop over the
items that applies a closure at each step; inference's own lifting wrapper already carries the
primitive's name (``TyLam.lifts``).  This pass gives a user's λ the same mark, so
``(reduce (λ ((a [Float]) (b [Float])) (+ a b)) xs)`` runs as ``(reduce + xs)`` — on every engine
(the reference engine too, so the engines agree exactly) and every backend.  What the mark
changes is only *how* the primitive's meaning is computed: a ``reduce`` of it may reassociate
(contract, D22); a ``fold`` or ``scan`` of it stays the exact sequential accumulation (D22).

**Declines** (the λ keeps its closure): a body that is anything but one application of a
primitive with an operation name to the parameter references; parameters of different types;
a parameter used twice or not at all; swapped arguments of ``min``/``max``.
"""

from __future__ import annotations

from ..primitives.registry import PRIMITIVES
from ..statics import typed as T
from ..statics.types import prune

#: the associative operations whose two arguments may be given in either order, exactly
COMMUTATIVE = frozenset({"add", "multiply", "logical_and", "logical_or", "logical_xor"})


def primitive_of(lam: T.TyLam) -> str | None:
    """The name of the associative primitive ``lam`` denotes by the law above, or None."""
    if lam.lifts is not None:
        return lam.lifts
    body = lam.body
    if not isinstance(body, T.TyApp) or len(lam.params) != 2 or len(body.args) != 2:
        return None
    fn = body.fn
    if not (isinstance(fn, T.TyArray) and not fn.dims and len(fn.atoms) == 1 and isinstance(fn.atoms[0], T.TyPrim)):
        return None
    prim = PRIMITIVES.get(fn.atoms[0].name)
    if prim is None or prim.op is None:
        return None
    names = [x for x, _ in lam.params]
    types = {str(prune(t)) for _, t in lam.params}
    if len(types) != 1 or len(set(names)) != 2:
        return None
    used = [a.name if isinstance(a, T.TyRef) and a.key is None else None for a in body.args]
    if used == names or (used == names[::-1] and prim.op in COMMUTATIVE):
        return prim.name
    return None
