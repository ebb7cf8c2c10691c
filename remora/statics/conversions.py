"""What the checker says when two numeric atom types meet (contract §2, §10): Remora never
converts implicitly, so the message names the conversion to write.

One place for the wording, which every rule that compares atom types uses — an argument
against its parameter (T-APP), the arguments of an instantiation against each other
(inference), the atoms of a literal.
"""

from __future__ import annotations

from ..atoms import NUMBERS, NUMERIC, RESTRICTED_KINDS, conversion_name, in_order
from ..errors import replace_with, wrap_in
from ..front import syntax as S
from .types import AtomMeta, LiteralMeta, TArr, TBase, TFun, TVar, Type, describe_allowed, prune, show_type

PREFACE = "Remora never converts implicitly: "


def as_written(t: Type) -> Type:
    """``t`` for a message: a literal whose type no context has settled reads as the type it
    would get (``Int`` or ``Float``)."""
    t = prune(t)
    if isinstance(t, LiteralMeta) and isinstance(t.default, TBase):
        return t.default
    return t


def numeric_name(t: Type) -> str | None:
    """The name of ``t`` if it is a numeric base type (as written), else None."""
    t = as_written(t)
    return t.name if isinstance(t, TBase) and t.name in NUMBERS else None


def on_one_of_them(a: str, b: str) -> str:
    """The hint for two numeric types that should have been one (``Int`` and ``Float``: use
    int->float, or floor, round, …, on one of them); empty when ``a`` or ``b`` is not numeric."""
    if a == b or a not in NUMBERS or b not in NUMBERS:
        return ""
    if NUMBERS[a].integral != NUMBERS[b].integral:
        whole, fraction = (a, b) if NUMBERS[a].integral else (b, a)
        text = f"{conversion_name(whole, fraction)} (or floor, round, …)"
    else:
        text = f"{conversion_name(a, b)} or {conversion_name(b, a)}"
    return f"; {PREFACE}use {text} on one of them"


def arrays_differ(a: Type, b: Type) -> str:
    """The hint for two array types whose atoms are different numeric types (an ``if``'s
    branches, a frame's cells): the conversion to write on one of them; else empty."""
    a, b = prune(a), prune(b)
    if not (isinstance(a, TArr) and isinstance(b, TArr)):
        return ""
    x, y = numeric_name(a.atom), numeric_name(b.atom)
    return on_one_of_them(x, y) if x and y else ""


def convert(given: str, wanted: str, written: S.Expr | None = None) -> str:
    """How to make an argument of type ``given`` the ``wanted`` one: rewrite it where it is a
    number literal of the other class (``2`` where a Float is wanted: ``2.0``), else the
    conversion primitive."""
    value = literal_number(written) if written is not None else None
    conversion = conversion_name(given, wanted)
    if isinstance(value, int) and not NUMBERS[wanted].integral:
        return f"write {value}.0, or use {conversion}"
    if isinstance(value, float) and NUMBERS[wanted].integral and value.is_integer():
        return f"write {int(value)}, or use {conversion}"
    if NUMBERS[wanted].integral and not NUMBERS[given].integral:
        return f"use {conversion} to make an {wanted}"
    return f"use {conversion}"


def nearest_allowed(given: str, allowed) -> str:
    """The member of ``allowed`` (numeric type names) to convert ``given`` to: the one as wide,
    of the other class (a ``Float`` where only integers will do: ``Int``)."""
    ordered = sorted(allowed, key=lambda n: (NUMBERS[n].bits != NUMBERS[given].bits, n not in ("Int", "Float")))
    return ordered[0]


def literal_number(e: S.Expr) -> int | float | None:
    """The number a scalar number literal writes, else None."""
    if isinstance(e, S.ArrayLit) and not e.dims and isinstance(e.atoms[0], S.Lit):
        v = e.atoms[0].value
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return v
    return None


def is_open(t: Type) -> bool:
    """Whether ``t`` is an overloaded unknown no context has settled (a literal's reads as its
    default instead: :func:`as_written`)."""
    t = prune(t)
    return isinstance(t, AtomMeta) and not isinstance(t, LiteralMeta)


# ---------------------------------------------------------------------------
# An argument's atom type against its parameter's (T-APP)


def atom_mismatch(i, arg, arg_atom, param_atom, name, e, args, fun, fixes: list | None = None) -> str:
    """Why argument ``i`` of the application ``e`` (of ``name``, a function of type ``fun``) does
    not fit: its atom type against the parameter's, with the conversion — or the literal — to
    write where both are numeric (and, into ``fixes``, those edits: an editor's code actions)."""
    overloaded = isinstance(param_atom, AtomMeta)  # before pruning: was it an overloaded unknown?
    param_meta = prune(param_atom)
    given, wanted = as_written(arg_atom), as_written(param_atom)
    given_name, written = numeric_name(given), e.args[i - 1]
    if is_open(wanted):
        msg = f"argument {i} of {name} has atom type {show_type(given)}, but {name} works on {describe_allowed(wanted)}"
        if given_name and wanted.allowed and wanted.allowed <= NUMERIC:
            msg += "; " + PREFACE + convert(given_name, nearest_allowed(given_name, wanted.allowed), written)
        return msg
    if overloaded and isinstance(given, TBase):
        allowed = _original_allowed(fun, i)
        if allowed is not None and given.name not in allowed:
            return f"argument {i} of {name} has atom type {show_type(given)}, but {name} works on " + " or ".join(
                in_order(allowed))
    msg = f"argument {i} of {name} has atom type {show_type(given)}, but {name} expects {show_type(wanted)} here"
    literal = literal_number(written)
    if isinstance(wanted, TVar) and wanted.var.sort in RESTRICTED_KINDS and isinstance(literal, int):
        return msg + f"; write (from-int {literal}) for the number {literal} at type {show_type(wanted)}"
    wanted_name = numeric_name(wanted)
    if given_name and wanted_name:
        source = _setter(i, args, fun, param_meta) if overloaded else None
        if source:
            msg += f" (fixed by argument {source})"
        msg += "; " + PREFACE + _promotion_hint(e, i, source, given_name, wanted_name)
        if fixes is not None:
            fixes.extend(_fixes(e, i, source, given_name, wanted_name))
    return msg


def _fixes(e: S.App, i: int, source: int | None, given: str, wanted: str) -> list:
    """The edits :func:`_promotion_hint` words: the literal rewritten as the other class, and the
    conversion applied — on argument ``i``, or on the argument that fixed the type when argument
    ``i`` is a float where an integer was fixed (convert the integer side instead)."""
    if source and not NUMBERS[given].integral and NUMBERS[wanted].integral:
        target, have, want = e.args[source - 1], wanted, given
    else:
        target, have, want = e.args[i - 1], given, wanted
    out = []
    if not (NUMBERS[want].integral and not NUMBERS[have].integral):
        out.append(wrap_in(target.span, conversion_name(have, want)))
    value = literal_number(target)
    if isinstance(value, int) and not NUMBERS[want].integral:
        out.append(replace_with(target.span, f"{value}.0"))
    return out


def _original_allowed(fun: TFun, i: int):
    """What an overloaded parameter's atom type could be before arguments settled it."""
    p = fun.params[i - 1]
    atom = p.atom if isinstance(p, TArr) else None
    while isinstance(atom, AtomMeta):
        if atom.allowed is not None:
            return atom.allowed
        atom = atom.solution
    return None


def _setter(i: int, args, fun: TFun, atom: Type) -> int | None:
    """Which earlier argument settled an overloaded atom type (for the message)."""
    for j in range(1, i):
        p = prune(fun.params[j - 1])
        if isinstance(p, TArr) and isinstance(p.atom, AtomMeta) and prune(p.atom) is atom:
            return j
    return None


def _promotion_hint(e: S.App, i: int, source: int | None, given: str, wanted: str) -> str:
    """How to make argument ``i`` (a ``given``) meet the ``wanted`` type another argument
    (``source``) fixed: where that argument is a literal that could have been the other type,
    rewrite it (``(+ 1 2.5)``: write 1.0); else convert argument ``i``, or the other side."""
    if source:
        setter = literal_number(e.args[source - 1])
        if isinstance(setter, int) and not NUMBERS[given].integral and NUMBERS[wanted].integral:
            return f"use {conversion_name(wanted, given)}, or write {setter}.0"
        rewrite = convert(given, wanted, e.args[i - 1])
        if rewrite.startswith("write"):  # (argument i is a literal of the other class: rewriting it is the fix)
            return rewrite
        return rewrite + f" on argument {i} (or {conversion_name(wanted, given)} on argument {source})"
    if not NUMBERS[given].integral and NUMBERS[wanted].integral:  # a float where only an integer will do
        return f"use floor, ceiling, round or truncate to make an {wanted}"
    return convert(given, wanted, e.args[i - 1])
