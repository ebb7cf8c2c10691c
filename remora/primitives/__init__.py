"""Primitive operators: each defined once (type, whole-frame meaning, documentation).

Importing this package registers every primitive in :data:`PRIMITIVES`.
"""

from . import arrays, control, counting, derivatives, ordering, scalar  # noqa: F401  (registration side effects)
from .registry import ANY_ATOM, PRIMITIVES, Primitive, is_primitive

__all__ = ["ANY_ATOM", "PRIMITIVES", "Primitive", "is_primitive"]
