"""Contraction: a sum of a product over a shared axis is one contraction.

**Law.**  Let ``M = x1 * x2 * … * xk`` (elementwise, NumPy broadcasting) where each ``xi`` is a
*view* of a source array ``si`` — a chain of ``broadcast_to``, ``permute_dims``, ``expand_dims``
and ``reshape`` s that only add or drop unit axes — so that every axis of ``si`` is one axis of
``M``.  Then ``reduce(add, M, a)`` (and ``sum(M, a)``; and ``vecdot(x1, x2)``, the same with
``a`` the last axis) is ``einsum(S, s1, …, sk)``: with one letter per axis of ``M``, each
source's subscript lists the letters of the axes it varies along, and the output lists every
axis but ``a`` that some source varies along; the axes no source varies along are broadcast
back.  It holds for any operand order, any scaling (a 0-d factor is an operand without
letters), transposition or rank: the rewrite reads the axes, not the spelling — ``(sum (* a
b))``, ``(reduce + (* v m))``, ``(dot row (transpose b))`` lifted over rows, a λ whose body is
``(sum (* x y))`` mapped over a frame all become one ``einsum``, which the backend lowers to its
contraction (NumPy: ``einsum``, BLAS where the subscripts are a matrix product).  The product
``M`` — as large as all the operands' frames together — is never made.

**Exactness.**  Exact for ``Int`` (wrapping ``int64`` arithmetic is associative and
commutative).  For ``Float`` the library sums in its own order, not pairwise along the axis, so
it relies on D27's allowance: a ``Float`` contraction of at least ``BLAS_WORK`` multiply-adds
may round differently in the last bits from the cell-by-cell sums; smaller ones are left as
they are (the engines then agree exactly).

A ``concat`` along the summed axis of the product and of constant zeros (the identity row an
``append`` gives a ``reduce``) is summed as the product alone.

**Declines:** a product read by anything else (it is needed anyway), an operand that is not a
view of a source in the sense above, a reduced axis no source varies along, ``Bool`` atoms,
operands of different dtypes, and contractions with more than 52 axes.
"""

from __future__ import annotations

import math
from typing import Any

from ..core import Eqn, Sym
from .common import Context, in_bodies, read_counts

#: Float contractions with at least this many multiply-adds may round as the library does
#: (decisions.md D27)
BLAS_WORK = 1 << 9

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_PRODUCTS = ("multiply", "__mul__")


def run(steps: list[Eqn], result: Any, ctx: Context) -> tuple[list[Eqn], Any]:
    reads = read_counts(steps, result)
    made = {}
    for step in steps:
        for o in (step.outs if type(step.outs) is tuple else (step.outs,) if step.outs is not None else ()):
            made[o.name] = step
    out: list[Eqn] = []
    for step in steps:
        if step.kind == "loop":
            out.append(in_bodies(step, lambda body, res: run(body, res, ctx)))
            continue
        found = _contraction(step, made, reads)
        if found is not None:
            out.extend(_einsum(step, *found, ctx))
            if step.outs.value.dtype.kind == "f":
                ctx.same_rounding = False  # (D27: the library's order of summing)
            continue
        out.append(step)
    return out, result


def _contraction(step: Eqn, made: dict, reads: dict):
    """(the factors as (source, labels), the product's shape, the summed axis of the product,
    the product's axes in the result's order) when ``step`` sums a product over an axis as the
    law says; None otherwise."""
    if step.kind != "call" or step.kw or type(step.outs) is not Sym:
        return None
    if step.op == "reduce" and len(step.args) == 3 and step.args[0] == "add" and type(step.args[1]) is Sym:
        x, axis = step.args[1], step.args[2]
    elif step.op == "sum" and len(step.args) == 2 and type(step.args[0]) is Sym and type(step.args[1]) is int:
        x, axis = step.args
    elif step.op == "vecdot" and len(step.args) == 2 and all(type(a) is Sym for a in step.args):
        a, b = step.args
        shape = _broadcast(a.value.shape, b.value.shape)
        if not shape:
            return None
        return _mapped([a, b], shape, len(shape) - 1, list(range(len(shape) - 1)), made, step)
    else:
        return None
    axis %= x.ndim
    x = _without_zero_parts(x, axis, made, reads)
    found = _product_under_views(x, made, reads)
    if found is None:
        return None
    product, x_to_m = found
    if x_to_m[axis] is None:
        return None
    factors = _factors(product, made, reads, top=True)
    if factors is None or len(factors) < 2:
        return None
    out_axes = [x_to_m[j] for j in range(x.ndim) if j != axis]
    return _mapped(factors, tuple(product.value.shape), x_to_m[axis], out_axes, made, step)


def _without_zero_parts(x: Sym, axis: int, made: dict, reads: dict) -> Sym:
    """The one part of ``x`` that matters to its sum along ``axis`` when ``x`` is a ``concat``
    along that axis of it and of constant parts of zeros (the identity row an ``append`` gives a
    ``reduce``, n-body's ``[[0.0 0.0 0.0]]``): the sum of the join is the sum of that part, in
    the grouping the contraction chooses anyway (D27: the pass rounds as the library does).
    Otherwise ``x``."""
    eqn = made.get(x.name)
    if eqn is None or eqn.kind != "call" or eqn.op != "concat" or reads.get(x.name, 0) != 1:
        return x
    along = eqn.args[1] if len(eqn.args) > 1 else dict(eqn.kw).get("axis", 0)
    if type(along) is not int or along % x.ndim != axis or type(eqn.args[0]) not in (list, tuple):
        return x
    live = [p for p in eqn.args[0] if not _zeros(p)]
    if len(live) != 1 or type(live[0]) is not Sym or live[0].ndim != x.ndim:
        return x
    return live[0]


def _zeros(x: Any) -> bool:
    """Whether ``x`` is a constant holding only zeros (of either sign)."""
    if type(x) is Sym or getattr(x, "dtype", None) is None:
        return False
    return not x.any()  # (an empty part too)


def _product_under_views(x: Sym, made: dict, reads: dict):
    """(the product ``x`` is a view of, for each axis of ``x`` the product's axis it is — None for
    a unit axis), following views that only ``x``'s chain reads; None if no product is found."""
    x_to_m: list = list(range(x.ndim))
    current = x
    while True:
        eqn = made.get(current.name)
        if eqn is None or eqn.kind != "call" or eqn.kw or reads.get(current.name, 0) != 1:
            return None
        if eqn.op in _PRODUCTS:
            return current, x_to_m
        if not eqn.args or type(eqn.args[0]) is not Sym:
            return None
        inner = _through(eqn, tuple(current.value.shape))
        if inner is None:
            return None
        x_to_m = [None if m is None else inner[m] for m in x_to_m]
        current = eqn.args[0]


def _mapped(factors: list, shape: tuple, axis: int, out_axes: list, made: dict, step: Eqn):
    dtype = step.outs.value.dtype
    if dtype.kind not in "iuf" or any(getattr(f, "dtype", None) != dtype for f in factors):
        return None
    if len(shape) > len(_LETTERS) or not shape:
        return None
    if dtype.kind == "f" and math.prod(shape) < BLAS_WORK:
        return None
    mapped = []
    for f in factors:
        m = _source(f, made)
        if m is None:
            return None
        source, src_of = m
        offset = len(shape) - len(src_of)  # (NumPy broadcasting aligns the trailing axes)
        if offset < 0:
            return None
        # each axis of the source: the axis of the product it runs along (None: a unit axis)
        labels: list = [None] * len(_shape(source))
        for j, s in enumerate(src_of):
            if s is not None:
                labels[s] = j + offset
        if any(lab is None and _shape(source)[s] != 1 for s, lab in enumerate(labels)):
            return None
        mapped.append((source, labels))
    if not any(axis in (lab for lab in labels if lab is not None) for _, labels in mapped):
        return None  # (no operand varies along the summed axis)
    return mapped, shape, axis, out_axes


def _shape(x: Any) -> tuple:
    return tuple(x.value.shape) if type(x) is Sym else tuple(x.shape)


def _factors(x: Sym, made: dict, reads: dict, top: bool) -> list | None:
    """The operands of the product tree rooted at ``x`` (multiplies read once, flattened)."""
    eqn = made.get(x.name)
    if eqn is None or eqn.kind != "call" or eqn.op not in _PRODUCTS or eqn.kw or len(eqn.args) != 2:
        return None if top else [x]
    if reads.get(x.name, 0) != 1:
        return None if top else [x]
    out: list = []
    for a in eqn.args:
        if type(a) is Sym:
            inner = _factors(a, made, reads, top=False)
            out.extend(inner if inner is not None else [a])
        elif getattr(a, "dtype", None) is not None:
            out.append(a)  # (a constant: see _constant)
        else:
            return None
    return out


def _source(x: Any, made: dict) -> tuple[Any, list] | None:
    """``(source, src_of)``: ``x`` is a view of ``source``, and axis ``j`` of ``x`` is axis
    ``src_of[j]`` of ``source`` (None: ``x`` does not vary along it).  A 0-d constant is its own
    source with no axes."""
    if type(x) is not Sym:
        return _constant(x)
    shape = tuple(x.value.shape)
    eqn = made.get(x.name)
    if eqn is not None and eqn.kind == "call" and not eqn.kw and eqn.args and type(eqn.args[0]) is Sym:
        inner = _through(eqn, shape)
        if inner is not None:
            below = _source(eqn.args[0], made)
            if below is not None:
                source, labels = below
                return source, [None if j is None else labels[j] for j in inner]
    return x, [None if d == 1 else j for j, d in enumerate(shape)]


def _constant(x: Any) -> tuple[Any, list] | None:
    """A constant operand as a source: the atoms it holds once (a broadcast scalar is 0-d), and
    for each of its axes the axis of the constant it varies along."""
    shape, strides = getattr(x, "shape", None), getattr(x, "strides", None)
    if shape is None or strides is None or getattr(x, "dtype", None) is None:
        return None
    key = tuple(0 if st == 0 or d == 1 else slice(None) for d, st in zip(shape, strides))
    small = x[key + (Ellipsis,)]
    src_of, k = [], 0
    for part in key:
        if part == 0:
            src_of.append(None)
        else:
            src_of.append(k)
            k += 1
    return small, src_of


def _through(eqn: Eqn, shape: tuple) -> list | None:
    """For a view ``eqn`` of its first argument ``y``: for each axis of the result, the axis of
    ``y`` it is (None: a unit or broadcast axis); None if ``eqn`` is no such view."""
    y = eqn.args[0]
    ys = tuple(y.value.shape)
    if eqn.op == "broadcast_to":
        offset = len(shape) - len(ys)
        if offset < 0:
            return None
        return [None if j < offset or ys[j - offset] == 1 else j - offset for j in range(len(shape))]
    if eqn.op == "permute_dims":
        axes = tuple(eqn.args[1])
        return [None if ys[a] == 1 else a for a in axes]
    if eqn.op in ("reshape", "expand_dims"):
        long_in = [j for j, d in enumerate(ys) if d != 1]
        long_out = [j for j, d in enumerate(shape) if d != 1]
        if [ys[j] for j in long_in] != [shape[j] for j in long_out]:
            return None  # (a reshape that merges or splits axes)
        where = dict(zip(long_out, long_in))
        return [where.get(j) for j in range(len(shape))]
    return None


def _broadcast(a: tuple, b: tuple) -> tuple | None:
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            return None
        out.append(max(x, y))
    return tuple(out)


def _einsum(step: Eqn, mapped: list, shape: tuple, axis: int, out_axes: list, ctx: Context) -> list[Eqn]:
    """The equations: each source's unit axes dropped, one ``einsum`` whose output letters follow
    the result's axes, the axes no source varies along put back (``reshape``, ``broadcast_to``)."""
    eqns: list[Eqn] = []
    operands, subscripts, varying, scales = [], [], set(), []
    for source, labels in mapped:
        if not labels and len(mapped) > 2:  # (a 0-d factor scales the contraction: applied after it)
            scales.append(source)
            continue
        kept = [(j, lab) for j, lab in enumerate(labels) if lab is not None]
        varying.update(lab for _, lab in kept)
        if len(kept) != len(_shape(source)):
            shape_kept = tuple(_shape(source)[j] for j, _ in kept)
            if type(source) is Sym:
                squeezed = ctx.fresh(source.value.dtype, shape_kept)
                eqns.append(Eqn("call", "reshape", (source, shape_kept), squeezed))
                source = squeezed
            else:
                source = source.reshape(shape_kept)  # (a constant: its unit axes dropped now)
        operands.append(source)
        subscripts.append("".join(_LETTERS[lab] for _, lab in kept))
    free = [m for m in out_axes if m is not None and m in varying]
    spec = ",".join(subscripts) + "->" + "".join(_LETTERS[m] for m in free)
    out_shape = tuple(step.outs.value.shape)
    dtype = step.outs.value.dtype
    contracted = tuple(shape[m] for m in free)
    target = step.outs if contracted == out_shape and not scales else ctx.fresh(dtype, contracted)
    eqns.append(Eqn("call", "einsum", (spec, *operands), target))
    for k, scale in enumerate(scales):
        scaled = step.outs if k == len(scales) - 1 and contracted == out_shape else ctx.fresh(dtype, contracted)
        eqns.append(Eqn("call", "multiply", (target, scale), scaled))
        target = scaled
    if target is step.outs:
        return eqns
    placed = tuple(shape[m] if m is not None and m in varying else 1 for m in out_axes)
    if placed == out_shape:
        eqns.append(Eqn("call", "reshape", (target, out_shape), step.outs))
    else:
        unit = ctx.fresh(dtype, placed)
        eqns.append(Eqn("call", "reshape", (target, placed), unit))
        eqns.append(Eqn("call", "broadcast_to", (unit, out_shape), step.outs))
    return eqns
