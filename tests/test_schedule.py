"""The schedule pass (remora/ir/passes/schedule.py): each pure operation just before its first
reader, so fewer large values are alive at once — whatever order the program was written in —
and never past a write, a loop or a site."""

from __future__ import annotations

import numpy as np
import pytest

import remora
from remora.ir.core import Eqn, Sym, names, outs_of
from remora.ir.passes import schedule
from remora.plans import PLANS

N = 64
GRID = (np.random.default_rng(5).random((N, N)) < 0.3).astype(np.int64)

SHIFT = "(shift (λ ((i [Int]) (j [Int])) ((λ ((row [Int 64])) (rotate row j)) (rotate g i))))"
EIGHT = ("(shift 1 1) (shift 1 0) (shift 1 -1) (shift 0 1) "
         "(shift 0 -1) (shift -1 1) (shift -1 0) (shift -1 -1)")
PROGRAMS = {
    "a frame of shifts reduced": f"((λ ((g [Int 64 64])) (let ({SHIFT}) (reduce + [{EIGHT}]))) grid)",
    "nested sums": f"""((λ ((g [Int 64 64])) (let ({SHIFT})
        (+ (+ (+ (shift 1 1) (shift 1 0)) (+ (shift 1 -1) (shift 0 1)))
           (+ (+ (shift 0 -1) (shift -1 1)) (+ (shift -1 0) (shift -1 -1)))))) grid)""",
    "shifts bound first": f"""((λ ((g [Int 64 64])) (let ({SHIFT})
        (let ((a (shift 1 1)) (b (shift 1 0)) (c (shift 1 -1)) (d (shift 0 1))
              (e (shift 0 -1)) (f (shift -1 1)) (h (shift -1 0)) (k (shift -1 -1)))
          (+ a (+ b (+ c (+ d (+ e (+ f (+ h k)))))))))) grid)""",
}


def _most_alive(steps: list[Eqn], result) -> int:
    """The most values alive at once: each from the step that makes it to its last reader."""
    last: dict[str, int] = {}
    for i, step in enumerate(steps):
        for n in names(step.args) | names(step.kw):
            last[n] = i
    for n in names(result):
        last[n] = len(steps)
    alive, most = set(), 0
    for i, step in enumerate(steps):
        alive = {n for n in alive if last.get(n, -1) >= i}
        alive |= {o.name for o in outs_of(step) if o.name in last}
        most = max(most, len(alive))
    return most


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_each_shift_is_made_just_before_the_sum_that_reads_it(name):
    PLANS.clear()
    value = remora.evaluate(PROGRAMS[name], grid=GRID)
    again = remora.evaluate(PROGRAMS[name], grid=GRID)
    expected = sum(np.roll(np.roll(GRID, i, 0), j, 1) for i in (1, 0, -1) for j in (1, 0, -1) if (i, j) != (0, 0))
    assert np.array_equal(value, expected) and np.array_equal(again, expected)
    irs = [p.ir for _, kept in list(PLANS._plans.values()) if kept for p in kept if p.ir is not None]
    program = irs[-1]
    steps, result = program.eqns(), program.result
    assert sum(1 for s in steps if s.op == "roll") == 8
    unscheduled = [s for s in sorted(steps, key=lambda s: s.op != "roll")]  # every roll first
    assert _most_alive(steps, result) <= 5 < 8 <= _most_alive(unscheduled, result)


def _sym(name: str) -> Sym:
    return Sym(np.zeros(3), name, None)


def test_a_read_stays_before_a_write_into_what_it_read():
    x, y, z, w = _sym("x"), _sym("y"), _sym("z"), _sym("w")
    steps = [Eqn("call", "negative", (x,), y),                 # reads x …
             Eqn("call", "scatter", (x, 0, z), w),             # … before x is written in place
             Eqn("call", "exp", (y,), z)]
    out = schedule.schedule(steps, z)
    assert [s.op for s in out] == ["negative", "scatter", "exp"]


def test_guards_and_checks_keep_their_order_with_their_operands_before_them():
    a, b, c, d = _sym("a"), _sym("b"), _sym("c"), _sym("d")
    steps = [Eqn("call", "exp", (a,), b), Eqn("call", "sin", (a,), c),
             Eqn("require", "check", (c,), None), Eqn("call", "add", (b, c), d)]
    out = schedule.schedule(steps, d)
    assert [s.op for s in out] == ["sin", "check", "exp", "add"]
