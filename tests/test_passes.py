"""The IR's passes (remora/ir/passes/): each fires on programs written differently and declines
where its law does not hold — with the values, dtypes and checks unchanged.  Assertions are on
the IR a plan keeps (``plan.ir``), never on a backend's text."""

from __future__ import annotations

import re

import numpy as np
import pytest

import remora
from remora import backends
from remora.plans import PLANS
from remora.plans.codegen import Source, emit_steps
from remora.plans.loops import trace_loop
from remora.ir.passes import simplify
from remora.plans.trace import TracingBackend

NUMPY = backends.get("numpy")


def _plan_texts(key_text: str) -> list[str]:
    return [p.source for _, kept in list(PLANS._plans.values()) if kept for p in kept if key_text in p.source]


def _plan_irs() -> list:
    """The IR of every plan kept (most recent last)."""
    return [p.ir for _, kept in list(PLANS._plans.values()) if kept for p in kept if p.ir is not None]


def _calls(source: str) -> list[str]:
    """The array calls of a plan (its lines that assign a value made by the backend)."""
    return [line.strip() for line in source.splitlines() if re.match(r"\s*v\d+(, )?,? = ", line)
            and not re.match(r"\s*v\d+ = [GL]\[", line)]


def test_a_small_matrix_product_plan_is_a_few_calls():
    """The trace of a 64×64 `matmul` records 19 calls, most of them views that change nothing
    (identity permutations, reshapes to the same shape, a broadcast then compacted back)."""
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((64, 64)), rng.standard_normal((64, 64))
    PLANS.clear()
    got = remora.evaluate("(matmul a b)", a=a, b=b)  # (traced: the engine's own calls)
    again = remora.evaluate("(matmul a b)", a=a, b=b)  # (replayed: the simplified plan)
    assert np.array_equal(got, again) and got.dtype == again.dtype == np.float64
    assert np.allclose(got, a @ b)
    (source,) = _plan_texts("xp.matmul(")[-1:]
    calls = _calls(source)
    assert len(calls) <= 4, source
    assert "shape from data" not in source  # (the compact of a broadcast, and its guard, are gone)
    assert not any("permute_dims" in c for c in calls), source


def test_a_plan_without_its_compact_guard_is_right_on_a_broadcast_input():
    """The dropped `compact` guarded the strides of its input: on an input that is itself a
    broadcast view the replay must still give the dynamic engine's value."""
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((64, 64)), rng.standard_normal((64, 64))
    remora.evaluate("(matmul a b)", a=a, b=b)
    row = np.broadcast_to(rng.standard_normal(64), (64, 64))
    before = dict(PLANS.stats)
    assert np.allclose(remora.evaluate("(matmul a b)", a=row, b=b), row @ b)
    assert PLANS.stats["replayed"] == before["replayed"] + 1


def _traced(build):
    """(steps, result) of what ``build(tracer, x)`` records on a traced 2×3 Float input ``x``."""
    tracer = TracingBackend(NUMPY, trace_loop)
    x = tracer.input(np.arange(6.0).reshape(2, 3))
    result = build(tracer, x)
    return tracer, x, result


def test_identity_views_and_dead_calls_are_dropped():
    def build(xp, x):
        y = xp.permute_dims(x, [0, 1])
        y = xp.reshape(y, (2, 3))
        y = xp.broadcast_to(y, (2, 3))
        xp.add(x, x)  # (read by nothing)
        return xp.multiply(y, 2.0)

    tracer, x, result = _traced(build)
    assert len(tracer.rec.steps) == 5
    steps, out = simplify(tracer.rec.steps, result, NUMPY)
    assert [s.op for s in steps] == ["multiply"]
    assert steps[0].args[0] is x and out is result


def test_chains_of_unit_axis_views_fold_into_one_reshape():
    def build(xp, x):
        t = xp.permute_dims(x, [1, 0])  # (3, 2)
        t = xp.reshape(t, (1, 3, 2))
        t = xp.permute_dims(t, (0, 2, 1))  # (1, 2, 3): x with a unit axis
        return xp.reshape(t, (2, 1, 3))

    tracer, x, result = _traced(build)
    steps, out = simplify(tracer.rec.steps, result, NUMPY)
    assert [(s.op, s.args[0] is x, s.args[1]) for s in steps] == [("reshape", True, (2, 1, 3))]
    src = Source(NUMPY)
    scope = {x.name}
    emit_steps(steps, src, 0, scope)
    namespace = dict(src.ns, **{x.name: x.value})
    exec(src.text(), namespace)
    assert np.array_equal(namespace[out.name], result.value)


def test_a_permutation_of_long_axes_is_kept():
    def build(xp, x):
        return xp.add(xp.permute_dims(x, [1, 0]), 1.0)

    tracer, x, result = _traced(build)
    steps, _ = simplify(tracer.rec.steps, result, NUMPY)
    assert [s.op for s in steps] == ["permute_dims", "add"]


def test_chains_are_not_folded_where_the_plan_writes_in_place():
    """A folded chain may be a view of memory where the chain made a copy: with a write in the
    plan, only the views that give back their operand are dropped."""
    def build(xp, x):
        t = xp.reshape(xp.reshape(x, (6,)), (3, 2))
        buf = xp.empty((6,), "Float")
        return xp.scatter(buf, xp.arange(6), xp.reshape(t, (6,)))

    tracer, x, result = _traced(build)
    steps, _ = simplify(tracer.rec.steps, result, NUMPY)
    assert [s.op for s in steps].count("reshape") == 3


def test_a_call_repeated_on_the_same_operands_is_made_once():
    def build(xp, x):
        a = xp.multiply(x, x)
        b = xp.multiply(x, x)  # (the same)
        c = xp.multiply(x, -0.0)
        d = xp.multiply(x, 0.0)  # (not the same: the zeros' signs differ)
        return xp.add(xp.add(a, b), xp.add(c, d))

    tracer, x, result = _traced(build)
    steps, _ = simplify(tracer.rec.steps, result, NUMPY)
    assert sorted(s.op for s in steps) == ["add", "add", "add", "multiply", "multiply", "multiply"]
    assert any(s.op == "add" and s.args[0] is s.args[1] for s in steps)


def test_repeated_calls_are_kept_where_the_plan_writes_in_place():
    def build(xp, x):
        buf = xp.full((2, 3), 1.0, "Float")
        a = xp.multiply(buf, 2.0)
        buf[0, 0] = 5.0  # (the same operand, other atoms)
        return xp.add(a, xp.multiply(buf, 2.0))

    tracer, x, result = _traced(build)
    steps, _ = simplify(tracer.rec.steps, result, NUMPY)
    assert [s.op for s in steps].count("multiply") == 2
    assert result.value[0, 0] == 12.0


MANDEL = """
(define (step (z [Float 3]) (c [Float 2]))
  (let ((x (index z 0)) (y (index z 1)))
    [(+ (- (* x x) (* y y)) (index c 0)) (+ (* 2.0 (* x y)) (index c 1)) (+ (index z 2) 1.0)]))
(define (run (c [Float 2])) (iterate (λ ((z [Float 3])) (step z c)) 5 [0.0 0.0 0.0]))
(run points)
"""


def test_a_loop_whose_state_is_a_frame_of_parts_carries_the_parts():
    """A loop whose step builds its state as a frame literal and takes it apart again carries
    the parts, and stacks them once after the last step: the same atoms, without a stacked copy
    of the state per item."""
    from conftest import eval_value

    points = np.random.default_rng(5).uniform(-0.5, 0.5, (7, 9, 2))
    PLANS.clear()
    first = remora.evaluate(MANDEL, points=points)  # (traced: the engine's own steps)
    again = remora.evaluate(MANDEL, points=points)  # (replayed)
    assert np.array_equal(first, again) and again.shape == (7, 9, 3)
    (source,) = [s for s in _plan_texts("in range(5):")]
    loop = source[source.index("in range(5):"):]
    body = loop[:loop.index("xp.moveaxis(")]
    assert "stack" not in body and "moveaxis" not in body, source
    # the reference engine's value, cell by cell (each point alone)
    for i, j in ((0, 0), (6, 8), (3, 4)):
        c = points[i, j]
        want = eval_value(MANDEL.replace("(run points)", f"(run [{float(c[0])!r} {float(c[1])!r}])"))
        assert want == "[" + " ".join(repr(float(x)) for x in again[i, j]) + "]"


def test_a_temporary_nothing_reads_again_takes_the_next_result():
    """In a chain of elementwise calls, a call writes into a temporary only it reads (NumPy's
    ``out=``): the same atoms, a temporary fewer — never into an input, a value read twice, or
    the result."""
    rng = np.random.default_rng(6)
    x, y = rng.standard_normal((50, 40)), rng.standard_normal((50, 40))
    x0, y0 = x.copy(), y.copy()
    program = "(let ((t (* x 2.0))) (+ (* (+ t y) (- y 1.0)) (* t t)))"
    PLANS.clear()
    first = remora.evaluate(program, x=x, y=y)
    (source,) = _plan_texts("G['y#")[-1:] or [""]
    assert "out=" in source, source
    for _ in range(2):
        again = remora.evaluate(program, x=x, y=y)
        assert np.array_equal(again, first)
    t = x0 * 2.0
    assert np.array_equal(first, (t + y0) * (y0 - 1.0) + t * t)
    assert np.array_equal(x, x0) and np.array_equal(y, y0)


def test_a_loop_result_is_never_written_into():
    program = "(iterate (λ ((v [Float 4])) (+ (* v 0.5) 1.0)) 3 x)"
    x = np.arange(4.0)
    first = remora.evaluate(program, x=x)
    for _ in range(2):
        assert np.array_equal(remora.evaluate(program, x=x), first)
    want = x
    for _ in range(3):
        want = want * 0.5 + 1.0
    assert np.array_equal(first, want) and np.array_equal(x, np.arange(4.0))


def test_a_call_whose_shape_was_decided_on_stays_though_nothing_reads_it():
    """The trace chose what to record after looking at a shape that came from the data (here the
    number of true flags): the call and its shape guard must stay, or a replay on data with
    another count would reuse the choice silently."""
    def build(xp, x):
        (positions,) = xp.nonzero(xp.reshape(xp.elementwise("greater")(x, 2.0), (6,)))
        if len(positions) == 0:  # (a decision the engine takes in Python)
            return xp.multiply(x, 1.0)
        return xp.multiply(x, 2.0)

    tracer, x, result = _traced(build)
    steps, _ = simplify(tracer.rec.steps, result, NUMPY)
    assert "nonzero" in [s.op for s in steps]
    assert any(s.shape_guard for s in steps)


def _division_in_a_site(kind: str) -> str:
    body = {"if": "(if (> n 1) (/ n 0) n)",
            "while": "(while (λ ((s [Int])) (> s 1)) (λ ((s [Int])) (/ s 0)) n)"}[kind]
    return f"(λ ((v [Int 3])) (let ((r ((λ ((n [Int])) {body}) v))) 1))"


@pytest.mark.parametrize("kind", ["if", "while"])
def test_a_site_whose_value_is_unused_still_runs_its_checks(kind):
    """A `while`/`if` over a frame is one call of the plan: dropped as dead when its value is
    not used, a later call on data that divides by zero returned 1 instead of the error."""
    f = remora.function(_division_in_a_site(kind))
    assert f(np.array([1, 1, 1])) == 1 and f(np.array([0, 1, 0])) == 1  # (traced, then replayed)
    with pytest.raises(remora.RemoraRuntimeError, match="Int division by zero"):
        f(np.array([5, 0, 0]))


def test_a_plan_converts_an_atom_to_an_array_with_numpy_itself():
    """The engine's ``asarray(x, None)`` (an atom a reduction made, as a 0-d array) is NumPy's
    own ``asarray`` in a plan — not a backend method around it — and still makes the 0-d array."""
    f = remora.function("(Iλ ((n Dim)) (λ ((v (Arr Float (Shp n)))) (sqrt (sum (* v v)))))")
    x = np.array([3.0, 4.0, 12.0])
    assert f(x) == 13.0 and f(x) == 13.0
    (source,) = [p.source for p in (entry[2] for entry in f._calls.values()) if p is not None]
    assert "asarray" in source and "xp.asarray(v3, None)" not in source, source
    special = NUMPY.specialise("asarray", (np.float64(2.0), None))
    assert special is np.asarray
    made = special(np.float64(2.0), None)
    assert type(made) is np.ndarray and made.shape == () and made.dtype == np.float64


HISTOGRAM = "(reduce + (append [(* 0 bins)] (bool->int (outer = data bins))))"


def test_an_exact_reduce_of_an_append_reduces_the_parts():
    """A histogram's zero row appended to the counts (so that `reduce` has an item) made a copy
    of the whole count matrix; Int `+` in any grouping is the same, so the plan reduces each part
    and adds them — no `concat` is left, and the counts are NumPy's on every replay."""
    rng = np.random.default_rng(7)
    bins = np.arange(16)
    for n in (500, 500, 501):
        data = rng.integers(0, 16, n)
        got = remora.evaluate(HISTOGRAM, data=data, bins=bins)
        assert np.array_equal(got, (data[:, None] == bins).sum(axis=0)) and got.dtype == np.int64
    (ir,) = [ir for ir in _plan_irs() if "reduce" in ir.ops()][-1:]
    assert "concat" not in ir.ops(), ir.text()


@pytest.mark.parametrize("src, want", [
    ("(reduce max (append [(* 0 bins)] (* -1 (bool->int (outer = data bins)))))",
     lambda d, b: np.maximum(0, (-(d[:, None] == b).astype(np.int64)).max(axis=0))),
    ("(reduce and (append [(> bins -1)] (outer <= data bins)))",
     lambda d, b: (d[:, None] <= b).all(axis=0)),
    ("(reduce * (append [(+ 1 bins)] (+ 1 (outer - data bins))))",
     lambda d, b: (b + 1) * (1 + d[:, None] - b).prod(axis=0)),
])
def test_other_exact_reductions_of_an_append_are_the_parts(src, want):
    data, bins = np.array([3, 1, 2, 9, 4]), np.arange(6)
    PLANS.clear()
    for _ in range(3):  # (traced, then replayed)
        got = remora.evaluate(src, data=data, bins=bins)
        assert np.array_equal(got, want(data, bins)), got
    (ir,) = _plan_irs()
    assert "concat" not in ir.ops() and ir.ops().count("reduce") == 2, ir.text()


def test_a_float_sum_of_an_append_keeps_its_order():
    """Float `+` rounds by grouping (D22): its reduce of a concat is not split into parts."""
    rng = np.random.default_rng(8)
    xs = rng.standard_normal((300, 4))
    src = "(reduce + (append [(* 0.0 (index xs 0))] xs))"
    PLANS.clear()
    for _ in range(2):
        got = remora.evaluate(src, xs=xs)
        joined = np.concatenate([np.zeros((1, 4)), xs])  # (summed pairwise along each column: D22)
        assert np.array_equal(got, np.add.reduce(np.ascontiguousarray(joined.T), axis=-1))
    (ir,) = _plan_irs()
    assert "concat" in ir.ops(), ir.text()


# --- the passes' laws, each on programs written differently ---------------------------------

def _ir_of(program: str, **inputs):
    """The IR of the plan ``remora.evaluate`` makes for ``program`` (run twice: traced, replayed),
    and its value (checked against the reference engine's by the caller where it matters)."""
    PLANS.clear()
    first = remora.evaluate(program, **inputs)
    again = remora.evaluate(program, **inputs)
    assert np.array_equal(first, again)
    irs = _plan_irs()
    assert irs, "no plan was made"
    return irs[-1], first


RNG = np.random.default_rng(11)
A, B = RNG.standard_normal((70, 64)), RNG.standard_normal((70, 64))
M, V = RNG.standard_normal((80, 80)), RNG.standard_normal(80)


@pytest.mark.parametrize("program, want", [
    ("(sum (* a b))", lambda: np.einsum("ij,ij->i", A, B)),
    ("(sum (* b a))", lambda: np.einsum("ij,ij->i", A, B)),
    ("(sum (* (* 2.0 a) b))", lambda: 2.0 * np.einsum("ij,ij->i", A, B)),
    ("((λ ((x [Float 64]) (y [Float 64])) (reduce + (* x y))) a b)", lambda: np.einsum("ij,ij->i", A, B)),
    ("(reduce + (* a b))", lambda: (A * B).sum(axis=0)),
    ("(dot a b)", lambda: np.einsum("ij,ij->i", A, B)),
])
def test_a_sum_of_a_product_is_one_contraction(program, want):
    """However the sum of products is spelled, the product is never made: one `einsum`."""
    ir, got = _ir_of(program, a=A, b=B)
    assert np.allclose(got, want(), rtol=1e-12), ir.text()
    assert ir.ops().count("einsum") == 1 and "reduce" not in ir.ops(), ir.text()
    products = [e for e in ir.eqns() if e.op == "multiply"]  # (a scale, if any, of the sums only)
    assert all(e.outs.value.shape == (70,) for e in products), ir.text()


@pytest.mark.parametrize("program, want", [
    ("((λ ((row [Float 80])) (dot row v)) m)", lambda: M @ V),
    ("((λ ((row [Float 80])) (sum (* row v))) m)", lambda: M @ V),
    ("(reduce + (* v m))", lambda: V @ M),
    ("((λ ((col [Float 80])) (dot v col)) (transpose m))", lambda: V @ M),
    ("((λ ((row [Float 80])) ((λ ((col [Float 80])) (sum (* row col))) (transpose m))) m)", lambda: M @ M),
    ("((λ ((row [Float 80])) (reduce + (* row m))) m)", lambda: M @ M),
])
def test_matrix_products_written_any_way_are_one_contraction(program, want):
    ir, got = _ir_of(program, m=M, v=V)
    assert np.allclose(got, want(), rtol=1e-12), ir.text()
    assert "einsum" in ir.ops() or "matmul" in ir.ops(), ir.text()
    assert "multiply" not in ir.ops(), ir.text()


def test_an_int_contraction_is_exact_at_any_size():
    a, b = RNG.integers(-50, 50, (5, 7)), RNG.integers(-50, 50, (5, 7))
    ir, got = _ir_of("(sum (* a b))", a=a, b=b)
    assert np.array_equal(got, (a * b).sum(axis=1)) and got.dtype == np.int64
    assert "einsum" in ir.ops(), ir.text()


@pytest.mark.parametrize("program", [
    "(sum (* a b))",  # (a Float sum below D27's size: summed pairwise, as the reference engine does)
    "(let ((p (* a b))) (+ (sum p) (head (transpose p))))",  # (the product is read again: made anyway)
    "(sum (+ a b))",  # (no product)
])
def test_the_contraction_declines_where_its_law_does_not_hold(program):
    a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    ir, got = _ir_of(program, a=a, b=b)
    assert "einsum" not in ir.ops(), ir.text()
    from conftest import eval_values  # (the engines agree exactly on what was left alone)
    assert eval_values(f"(define a {_literal(a)}) (define b {_literal(b)}) {program}")


def _literal(x) -> str:
    if x.ndim == 0:
        return repr(float(x))
    return "[" + " ".join(_literal(y) for y in x) + "]"


@pytest.mark.parametrize("program", [
    "(reduce + [a b a])",
    "(reduce max [(* 2 a) b])",
    "(reduce + (append [(* 0 a)] [a b]))",
])
def test_an_exact_reduction_of_a_join_combines_the_parts(program):
    a, b = RNG.integers(-9, 9, (4, 5)), RNG.integers(-9, 9, (4, 5))
    ir, got = _ir_of(program, a=a, b=b)
    assert "stack" not in ir.ops() and "concat" not in ir.ops(), ir.text()
    parts = {"(reduce + [a b a])": a + b + a, "(reduce max [(* 2 a) b])": np.maximum(2 * a, b),
             "(reduce + (append [(* 0 a)] [a b]))": a + b}[program]
    assert np.array_equal(got, parts)


@pytest.mark.parametrize("program, want", [
    ("((λ ((c [Int])) (if (> c 3) (* c 10) (neg c))) x)", lambda x: np.where(x > 3, x * 10, -x)),
    ("((λ ((c [Int])) (if (= c 3) 1 (if (and (> c 1) (< c 6)) 2 0))) x)",
     lambda x: np.where(x == 3, 1, np.where((x > 1) & (x < 6), 2, 0))),
    ("(define (clamp (c [Int])) (if (< c 2) 2 (if (> c 5) 5 c))) (clamp x)", lambda x: np.clip(x, 2, 5)),
])
def test_an_if_whose_branches_cannot_fail_is_a_select(program, want):
    x = np.arange(8)
    ir, got = _ir_of(program, x=x)
    assert np.array_equal(got, want(x))
    assert "where" in ir.ops() and "if_cells" not in ir.ops(), ir.text()


@pytest.mark.parametrize("program", [
    "(define (safe-div (a [Int]) (b [Int])) (if (= b 0) 0 (/ a b))) (safe-div x (- x 3))",  # (may fail)
    "(define (f (n [Int])) : [Int] (if (< n 1) 0 (+ 1 (f (- n 1))))) (f x)",  # (recursion)
    "((λ ((c [Int])) (if (> c 3) (index [7 8 9] (- c 4)) c)) x)",  # (a check)
])
def test_an_if_that_may_fail_or_recurse_stays_lazy(program):
    x = np.arange(5)
    from conftest import eval_values
    assert eval_values(f"(define x [0 1 2 3 4]) {program}")
    PLANS.clear()
    remora.evaluate(program, x=x)
    remora.evaluate(program, x=x)
    for ir in _plan_irs():
        assert "where" not in ir.ops() or "if_cells" in ir.ops(), ir.text()


@pytest.mark.parametrize("program, want", [
    ("(reduce (λ ((u [Int]) (v [Int])) (+ u v)) x)", lambda x: x.sum()),
    ("(reduce (λ ((u [Int]) (v [Int])) (+ v u)) x)", lambda x: x.sum()),
    ("(define (mx (u [Int]) (v [Int])) (max u v)) (reduce mx x)", lambda x: x.max()),
    ("(scan (λ ((acc [Int]) (y [Int])) (* acc y)) 1 x)", lambda x: np.cumprod(x)),
    ("(fold (λ ((y [Int]) (acc [Int])) (+ y acc)) 0 x)", lambda x: x.sum()),
])
def test_a_lambda_that_is_an_associative_primitive_is_that_primitive(program, want):
    """η (remora/erasure/eta.py): no loop over the items is left."""
    x = np.arange(1, 9)
    ir, got = _ir_of(program, x=x)
    assert np.array_equal(got, want(x))
    assert "loop" not in ir.ops() and "scan" not in ir.ops(), ir.text()


@pytest.mark.parametrize("program", [
    "(reduce (λ ((u [Int]) (v [Int])) (- u v)) x)",  # (not associative)
    "(reduce (λ ((u [Int]) (v [Int])) (+ u (* 2 v))) x)",  # (not one primitive of the parameters)
    "(define (mn (u [Float]) (v [Float])) (min v u)) (reduce mn (int->float x))",  # (min swapped: −0.0)
])
def test_a_lambda_that_is_not_an_associative_primitive_keeps_its_loop(program):
    from conftest import eval_values
    x = np.arange(1, 9)
    assert eval_values(f"(define x [1 2 3 4 5 6 7 8]) {program}")
    ir, _ = _ir_of(program, x=x)
    assert "loop" in ir.ops(), ir.text()


def test_an_identity_row_appended_before_a_sum_of_products_is_no_copy():
    """n-body's `(reduce + (append [[0.0 0.0 0.0]] (* w d)))`: the zero row only gives `reduce` an
    item; the sum is the contraction of `w` and `d` — no product, no joined copy."""
    pos, mass = RNG.standard_normal((40, 3)), RNG.random(40) + 0.5
    program = """((λ ((p [Float 3]))
      (let ((d ((λ ((q [Float 3])) (- q p)) pos)) (w (/ mass (+ 1.0 (sum (* d d))))))
        (reduce + (append [[0.0 0.0 0.0]] (* w d))))) pos)"""
    ir, got = _ir_of(program, pos=pos, mass=mass)
    d = pos[None, :, :] - pos[:, None, :]
    w = mass[None, :] / (1.0 + (d * d).sum(axis=-1))
    assert np.allclose(got, (w[:, :, None] * d).sum(axis=1), rtol=1e-12)
    assert "concat" not in ir.ops() and ir.ops().count("einsum") == 2, ir.text()
