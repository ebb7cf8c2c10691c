"""The seam where array libraries plug in (contract §8).

Every operation the engines and the primitives do on atom data goes through a backend object
(:class:`~remora.backends.base.Backend`: the array-API standard's names, plus the few kernels
it lacks); frames of functions and boxes are host-side object arrays
(:mod:`~remora.backends.host`).  NumPy is imported only in this package — and by
``interfaces.api``, whose users hand in NumPy arrays.  A backend module is imported when it is
first asked for, so ``import remora`` loads no array library.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from .base import ASSOCIATIVE, OBJECT, REPS, Backend

#: backend name → (module, attribute) of its one instance
KNOWN = {
    "numpy": ("numpy_backend", "BACKEND"),
    "jax": ("jax_backend", "BACKEND"),
    "dask": ("dask_backend", "BACKEND"),
}
DEFAULT = "numpy"
_loaded: dict[str, Backend] = {}


class BackendUnavailable(ImportError):
    """A known backend whose array library (an optional extra) is not installed."""


def get(name: str = DEFAULT) -> Backend:
    """The backend called ``name`` (a ValueError naming the known ones otherwise)."""
    backend = _loaded.get(name)
    if backend is None:
        if name not in KNOWN:
            raise ValueError(f"unknown backend {name!r} (known: {', '.join(sorted(KNOWN))})")
        module, attribute = KNOWN[name]
        try:
            loaded = import_module(f".{module}", __name__)
        except ImportError as err:  # the library is an optional extra (contract §8)
            raise BackendUnavailable(
                f"the {name} backend needs {err.name or 'its library'}, which is not installed: "
                f"pip install 'remora[{name}]'"
            ) from err
        backend = _loaded[name] = getattr(loaded, attribute)
    return backend


def of(x: Any) -> Backend:
    """The backend an array belongs to (host object arrays: the default's).  The default is
    asked first: a backend may hold NumPy arrays too (the JAX backend's eager values, D48)."""
    default = get()
    if default.owns(x):
        return default
    for backend in _loaded.values():
        if backend.owns(x):
            return backend
    return default


__all__ = ["ASSOCIATIVE", "OBJECT", "REPS", "Backend", "BackendUnavailable", "DEFAULT", "KNOWN", "get", "of"]
