"""The compiled calls the API keeps (spec D48, "A compiled call"): on a compiling backend, a
later call of ``remora.evaluate`` or of a ``remora.function`` whose inputs have the types, dtypes
and shapes of an earlier one goes straight to that call's compiled evaluation — its inputs were
checked, its program checked and erased, its compiled function looked up, once, on the first call.
Only inputs the API hands to the backend as they are (JAX arrays, plain NumPy arrays) are kept:
for them the checks are the same whatever their values."""

from __future__ import annotations

from typing import Any, Callable, Iterable


#: A kept call: ``call(arrays)`` — the inputs' arrays in the order of the signature it was kept
#: by (any iterable: a ``dict``'s values, a tuple of arguments) — returns what the API returns.
CompiledCall = Callable[[Iterable[Any]], Any]


class CompiledCalls:
    """Kept calls by (the caller's key, the inputs' fast signature); at most ``most`` of them (all
    forgotten past that: a caller passing ever new shapes does not grow it without bound)."""

    __slots__ = ("_table", "_most")

    def __init__(self, most: int = 256) -> None:
        self._table: dict[tuple, CompiledCall] = {}
        self._most = most

    def __len__(self) -> int:
        return len(self._table)

    def clear(self) -> None:
        """Forget every kept call (a name registered since may change what a program means)."""
        self._table.clear()

    def get(self, key: Any, items: Iterable[tuple[Any, Any]]) -> CompiledCall | None:
        signature = fast_signature(items)
        return None if signature is None else self._table.get((key, signature))

    def keep(self, key: Any, items: Iterable[tuple[Any, Any]], call: CompiledCall) -> None:
        if len(self._table) >= self._most:
            self._table.clear()
        self._table[(key, fast_signature(items))] = call


def fast_signature(items: Iterable[tuple[Any, Any]]) -> tuple | None:
    """The inputs' names, types, dtypes and shapes, read without converting anything, as one flat
    tuple (None when one has no dtype: a Python scalar, which the API converts).  A loop adding
    to a tuple, not a comprehension: read right after a compiled call, a comprehension's own
    frame costs a few µs more (measured: spec D48, "A compiled call")."""
    signature: tuple = ()
    try:
        for k, v in items:
            signature += (k, type(v), v.dtype, v.shape)
    except AttributeError:
        return None
    return signature


def through(calls: CompiledCalls, key: Any, given: list, xp: Any, node: Any, run: Callable[[dict], Any],
            handed: dict, output: Callable[[Any, Any], Any]) -> Any:
    """``output(xp, run(handed))`` through ``xp``'s compiled evaluation of ``node``
    (``Backend.compiled``); on a compiling backend the call is kept in ``calls`` under ``key``
    and the fast signature of ``given`` (the user's inputs, as (name, value) pairs in
    ``handed``'s order) when each was handed to the backend as it is: as the entry's
    ``replay`` for these inputs when it has one (the JAX backend's: spec D48), else as the
    entry itself, called with the inputs by name."""
    entry = xp.compiled(node, handed)
    value = entry(run, handed)
    if xp.compiles and all(a is b for (_, a), b in zip(given, handed.values())):
        offered = getattr(entry, "replay", None)
        call = offered(run, handed) if offered is not None else None
        if call is None:
            names = tuple(handed)

            def call(arrays: Iterable[Any]) -> Any:
                return output(xp, entry(run, dict(zip(names, arrays))))

        calls.keep(key, given, call)
    return output(xp, value)
