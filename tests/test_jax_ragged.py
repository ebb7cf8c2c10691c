"""Ragged boxes under ``jax.jit`` (issue 14, spec D48): ``filter`` over a frame, compiled.

While tracing, ``filter`` over a frame keeps each row in its lanes with a lane mask (a padded
layout, remora/dynamics/padded.py) and the ``unbox`` body runs over all lanes at once: the
evaluation is one compiled function, with the NumPy backend's values (Float within D48's
relative 1e-9, Int exact) and errors.  What the padded pass does not cover runs eagerly, as
before, with NumPy's values.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import remora  # noqa: E402
from remora import backends  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.programs import WORKLOADS  # noqa: E402

XP = backends.get("jax")
RAGGED = {w.name: w for w in WORKLOADS if w.name in ("segmented sums", "triangular mat-vec")}

KEEP = "(define (keep (m [Bool 6]) (row [Int 6])) (filter m row))\n"
KEEP_F = "(define (keep (m [Bool 6]) (row [Float 6])) (filter m row))\n"


def _compiled(source: str, **inputs):
    """The value on JAX, and whether it was compiled: no eager run (an evaluation that cannot be
    traced, or was found so before for its signature, or whose check failed, runs eagerly)."""
    eager = XP.eager_runs
    got = remora.evaluate(source, backend="jax", **inputs)
    return got, XP.eager_runs == eager


def _inputs(seed: int, rows: int = 5):
    r = np.random.default_rng(seed)
    mask = r.random((rows, 6)) < 0.5
    mask[0] = False  # (an empty box)
    mask[1] = True  # (a full one)
    return {"mask": mask, "data": r.integers(1, 9, (rows, 6)), "v": np.arange(10, 16)}


@pytest.mark.parametrize("name", sorted(RAGGED))
@pytest.mark.parametrize("size", ["quick", 7, 33])
def test_the_ragged_workloads_compile_whole_with_numpys_values(name, size):
    w = RAGGED[name]
    inputs = w.inputs(w.quick if size == "quick" else size)
    got, compiled = _compiled(w.source, **inputs)
    np.testing.assert_allclose(np.asarray(got), w.numpy(**inputs), rtol=1e-9, atol=1e-12)
    assert compiled, list(XP.fallbacks)[-1:]


PROGRAMS = [
    # the length of each box: the counts
    KEEP + "(unbox (n xs (keep mask data)) (length xs))",
    # Int sums (exact) and a sum with the length
    KEEP + "(unbox (n xs (keep mask data)) (+ (length xs) (sum xs)))",
    # iota/w of a box, then index into another array at those positions
    KEEP + "(unbox (n xs (keep mask data)) (sum (* xs (index v (iota/w xs)))))",
    # elementwise with a value per box (from the frame of rows) and one for all
    KEEP + "(define (f (m [Bool 6]) (row [Int 6]) (s [Int])) (unbox (n xs (filter m row)) (sum (* (+ s 1) xs))))\n"
    "(f mask data (sum data))",
    # an Int division that would fail only in lanes not taken (the rows hold 0 there)
    KEEP + "(unbox (n xs (keep mask (* data (bool->int mask)))) (sum (/ 840 xs)))",
    # an index that would be out of range only in lanes not taken
    KEEP + "(unbox (n xs (keep mask (* data (bool->int mask)))) (sum (index [0 1 2 3 4 5 6 7 8] xs)))",
    # inner products and reductions by an associative primitive
    KEEP + "(unbox (n xs (keep mask data)) (inner xs (iota/w xs)))",
    KEEP + "(unbox (n xs (keep mask data)) [(fold max 0 xs) (fold + 0 xs)])",
]


@pytest.mark.parametrize("source", PROGRAMS, ids=range(len(PROGRAMS)))
def test_ragged_programs_compile_with_numpys_values(source):
    inputs = _inputs(3)
    want = remora.evaluate(source, **inputs)
    got, compiled = _compiled(source, **inputs)
    assert np.asarray(got).tolist() == np.asarray(want).tolist()
    assert compiled, list(XP.fallbacks)[-1:]


def test_float_sums_of_boxes_are_numpys_within_tolerance():
    r = np.random.default_rng(5)
    inputs = {"mask": r.random((40, 6)) < 0.5, "data": r.standard_normal((40, 6))}
    source = KEEP_F + "(unbox (n xs (keep mask data)) (sum (* xs xs)))"
    want = remora.evaluate(source, **inputs)
    got, compiled = _compiled(source, **inputs)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-9, atol=0)
    assert compiled


def test_a_division_by_zero_in_a_lane_taken_is_numpys_located_error():
    source = KEEP + "(unbox (n xs (keep mask data)) (sum (/ 840 xs)))"
    inputs = _inputs(4)
    inputs["data"][1, 2] = 0  # (row 1 keeps every lane)
    with pytest.raises(remora.RemoraRuntimeError) as want:
        remora.evaluate(source, **inputs)
    with pytest.raises(remora.RemoraRuntimeError) as got:
        remora.evaluate(source, backend="jax", **inputs)
    assert (str(got.value), got.value.line, got.value.column) == (str(want.value), want.value.line, want.value.column)


@pytest.mark.parametrize("body", ["(sum (reverse xs))", "(fold - 0 xs)", "(length (append xs xs))"])
def test_what_the_padded_pass_does_not_cover_runs_eagerly_with_numpys_values(body):
    source = KEEP + f"(unbox (n xs (keep mask data)) {body})"
    inputs = _inputs(6)
    want = remora.evaluate(source, **inputs)
    got, compiled = _compiled(source, **inputs)
    assert np.asarray(got).tolist() == np.asarray(want).tolist()
    assert not compiled


def test_boxes_of_filter_returned_whole_run_eagerly():
    source = KEEP + "(keep mask data)"
    inputs = _inputs(7)
    want = remora.evaluate(source, **inputs)
    got = remora.evaluate(source, backend="jax", **inputs)
    assert [np.asarray(b.value).tolist() for b in np.asarray(got, dtype=object).reshape(-1)] == [
        np.asarray(b.value).tolist() for b in np.asarray(want, dtype=object).reshape(-1)
    ]


def test_numpy_keeps_filter_compact():
    from remora.dynamics.layouts import BoxFrame

    seen = []
    original = BoxFrame.__init__

    def spy(self, xp, shape, data, lengths, lanes=None):
        seen.append(lanes)
        original(self, xp, shape, data, lengths, lanes)

    BoxFrame.__init__ = spy
    try:
        remora.evaluate(KEEP + "(unbox (n xs (keep mask data)) (sum xs))", **_inputs(8))
    finally:
        BoxFrame.__init__ = original
    assert seen and all(lanes is None for lanes in seen)


def _jaxpr(monkeypatch, source: str, **inputs):
    """The jaxpr of the function ``source`` compiles to, and whether it ran compiled."""
    from remora.backends import jax_backend

    captured = []
    jit = jax_backend.jax.jit
    monkeypatch.setattr(jax_backend.jax, "jit", lambda f, *a, **k: captured.append(f) or jit(f, *a, **k))
    eager = XP.eager_runs
    remora.evaluate(source, backend="jax", **inputs)
    with jax_backend.x64():
        # (a compiled evaluation takes its inputs' arrays positionally, in the order of their names)
        return jax.make_jaxpr(captured[-1])(*[inputs[name] for name in sorted(inputs)]), XP.eager_runs == eager


def test_large_flags_of_known_broadcasts_are_computed_not_constants(monkeypatch):
    # ((<= (iota/w row) i) over a 1024×1024 frame: 1 MB of flags from two vectors; as a constant
    # it was seconds of compilation at 4000×4000, and memory read at every call)
    w = RAGGED["triangular mat-vec"]
    closed, compiled = _jaxpr(monkeypatch, w.source, **w.inputs(1024))
    assert compiled
    assert max((np.size(c) for c in closed.consts), default=0) < 1 << 20, [np.shape(c) for c in closed.consts]


@pytest.mark.parametrize("width", [7, 40_000])  # (ranks out of the cond in int16; in int32)
@pytest.mark.parametrize("prefix", [True, False])
def test_the_positions_of_a_boxs_items_are_numpys(prefix, width):
    # (iota/w of a padded box: its lanes taken numbered 0, 1, …; behind a cond that skips the
    # cumulative sum when every row's lanes taken are a prefix)
    r = np.random.default_rng(9)
    rows = 4
    if prefix:
        mask = np.arange(width)[None, :] < r.integers(0, width + 1, (rows, 1))
    else:
        mask = r.random((rows, width)) < 0.9
    source = (f"(define (keep (m [Bool {width}]) (row [Int {width}])) (filter m row))\n"
              "(unbox (n xs (keep mask data)) (sum (* xs (index v (iota/w xs)))))")
    inputs = {"mask": mask, "data": r.integers(-9, 9, (rows, width)), "v": r.integers(-9, 9, width)}
    want = remora.evaluate(source, **inputs)
    got, compiled = _compiled(source, **inputs)
    assert np.asarray(got).tolist() == np.asarray(want).tolist()
    assert compiled


def test_index_at_a_boxs_positions_into_a_long_enough_array_compiles_no_check(monkeypatch):
    # (the positions of a padded box are below its width: an array of that many items needs no check)
    source = KEEP + "(unbox (n xs (keep mask data)) (sum (* xs (index v (iota/w xs)))))"
    closed, compiled = _jaxpr(monkeypatch, source, **_inputs(10, rows=9))  # (a signature of its own)
    assert compiled
    assert len(closed.jaxpr.outvars) == 1  # (the value alone: no flag of checks)


def test_index_at_a_boxs_positions_into_a_shorter_array_is_checked():
    source = KEEP + "(unbox (n xs (keep mask data)) (sum (index [10 20 30] (iota/w xs))))"
    inputs = _inputs(11)
    inputs["mask"][2:] = np.arange(6) < 3  # (no box but the full one has more than 3 items)
    with pytest.raises(remora.RemoraRuntimeError) as want:
        remora.evaluate(source, **inputs)
    with pytest.raises(remora.RemoraRuntimeError) as got:
        remora.evaluate(source, backend="jax", **inputs)
    assert (str(got.value), got.value.line, got.value.column) == (str(want.value), want.value.line, want.value.column)
    inputs["mask"][1] = np.arange(6) < 2
    want = remora.evaluate(source, **inputs)
    got, compiled = _compiled(source, **inputs)
    assert np.asarray(got).tolist() == np.asarray(want).tolist()
    assert compiled


def _primitives(jaxpr) -> set:
    """The names of the primitives in ``jaxpr`` and every jaxpr it calls."""
    from jax.extend.core import ClosedJaxpr, Jaxpr

    names = set()
    for eqn in jaxpr.eqns:
        names.add(eqn.primitive.name)
        for param in eqn.params.values():
            for sub in param if isinstance(param, (list, tuple)) else [param]:
                if isinstance(sub, ClosedJaxpr):
                    names |= _primitives(sub.jaxpr)
                elif isinstance(sub, Jaxpr):
                    names |= _primitives(sub)
    return names


def test_a_body_numbering_its_items_runs_in_a_cond_on_whether_the_rows_lead(monkeypatch):
    # (flags not known while tracing: when every row's lanes taken lead it, the body reads its
    # positions as an iota — no cumulative sum, no buffer of ranks — and its sum of a product by
    # ``v`` at those positions is a matrix–vector product)
    r = np.random.default_rng(12)
    rows = 11  # (a signature of its own: traced here)
    inputs = {"mask": np.arange(6)[None, :] < r.integers(0, 7, (rows, 1)), "data": r.integers(-9, 9, (rows, 6)),
              "v": r.integers(-9, 9, 6)}
    source = KEEP + "(unbox (n xs (keep mask data)) (sum (* xs (index v (iota/w xs)))))"
    closed, compiled = _jaxpr(monkeypatch, source, **inputs)
    assert compiled
    conds = [e for e in closed.jaxpr.eqns if e.primitive.name == "cond"]
    bodies = [c for c in conds if any("cumsum" in _primitives(b.jaxpr) for b in c.params["branches"])]
    assert bodies, "the unbox body is not evaluated under a cond"
    lead = [b for b in bodies[-1].params["branches"] if "cumsum" not in _primitives(b.jaxpr)]
    assert lead and "dot_general" in _primitives(lead[0].jaxpr) and "gather" not in _primitives(lead[0].jaxpr)
    # (the other branch knows the rows do not all lead: it counts, with no cond of its own)
    counting = [b for b in bodies[-1].params["branches"] if "cumsum" in _primitives(b.jaxpr)]
    assert counting and "cond" not in _primitives(counting[0].jaxpr)


def test_the_triangular_product_compiles_to_what_is_written_by_hand(monkeypatch):
    # (issue 14: the flags, computed from known positions, are known while tracing — every row a
    # prefix, decided once, with no cond that would take the n² flags as an operand, written out
    # in full — and the body's sum of a product by x at its positions is a dot, as in
    # ``jnp.tril(mat) @ vec``; the one cond left, on x being finite, takes mat and x alone.
    # Asserted on JAX's jaxpr, never on a device's compiled text.)
    w = RAGGED["triangular mat-vec"]
    n = 1030  # (flags of over 2²⁰ atoms: computed by the compiled function, not a constant of it)
    closed, compiled = _jaxpr(monkeypatch, w.source, **w.inputs(n))
    primitives = _primitives(closed.jaxpr)
    assert compiled and "dot_general" in primitives and "gather" not in primitives
    assert not any(np.dtype(c.dtype) == np.bool_ and np.size(c) >= n * n for c in closed.consts)
    conds = [e for e in closed.jaxpr.eqns if e.primitive.name == "cond"]
    assert not any(v.aval.dtype == np.bool_ and v.aval.shape == (n, n) for e in conds for v in e.invars)


TRIANGLE = ("(define (rows (a [{t} {n} {n}])) ((λ ((row [{t} {n}]) (i [Int]))"
            " (filter ({op} (iota/w row) i) row)) a (positions a)))\n"
            "(define (times (rs [(Sigma ((k Dim)) [{t} k]) {n}]) (x [{t} {n}])) (unbox (k r rs) {body}))\n"
            "(times (rows mat) vec)")


@pytest.mark.parametrize("rep", ["Int", "Float"])
@pytest.mark.parametrize("op", ["<=", ">="])  # (the lower triangle's rows lead; the upper's do not)
@pytest.mark.parametrize("body", ["(sum (* r (index x (iota/w r))))", "(sum (* (index x (iota/w r)) (* r r)))",
                                  "(inner r (index x (iota/w r)))"])
def test_products_by_a_vector_at_a_boxs_positions_are_numpys(rep, op, body):
    r = np.random.default_rng(13)
    n = 9
    make = (lambda shape: r.integers(-9, 9, shape)) if rep == "Int" else r.standard_normal
    inputs = {"mat": make((n, n)), "vec": make(n)}
    source = TRIANGLE.format(t=rep, n=n, op=op, body=body)
    want = remora.evaluate(source, **inputs)
    got, compiled = _compiled(source, **inputs)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-9 if rep == "Float" else 0, atol=0)
    assert compiled


@pytest.mark.parametrize("body", ["(sum (* r (index x (iota/w r))))", "(inner (index x (iota/w r)) r)"])
def test_a_sum_of_a_product_by_a_vector_at_a_boxs_positions_is_a_dot(monkeypatch, body):
    source = TRIANGLE.format(t="Float", n=10, op="<=", body=body)
    r = np.random.default_rng(15)
    inputs = {"mat": r.standard_normal((10, 10)), "vec": r.standard_normal(10)}
    closed, compiled = _jaxpr(monkeypatch, source, **inputs)
    assert compiled and "dot_general" in _primitives(closed.jaxpr) and "gather" not in _primitives(closed.jaxpr)


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_a_vector_not_finite_where_lanes_are_not_taken_gives_numpys_value(bad):
    # (a lane not taken is a 0 in the dot's masked factor, and 0 × inf is NaN where NumPy sums the
    # lanes taken alone: such a vector is summed lane by lane, behind a cond)
    w = RAGGED["triangular mat-vec"]
    inputs = w.inputs(8)
    inputs["vec"] = np.asarray(inputs["vec"]).copy()
    inputs["vec"][-1] = bad  # (taken by the last row only)
    want = remora.evaluate(w.source, **inputs)
    got, compiled = _compiled(w.source, **inputs)
    assert compiled and np.isfinite(np.asarray(want)[:-1]).all()
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-9, atol=0)


@pytest.mark.parametrize("body", ["(sum (* r (index x (- 8 (iota/w r)))))",  # (not the positions themselves)
                                  "(sum (+ r (index x (iota/w r))))"])  # (not a product)
def test_what_is_not_a_product_by_a_vector_at_a_boxs_positions_is_no_dot(monkeypatch, body):
    source = TRIANGLE.format(t="Float", n=9, op="<=", body=body)
    r = np.random.default_rng(14)
    inputs = {"mat": r.standard_normal((9, 9)), "vec": r.standard_normal(9)}
    want = remora.evaluate(source, **inputs)
    closed, compiled = _jaxpr(monkeypatch, source, **inputs)
    assert compiled and "dot_general" not in _primitives(closed.jaxpr)
    got = remora.evaluate(source, backend="jax", **inputs)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-9, atol=0)
