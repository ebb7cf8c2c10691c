"""Record classes: what ``dataclasses.dataclass`` makes, for the flavours remora uses, built at a
fraction of its start-up cost and made at a fraction of its per-instance cost.

``dataclass`` compiles every method it generates on its own, nested in a factory function —
four for a frozen class, about 0.6 ms a class — so remora's ninety syntax, type, typed-tree and
erased-tree classes took some 55 ms of every start, a quarter of what ``remora eval -e '(+ 1 2)'``
spent.  :func:`record` compiles a class's methods only when one is first called (most runs use a
fraction of the classes), as one flat block of source, with ``dataclass``'s meaning:
``__init__`` takes the fields in order (a base record's first) with their defaults and default
factories (:func:`factory`, for ``field(default_factory=…)``); ``__repr__`` shows them; with
``eq``, ``__eq__`` compares them as a tuple between instances of the same class, and
``__hash__`` hashes that tuple when the record is also ``frozen`` (it is ``None`` otherwise, as
``dataclass`` makes it).

One difference: ``frozen`` is a promise, not a guard.  A frozen record is never changed after
``__init__`` — it is hashed by value, and shared — but assignment is not refused at run time:
the refusal (a ``__setattr__`` of its own) makes every ``__init__`` go through
``object.__setattr__``, which cost 12 % of all type-checking time (a checker makes hundreds of
thousands of types, indices and spans).  A frozen record may still remember facts derived from
its fields (:func:`remora.statics.types.is_ground`) — they never change either.
"""

from __future__ import annotations

from typing import Any, Callable, dataclass_transform

__all__ = ["record", "factory", "replace", "is_record", "field_names"]


class _Factory:
    """A field's default made afresh for each instance (``dataclasses.field(default_factory=…)``)."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]):
        self.make = make


def factory(make: Callable[[], Any]) -> Any:
    """A field default computed by ``make()`` for every instance (a dict, a list, a set …)."""
    return _Factory(make)


_MISSING = object()


@dataclass_transform(eq_default=True, field_specifiers=(factory,))  # (type checkers: read it as dataclass)
def record(cls: type | None = None, /, *, frozen: bool = False, eq: bool = True, repr: bool = True) -> Any:
    """Decorator: make ``cls`` a record class of its annotated fields (see the module's docstring)."""

    def wrap(c: type) -> type:
        return _build(c, frozen, eq, repr)

    return wrap if cls is None else wrap(cls)


def replace(obj: Any, **changes: Any) -> Any:
    """A copy of the record ``obj`` with some fields changed (``dataclasses.replace``)."""
    values = {name: getattr(obj, name) for name in type(obj).__record_fields__}
    values.update(changes)
    return type(obj)(**values)


def is_record(x: Any) -> bool:
    """Whether ``x`` is an instance of a record class (``dataclasses.is_dataclass`` for records)."""
    return not isinstance(x, type) and hasattr(type(x), "__record_fields__")


def field_names(x: Any) -> tuple[str, ...]:
    """The names of a record's fields, in order (``dataclasses.fields`` for records)."""
    return tuple(type(x).__record_fields__)


def _fields(cls: type) -> dict[str, Any]:
    """Field name → default (``_MISSING`` when none), inherited fields first, in declaration order."""
    fields: dict[str, Any] = {}
    for base in reversed(cls.__mro__[1:]):
        fields.update(base.__dict__.get("__record_fields__", {}))
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        if str(annotation).startswith(("ClassVar", "typing.ClassVar")):
            continue
        fields[name] = cls.__dict__.get(name, _MISSING)
    return fields


def _build(cls: type, frozen: bool, eq: bool, repr_: bool) -> type:
    fields = _fields(cls)
    cls.__record_fields__ = fields  # type: ignore[attr-defined]
    for name, default in fields.items():
        if isinstance(default, _Factory) and name in cls.__dict__:
            delattr(cls, name)  # (the class attribute would be the factory, not a value)
    if "__match_args__" not in cls.__dict__:
        cls.__match_args__ = tuple(fields)  # type: ignore[attr-defined,misc]
    if repr_ and "__repr__" not in cls.__dict__:
        cls.__repr__ = _repr  # type: ignore[assignment]
    # The methods compiled from source are compiled when first called, for every class at once
    # (most runs use a fraction of the classes): each is a stand-in until then.
    generated = ["__init__"]
    if eq and "__eq__" not in cls.__dict__:
        generated.append("__eq__")
    own_hash = cls.__dict__.get("__hash__", _MISSING)
    if eq and (own_hash is _MISSING or (own_hash is None and "__eq__" in cls.__dict__)):
        if frozen:
            generated.append("__hash__")
        else:
            cls.__hash__ = None  # type: ignore[assignment]  # (mutable and compared by value)
    for method in generated:
        setattr(cls, method, _stand_in(cls, method, tuple(generated)))
    return cls


def _repr(self) -> str:
    fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in type(self).__record_fields__)
    return f"{type(self).__qualname__}({fields})"


def _stand_in(cls: type, method: str, generated: tuple[str, ...]):
    def stand_in(self, *args, **kwargs):
        if cls.__dict__[method] is stand_in:  # (another thread may have compiled them meanwhile)
            _compile(cls, generated)
        return cls.__dict__[method](self, *args, **kwargs)

    stand_in.__name__ = stand_in.__qualname__ = method
    return stand_in


def _compile(cls: type, generated: tuple[str, ...]) -> None:
    """Compile the class's ``generated`` methods from source (one flat block) and install them."""
    fields = cls.__record_fields__  # type: ignore[attr-defined]
    names = list(fields)
    namespace: dict[str, Any] = {"_MISSING": _MISSING}
    params, body = ["self"], []
    for name, default in fields.items():
        if isinstance(default, _Factory):
            namespace[f"_f_{name}"] = default.make
            params.append(f"{name}=_MISSING")
            body.append(f"    if {name} is _MISSING: {name} = _f_{name}()")
        elif default is not _MISSING:
            namespace[f"_d_{name}"] = default
            params.append(f"{name}=_d_{name}")
        else:
            params.append(name)
    body += [f"    self.{name} = {name}" for name in names]
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()")
    lines = [f"def __init__({', '.join(params)}):", *(body or ["    pass"])]
    as_tuple = "(" + "".join(f"{{0}}.{name}, " for name in names) + ")"
    if "__eq__" in generated:
        lines += [
            "def __eq__(self, other):",
            "    if other.__class__ is self.__class__:",
            f"        return {as_tuple.format('self')} == {as_tuple.format('other')}",
            "    return NotImplemented",
        ]
    if "__hash__" in generated:
        lines += ["def __hash__(self):", f"    return hash({as_tuple.format('self')})"]
    exec(compile("\n".join(lines), f"<record {cls.__qualname__}>", "exec"), namespace)
    for method in generated:
        fn = namespace[method]
        fn.__qualname__ = f"{cls.__qualname__}.{method}"
        fn.__module__ = cls.__module__
        setattr(cls, method, fn)
