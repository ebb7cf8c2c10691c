"""What each transpose rule reads of the forward pass: what reverse mode must store.

``READS[op](need, args)`` is, for an equation of operation ``op`` whose arguments are ``args``
(``need``: which of them are differentiated), the positions of the arguments whose *values* the
rule of :mod:`.rules` reads, and whether it reads the result's.  The tape keeps those and, of
every other variable, only its number, dtype and shape (:meth:`.tape.TapeBackend._residual`).
An operation not in the table keeps everything (always right, possibly more than needed).

So a stencil iterated twenty times stores nothing but the constants it multiplies by (``add``,
``roll`` and a product with a constant read no variable), a loss stores the activations its
products and nonlinearities read, and a ``while`` the states its steps multiply by.
"""

from __future__ import annotations

from typing import Callable

Reads = Callable[[tuple, tuple], tuple]


def _nothing(need: tuple, args: tuple) -> tuple:
    return (), False


def _result(need: tuple, args: tuple) -> tuple:
    return (), True


def _operand(need: tuple, args: tuple) -> tuple:
    return (0,), False


def _all(need: tuple, args: tuple) -> tuple:
    return tuple(range(len(args))), True


def _others(need: tuple, args: tuple) -> tuple:
    """A product's rule: each differentiated operand's cotangent reads the other operands."""
    wanted = [i for i, n in enumerate(need) if n]
    return tuple(i for i in range(len(args)) if any(j != i for j in wanted)), False


def _divide(need: tuple, args: tuple) -> tuple:
    return ((0, 1) if need[1] else (1,)), bool(need[1])


def _reduction(need: tuple, args: tuple) -> tuple:
    op = args[0]
    if op == "add":
        return (), False
    return (1,), op != "multiply"


def _folding(need: tuple, args: tuple) -> tuple:
    """``fold_items(op, z, x, axis)``: a sum reads nothing; a product its start and items."""
    return ((), False) if args[0] == "add" else ((1, 2), False)


def _accumulation(need: tuple, args: tuple) -> tuple:
    return ((), False) if args[0] == "add" else ((1,), True)


READS: dict[str, Reads] = {}
for _names, _reads in (
    (("add", "__add__", "subtract", "__sub__", "negative", "__neg__", "where", "astype", "asarray", "copy",
      "contiguous", "settle", "staged", "read_only", "remade", "bounded", "reshape", "expand_dims",
      "broadcast_to", "moveaxis", "permute_dims", "flip", "roll", "concat", "stack", "compact", "__getitem__",
      "gather", "take", "take_along_axis", "select_items", "scatter", "index_add", "repeat", "resize", "sum",
      "cumulative_sum", "segment_reduce", "floor", "ceil", "round", "trunc", "floor_divide", "__floordiv__",
      "remainder", "__mod__"), _nothing),
    (("sqrt", "exp", "tan"), _result),
    (("log", "sin", "cos", "atan", "abs", "__abs__"), _operand),
    (("multiply", "__mul__", "vecdot", "matmul"), _others),
    (("divide", "__truediv__"), _divide),
    (("pow", "__pow__", "max", "min"), _all),
    (("reduce",), _reduction),
    (("fold_items",), _folding),
    (("accumulate",), _accumulation),
):
    for _name in _names:
        READS[_name] = _reads
READS["maximum"] = READS["minimum"] = lambda need, args: ((0, 1), False)


def _einsum(need: tuple, args: tuple) -> tuple:
    wanted = [i for i, n in enumerate(need) if n and i > 0]
    return tuple(i for i in range(1, len(args)) if any(j != i for j in wanted)), False


READS["einsum"] = _einsum
