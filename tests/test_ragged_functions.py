"""A function argument inside a ragged ``unbox`` body (issue 29, item 2).

An ``unbox`` over boxes of different lengths runs its body once over all boxes (dynamics/ragged.py).
A primitive taking a function (``scan``, ``fold``, ``reduce``, ``while``) whose argument is ragged
and that has no segmented implementation for the case at hand (``scan`` never has one; ``fold``
none for a ragged accumulator; ``append`` makes the argument's length ``k + 1``, per box) runs once
per box — and handed each box the *bare* function atom instead of a 0-d frame of it: an internal
``AttributeError: 'PrimFn' object has no attribute 'size'`` (or ``'Closure'``) on every engine but
the reference one.  Each program here is run on every engine and backend against the reference
engine's value.
"""

from __future__ import annotations

import pytest

from conftest import eval_value
from remora.interfaces.session import Session, show_result
from remora.statics.typed import TyExprForm

BOXES = "(unbox (k v (iota/v [3 1 4])) {})"

PROGRAMS = {
    # the program: a primitive function, Int
    "(tail (scan + 100 (append [5] v)))": "[108 105 111]",
    # Float, a primitive that is not associative
    "(tail (scan - 0.5 (append [5.0] (int->float v))))": "[-7.5 -4.5 -10.5]",
    "(tail (scan * 1.0 (append [2.0] (int->float v))))": "[0.0 0.0 0.0]",
    # Int32: the accumulator's representation is the argument's
    "(tail (scan + (int->int32 100) (append [(int->int32 5)] (int->int32 v))))": "[108 105 111]",
    # an explicit λ made in the body (batched over the boxes), Int and Float
    "(tail (scan (λ ((a [Int]) (b [Int])) (max a b)) 0 (append v [5])))": "[5 5 5]",
    "(tail (scan (λ ((a [Float]) (b [Int])) (+ (* 0.5 a) (int->float b))) 0.25 (append [5] v)))":
        "[3.140625 2.5625 4.5703125]",
    # a λ capturing a per-box value
    "(tail (scan (λ ((a [Int]) (b [Int])) (+ a (* b (head (append [7] v))))) 0 (append [5] v)))": "[56 35 77]",
    # a λ calling a λ that captured the ragged value itself, or a per-box value
    "(let ((g (λ ((a [Int])) (+ a (length v))))) (tail (scan (λ ((a [Int]) (b [Int])) (g (+ a b))) 0 (append [5] v))))":
        "[20 7 31]",
    "(let ((h (head (append [7] v)))) (let ((g (λ ((a [Int])) (+ a h)))) "
    "(tail (scan (λ ((a [Int]) (b [Int])) (g (+ a b))) 0 (append [5] v)))))": "[36 19 46]",
    # items that are vectors
    "(tail (scan (λ ((a [Int]) (b [Int 2])) (+ a (sum b))) 0 (outer * (append [5] v) [1 2])))": "[24 15 33]",
    "(tail (scan + [100 0] (outer * (append [5] v) [1 2])))": "[[108 16] [105 10] [111 22]]",
    # a ragged accumulator: fold and scan over a constant vector, a λ whose type mentions k
    "(sum (fold (λ ((x [Int]) (acc [Int (+ 1 k)])) (+ acc (* x acc))) (append [5] v) [1 2 3]))": "[192 120 264]",
    "(sum (scan (λ ((acc [Int (+ 1 k)]) (x [Int])) (+ acc x)) (append [5] v) [1 2 3]))":
        "[[12 20 32] [7 11 17] [16 26 41]]",
    # fold and reduce of the appended argument, prelude functions
    "(fold - 0 (append [5] v))": "[4 5 7]",
    "(reduce (λ ((a [Float]) (b [Float])) (- (* 2.0 a) b)) (append [5.0] (int->float v)))": "[36.0 10.0 69.0]",
    "(maximum (append [5] v))": "[5 5 5]",
    "(sum (iterate (λ ((x [Int (+ 1 k)])) (* 2 x)) 3 (append [5] v)))": "[64 40 88]",
    "(sum (while (λ ((x [Int (+ 1 k)])) (< (sum x) 100)) (λ ((x [Int (+ 1 k)])) (* 2 x)) (append [5] v)))":
        "[128 160 176]",
}

#: (engine, backend): the whole-frame engine dynamically and as plans on NumPy, compiled by JAX,
#: as a Dask graph; the reference engine on NumPy is what each is compared with
ENGINES = [("frames", "numpy"), ("plans", "jax"), ("plans", "dask"), ("reference", "jax")]


def _shown(source: str, engine: str, backend: str) -> str:
    session = Session(engine=engine, backend=backend)
    out = [show_result(f, v) for f, v in session.run_text(source, "<test>") if isinstance(f, TyExprForm)]
    return out[-1]


@pytest.mark.parametrize("body", sorted(PROGRAMS))
def test_a_function_over_ragged_boxes_gives_each_box_its_value_alone(body):
    """Plans and the reference engine (``eval_value`` checks they agree), with the expected value."""
    assert eval_value(BOXES.format(body)) == PROGRAMS[body]


@pytest.mark.parametrize("engine,backend", ENGINES)
@pytest.mark.parametrize("body", sorted(PROGRAMS))
def test_every_engine_and_backend_agrees_with_the_reference_engine(body, engine, backend):
    if backend != "numpy":
        pytest.importorskip(backend)
    source = BOXES.format(body)
    assert _shown(source, engine, backend) == _shown(source, "reference", "numpy") == PROGRAMS[body]


def test_a_prelude_function_defined_outside_the_body_is_applied_per_box():
    """A closure made outside the unbox (no batch axes) as the scanned function."""
    source = "(define (f (a [Int]) (b [Int])) (- a b))\n" + BOXES.format("(tail (scan f 100 (append [5] v)))")
    assert eval_value(source) == "[92 95 89]"
    assert _shown(source, "frames", "numpy") == "[92 95 89]"
