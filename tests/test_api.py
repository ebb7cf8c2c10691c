"""The Python API (contract §5): remora.check, remora.evaluate, remora.function, remora.register."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import numpy as np
import pytest

import remora
import remora.interfaces.api
import remora.interfaces.session
import remora.statics.typecheck
from remora.primitives.registry import PRIMITIVES
from conftest import subprocess_env

ROOT = Path(__file__).resolve().parents[1]

NORM = "(Iλ ((n Dim)) (λ ((v (Arr Float (Shp n)))) (sqrt (sum (* v v)))))"


@pytest.fixture(autouse=True)
def _forget_registered_primitives():
    """Primitives registered by a test are removed afterwards, so other test files (which may list
    every primitive, e.g. to compare with spec/) see the registry as remora ships it."""
    before = dict(PRIMITIVES)
    yield
    added = [name for name in PRIMITIVES if name not in before]
    for name in added:
        del PRIMITIVES[name]
    if added:
        remora.interfaces.api._checked.cache_clear()


def unique(prefix: str) -> str:
    """A primitive name no other test uses (the registry is process-wide)."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def assert_located(err: remora.RemoraError) -> None:
    """The error has a position, and its text is the CLI's report."""
    assert isinstance(err.line, int) and isinstance(err.column, int)
    assert err.line >= 1 and err.column >= 1
    assert f":{err.line}:{err.column}: error: {err.message}" in str(err)


# ---------------------------------------------------------------------------
# evaluate: inputs and results


def test_evaluate_numpy_input():
    r = remora.evaluate("(+ x 1)", x=np.arange(3))
    assert isinstance(r, np.ndarray)
    assert r.dtype == np.int64
    np.testing.assert_array_equal(r, np.array([1, 2, 3]))
    assert repr(r) == "array([1, 2, 3])"


def test_evaluate_float_and_bool_arrays():
    r = remora.evaluate("(* x 2.0)", x=np.array([[1.0, 2.5], [3.0, -1.0]]))
    assert r.dtype == np.float64 and r.shape == (2, 2)
    np.testing.assert_array_equal(r, [[2.0, 5.0], [6.0, -2.0]])
    b = remora.evaluate("(not x)", x=np.array([True, False]))
    assert b.dtype == np.bool_
    np.testing.assert_array_equal(b, [False, True])


@pytest.mark.parametrize(
    "source, value, expected, dtype",
    [
        ("(+ x 1)", 41, 42, np.int64),
        ("(* x 2.0)", 1.25, 2.5, np.float64),
        ("(not x)", True, False, np.bool_),
        ("(+ x 1)", np.int64(4), 5, np.int64),
        ("(not x)", np.bool_(False), True, np.bool_),
        ("(* x 1.0)", np.float64(0.5), 0.5, np.float64),
    ],
)
def test_evaluate_scalar_inputs_give_0d_arrays(source, value, expected, dtype):
    r = remora.evaluate(source, x=value)
    assert isinstance(r, np.ndarray)
    assert r.shape == () and r.ndim == 0
    assert r.dtype == dtype
    assert r[()] == expected


def test_python_bool_is_bool_not_int():
    assert remora.check("x", x=True).__str__() == "(Arr Bool (Shp))"
    assert str(remora.check("x", x=1)) == "(Arr Int (Shp))"
    assert str(remora.check("x", x=1.0)) == "(Arr Float (Shp))"


def test_evaluate_scalar_result_is_0d():
    r = remora.evaluate("(+ 1 2)")
    assert isinstance(r, np.ndarray) and r.shape == () and r.dtype == np.int64 and r[()] == 3
    r = remora.evaluate("(sum x)", x=np.arange(4.0))
    assert isinstance(r, np.ndarray) and r.shape == () and r.dtype == np.float64 and r[()] == 6.0


def test_evaluate_several_inputs_and_definitions():
    r = remora.evaluate("(define y (* x 2))\n(+ y z)", x=np.arange(3), z=np.array([10, 20, 30]))
    np.testing.assert_array_equal(r, [10, 22, 34])
    with pytest.raises(remora.RemoraTypeError):
        remora.evaluate("(+ x z)", x=np.arange(3), z=np.arange(2.0))


def test_evaluate_lifts_over_frames():
    x = np.arange(6).reshape(2, 3)
    r = remora.evaluate("(+ x y)", x=x, y=np.array([10, 20]))
    np.testing.assert_array_equal(r, x + np.array([[10], [20]]))


def test_evaluate_non_contiguous_inputs():
    x = np.arange(10)[::2]
    np.testing.assert_array_equal(remora.evaluate("(+ x 1)", x=x), x + 1)
    f = np.asfortranarray(np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(remora.evaluate("(head x)", x=f), [0, 1, 2])
    t = np.arange(6.0).reshape(2, 3).T
    np.testing.assert_array_equal(remora.evaluate("(sum x)", x=t), t.sum(axis=1))


def test_evaluate_empty_input():
    x = np.zeros((0, 3))
    r = remora.evaluate("(* x 2.0)", x=x)
    assert r.shape == (0, 3) and r.dtype == np.float64
    assert remora.evaluate("(length x)", x=x)[()] == 0


def test_evaluate_int_wraps_like_numpy():
    r = remora.evaluate("(+ x 1)", x=np.iinfo(np.int64).max)
    assert r[()] == np.iinfo(np.int64).min


def test_evaluate_stdin_for_read_nums():
    box = remora.evaluate("(read-nums)", stdin="4 5\n6\n")[()]
    assert box.indices == (3,)
    np.testing.assert_array_equal(box.value, [4, 5, 6])


# ---------------------------------------------------------------------------
# boxes


def test_box_result_has_indices_and_value():
    r = remora.evaluate("(iota/v 3)")
    assert isinstance(r, np.ndarray) and r.shape == () and r.dtype == object
    box = r[()]
    assert box.indices == (3,)
    assert isinstance(box.value, np.ndarray) and box.value.dtype == np.int64
    np.testing.assert_array_equal(box.value, [0, 1, 2])
    assert isinstance(box, remora.BoxValue)


def test_box_with_shape_index():
    box = remora.evaluate("(iota [2 2])")[()]
    assert box.indices == ((2, 2),)
    np.testing.assert_array_equal(box.value, [[0, 1], [2, 3]])


def test_array_of_boxes():
    r = remora.evaluate("(iota/v [1 2])")
    assert r.shape == (2,) and r.dtype == object
    assert [b.indices for b in r] == [(1,), (2,)]
    np.testing.assert_array_equal(r[1].value, [0, 1])


def test_filter_box_from_input():
    box = remora.evaluate("(filter (> x 1) x)", x=np.array([3, 0, 2, 1]))[()]
    assert box.indices == (2,)
    np.testing.assert_array_equal(box.value, [3, 2])


# ---------------------------------------------------------------------------
# errors


def test_shape_mismatch_is_a_located_type_error():
    with pytest.raises(remora.RemoraTypeError) as info:
        remora.evaluate("(+ x y)", x=np.arange(3), y=np.arange(2))
    err = info.value
    assert "(Shp 3)" in err.message and "(Shp 2)" in err.message
    assert err.line == 1
    assert_located(err)


def test_errors_are_remora_errors():
    for cls in (remora.RemoraSyntaxError, remora.RemoraTypeError, remora.RemoraRuntimeError):
        assert issubclass(cls, remora.RemoraError)
    assert issubclass(remora.RemoraError, Exception)


def test_type_error_on_second_line():
    with pytest.raises(remora.RemoraTypeError) as info:
        remora.evaluate("(define a 1)\n  (+ a 2.5)")
    err = info.value
    assert (err.line, err.column) == (2, 8)
    assert "int->float" in err.message or "2.0" in err.message
    assert_located(err)


@pytest.mark.parametrize(
    "value, what",
    [
        (np.arange(3, dtype=np.float16), "float16"),
        (np.arange(3, dtype=np.uint32), "uint32"),
        (np.array([1 + 2j]), "complex"),
        (np.array([1, 2], dtype=object), "object"),
        (np.array(["a", "b"]), "<U1"),
        (np.arange(3, dtype=np.uint8), "uint8"),
        (np.arange(3, dtype=np.int16), "int16"),
        (np.float16(1.5), "float16"),
        (np.arange(3).astype(">i8"), ">i8"),
        ([1, 2, 3], "list"),
        ((1, 2), "tuple"),
        ("abc", "str"),
        (1 + 2j, "complex"),
        (None, "NoneType"),
    ],
)
def test_unsupported_inputs_are_rejected_not_converted(value, what):
    with pytest.raises(remora.RemoraTypeError) as info:
        remora.evaluate("x", x=value)
    msg = info.value.message
    assert "`x`" in msg
    assert what in msg
    with pytest.raises(remora.RemoraTypeError):
        remora.function("(λ ((x [Int 3])) x)")(value)


def test_unsupported_dtype_message_suggests_a_fix():
    with pytest.raises(remora.RemoraTypeError) as info:
        remora.evaluate("(+ x 1)", x=np.arange(3, dtype=np.uint16))
    msg = info.value.message
    assert "int64" in msg and "float64" in msg and "bool" in msg and "int32" in msg and "float32" in msg
    assert "astype" in msg


def test_python_int_out_of_range():
    with pytest.raises(remora.RemoraTypeError) as info:
        remora.evaluate("x", x=2**63)
    assert "64-bit" in info.value.message
    assert remora.evaluate("x", x=-(2**63))[()] == -(2**63)


def test_syntax_error():
    with pytest.raises(remora.RemoraSyntaxError) as info:
        remora.evaluate("(define a 1)\n(+ a")
    err = info.value
    assert (err.line, err.column) == (2, 1)
    assert "unclosed" in err.message
    assert_located(err)
    with pytest.raises(remora.RemoraSyntaxError):
        remora.check("(λ (y) y)")


def test_runtime_error():
    with pytest.raises(remora.RemoraRuntimeError) as info:
        remora.evaluate("(define a 1)\n  (/ a 0)")
    err = info.value
    assert (err.line, err.column) == (2, 3)
    assert "division by zero" in err.message
    assert_located(err)


def test_runtime_error_from_input_values():
    with pytest.raises(remora.RemoraRuntimeError) as info:
        remora.evaluate("(/ 10 x)", x=np.array([1, 0, 2]))
    assert_located(info.value)


def test_unbound_variable():
    with pytest.raises(remora.RemoraTypeError) as info:
        remora.evaluate("(+ nope 1)")
    assert "nope" in info.value.message
    assert (info.value.line, info.value.column) == (1, 4)


# ---------------------------------------------------------------------------
# check


def test_check_returns_canonical_type():
    t = remora.check("[1 2 3]")
    assert str(t) == "(Arr Int (Shp 3))"
    assert str(remora.check("(+ [[1 2 3] [4 5 6]] [10 20])")) == "(Arr Int (Shp 2 3))"
    assert str(remora.check("(append [1 2] [3 4 5])")) == "(Arr Int (Shp 5))"


def test_check_type_of_last_form():
    assert str(remora.check("(define z [1.5])\n(head z)")) == "(Arr Float (Shp))"
    assert str(remora.check("(define z [1.5])")) == "(Arr Float (Shp 1))"


def test_check_with_inputs():
    assert str(remora.check("(+ x 1.0)", x=np.zeros((2, 3)))) == "(Arr Float (Shp 2 3))"


def test_check_polymorphic_types_print_canonically():
    t = remora.check("(Iλ ((n Dim) (m Dim)) (λ ((x [Int n 2 m])) (append x x)))")
    assert str(t) == "(Arr (Pi ((n Dim) (m Dim)) (Arr (-> ((Arr Int (Shp n 2 m))) (Arr Int (Shp (+ n n) 2 m))) (Shp))) (Shp))"
    assert str(remora.check("mean")) == (
        "(Arr (Pi ((n Dim)) (Arr (Forall ((t Floating)) (Arr (-> ((Arr t (Shp n))) (Arr t (Shp))) (Shp))) (Shp))) (Shp))"
    )


def test_check_does_not_evaluate():
    assert str(remora.check("(/ 1 0)")) == "(Arr Int (Shp))"


def test_check_errors():
    with pytest.raises(remora.RemoraTypeError) as info:
        remora.check("(+ 1 2.5)")
    assert_located(info.value)
    with pytest.raises(remora.RemoraError):
        remora.check("")


# ---------------------------------------------------------------------------
# function


@pytest.mark.parametrize("shape", [(3,), (4, 3), (2, 5, 3), (7,), (2, 1, 0)])
def test_function_lifts_over_leading_axes(shape):
    f = remora.function(NORM)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    r = f(x)
    assert isinstance(r, np.ndarray)
    assert r.dtype == np.float64
    assert r.shape == shape[:-1]
    assert r.ndim == len(shape) - 1
    assert np.allclose(r, np.sqrt((x * x).sum(axis=-1)))


def test_function_rank_0_result_is_0d_array():
    r = remora.function(NORM)(np.array([3.0, 4.0]))
    assert isinstance(r, np.ndarray) and r.shape == () and r[()] == 5.0


def test_function_type_is_exposed():
    f = remora.function(NORM)
    assert str(f.type) == "(Arr (Pi ((n Dim)) (Arr (-> ((Arr Float (Shp n))) (Arr Float (Shp))) (Shp))) (Shp))"


def test_monomorphic_function_rejects_wrong_trailing_size():
    f = remora.function("(λ ((v [Float 3])) (sqrt (sum (* v v))))")
    np.testing.assert_allclose(f(np.array([[3.0, 4.0, 0.0], [0.0, 0.0, 2.0]])), [5.0, 2.0])
    for bad in (np.zeros(4), np.zeros((3, 2)), np.zeros(())):
        with pytest.raises(remora.RemoraTypeError) as info:
            f(bad)
        assert "(Shp 3)" in info.value.message
        assert_located(info.value)


def test_function_rejects_wrong_atom_type_and_arity():
    f = remora.function("(λ ((v [Float 3])) (* v 2.0))")
    with pytest.raises(remora.RemoraTypeError) as info:
        f(np.arange(3))
    assert "Int" in info.value.message and "Float" in info.value.message
    with pytest.raises(remora.RemoraTypeError):
        f(np.zeros(3), np.zeros(3))
    with pytest.raises(remora.RemoraTypeError):
        f()


def test_function_two_arguments_prefix_frames():
    f = remora.function("(λ ((a [Float 2]) (b [Float])) (* a b))")
    a, b = np.ones((3, 2)), np.arange(3.0)
    np.testing.assert_array_equal(f(a, b), a * b[:, None])
    with pytest.raises(remora.RemoraTypeError) as info:
        f(a, np.arange(4.0))
    assert "(Shp 3)" in info.value.message and "(Shp 4)" in info.value.message


def test_function_python_scalars():
    f = remora.function("(λ ((x [Float])) (* x 2.0))")
    assert f(2.0)[()] == 4.0
    np.testing.assert_array_equal(f(np.array([1.0, 2.0])), [2.0, 4.0])


def test_function_runtime_error_then_recovers():
    d = remora.function("(λ ((a [Int])) (/ 10 a))")
    np.testing.assert_array_equal(d(np.array([1, 2, 5])), [10, 5, 2])
    with pytest.raises(remora.RemoraRuntimeError) as info:
        d(np.array([1, 0]))
    assert_located(info.value)
    np.testing.assert_array_equal(d(np.array([3, 4])), [3, 2])


def test_function_source_errors():
    with pytest.raises(remora.RemoraTypeError) as info:
        remora.function("(λ ((a [Float 2])) (* a 1))")
    assert (info.value.line, info.value.column) == (1, 25)
    with pytest.raises(remora.RemoraSyntaxError):
        remora.function("(λ ((a [Float 2])) (* a 1.0)")


def test_function_from_definitions():
    inc = remora.function("(define (inc (x [Int])) (+ x 1))")
    np.testing.assert_array_equal(inc(np.arange(3)), [1, 2, 3])
    g = remora.function("(define (sq (x [Float])) (* x x))\n(λ ((v [Float 2])) (sum (sq v)))")
    np.testing.assert_array_equal(g(np.ones((3, 2))), [2.0, 2.0, 2.0])


def test_function_prelude_matmul_lifted():
    mm = remora.function("(λ ((a [Float 2 3]) (b [Float 3 4])) (matmul a b))")
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    assert np.allclose(mm(a, b), a @ b)
    A, B = rng.standard_normal((5, 2, 3)), rng.standard_normal((5, 3, 4))
    r = mm(A, B)
    assert r.shape == (5, 2, 4)
    assert np.allclose(r, np.matmul(A, B))


# ---------------------------------------------------------------------------
# results are fresh


def test_function_identity_result_does_not_alias_input():
    f = remora.function("(λ ((x [Int 3])) x)")
    x = np.arange(3)
    r = f(x)
    assert r.flags.writeable
    assert not np.shares_memory(r, x)
    r[0] = 99
    np.testing.assert_array_equal(x, [0, 1, 2])
    x[1] = -5
    assert r[1] == 1


def test_function_head_result_does_not_alias_input():
    f = remora.function("(Iλ ((n Dim)) (λ ((x [Int (+ n 1) 2])) (head x)))")
    x = np.arange(6).reshape(3, 2)
    r = f(x)
    np.testing.assert_array_equal(r, [0, 1])
    assert r.flags.writeable
    assert not np.shares_memory(r, x)
    r[:] = -1
    np.testing.assert_array_equal(x, np.arange(6).reshape(3, 2))


def test_evaluate_result_does_not_alias_input():
    x = np.arange(3)
    r = remora.evaluate("x", x=x)
    assert r.flags.writeable and not np.shares_memory(r, x)
    r[0] = 7
    assert x[0] == 0
    m = np.arange(6).reshape(3, 2)
    h = remora.evaluate("(head x)", x=m)
    assert h.flags.writeable and not np.shares_memory(h, m)
    h[:] = -1
    np.testing.assert_array_equal(m, np.arange(6).reshape(3, 2))


def test_mutating_a_result_does_not_change_later_results():
    c = remora.function("(λ ((x [Int])) [1 2 3])")
    r = c(1)
    r[0] = 100
    np.testing.assert_array_equal(c(1), [1, 2, 3])
    e = remora.evaluate("[1 2 3]")
    e[0] = 100
    np.testing.assert_array_equal(remora.evaluate("[1 2 3]"), [1, 2, 3])
    s = remora.evaluate("(+ 1 2)")
    s[()] = 0
    assert remora.evaluate("(+ 1 2)")[()] == 3


def _boxes_share(result: np.ndarray, other: np.ndarray) -> bool:
    """Whether any box in ``result`` (at any depth) holds memory of ``other``."""
    for atom in np.asarray(result).reshape(-1):
        if isinstance(atom, remora.BoxValue):
            if np.shares_memory(atom.value, other) or _boxes_share(atom.value, other):
                return True
    return False


@pytest.mark.parametrize(
    "source",
    [
        "(define c (iota/v 3))\n(λ ((x [Int])) c)",  # a definition's box
        "(λ ((x [Int])) (box 3 [0 1 2] (Sigma ((n Dim)) [Int n])))",  # a literal's box
        "(define c (iota/v 3))\n(λ ((x [Int])) [c c])",  # one box twice in a frame
        "(define c (box 1 [(iota/v 3)] (Sigma ((n Dim)) (Arr (Sigma ((m Dim)) [Int m]) (Shp n)))))\n(λ ((x [Int])) c)",
    ],
)
def test_function_boxes_are_the_callers(source):
    f = remora.function(source)
    first = f(0)
    for atom in first.reshape(-1):
        inner = atom.value
        while inner.dtype == object:  # a box of boxes: change the innermost contents
            inner = inner.reshape(-1)[0].value
        assert inner.flags.writeable
        inner[0] = 999
    again = f(0)
    for atom in again.reshape(-1):
        inner = atom.value
        while inner.dtype == object:
            inner = inner.reshape(-1)[0].value
        assert inner.tolist() == [0, 1, 2]


def test_evaluate_boxes_do_not_alias_inputs():
    x = np.arange(6).reshape(2, 3)
    r = remora.evaluate("(ravel x)", x=x)
    box = r[()]
    assert box.value.flags.writeable and not np.shares_memory(box.value, x)
    box.value[0] = 999
    assert x[0, 0] == 0
    assert not _boxes_share(remora.evaluate("[(ravel x) (ravel x)]", x=x), x)
    assert not _boxes_share(remora.evaluate("(filter [#t #t] x)", x=x), x)
    f = remora.function("(λ ((v [Int 3])) (box 3 v (Sigma ((n Dim)) [Int n])))")
    assert not _boxes_share(f(x), x)


def test_evaluate_definition_boxes_are_fresh_each_time():
    source = "(define c (iota/v 3))\nc"
    remora.evaluate(source)[()].value[:] = -1
    assert remora.evaluate(source)[()].value.tolist() == [0, 1, 2]


# ---------------------------------------------------------------------------
# caching: no re-parsing or re-checking on repeated calls


class Counter:
    def __init__(self, monkeypatch, owner, name):
        self.calls = 0
        original = getattr(owner, name)

        def wrapper(*args, **kwargs):
            self.calls += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(owner, name, wrapper)


@pytest.fixture
def counters(monkeypatch):
    return {
        "read": Counter(monkeypatch, remora.interfaces.session, "read"),
        "parse_top": Counter(monkeypatch, remora.interfaces.session, "parse_top"),
        "check_form": Counter(monkeypatch, remora.statics.typecheck.Checker, "check_form"),
        "erase": Counter(monkeypatch, remora.interfaces.api, "erase"),
    }


def test_function_calls_do_not_reparse_or_recheck(counters):
    f = remora.function(f"; {uuid.uuid4().hex}\n{NORM}")
    assert counters["read"].calls >= 1 and counters["parse_top"].calls >= 1  # the hooks are the real ones
    x = np.arange(6.0).reshape(2, 3)
    first = f(x)
    assert counters["check_form"].calls >= 1  # a new signature is checked once...
    for c in counters.values():
        c.calls = 0
    for _ in range(50):
        np.testing.assert_array_equal(f(x), first)
        f(np.arange(6.0).reshape(2, 3) + 1.0)  # same signature, other values
    assert {k: c.calls for k, c in counters.items()} == {"read": 0, "parse_top": 0, "check_form": 0, "erase": 0}
    # a new signature is checked (once), but the source is not parsed again
    f(np.zeros((4, 5)))
    assert counters["read"].calls == 0 and counters["parse_top"].calls == 0
    assert counters["check_form"].calls == 1
    f(np.zeros((4, 5)))
    assert counters["check_form"].calls == 1


def test_function_keeps_a_bounded_number_of_signatures_most_recently_used(monkeypatch, counters):
    """A Function called on ever new shapes keeps at most ``Function.SIGNATURES`` checked
    applications (and their plans): the least recently used is let go, a recent one is kept."""
    monkeypatch.setattr(remora.interfaces.api.Function, "SIGNATURES", 4)
    f = remora.function("(λ ((x (Arr Int (Shp)))) (* x 2))")
    for n in range(1, 20):
        f(np.arange(n))
        f(np.arange(1))  # (used again after every new one: never the least recent)
        assert len(f._calls) <= 4
    counters["check_form"].calls = 0
    assert f(np.arange(1)).tolist() == [0]
    assert f(np.arange(19)).tolist() == list(range(0, 38, 2))
    assert counters["check_form"].calls == 0  # (both kept)
    assert f(np.arange(2)).tolist() == [0, 2]
    assert counters["check_form"].calls == 1  # (let go long ago: checked again)


def test_function_frame_axes_are_computed_once_per_signature(monkeypatch):
    """On a backend that runs the whole-frame engine (JAX here), each call needs each argument's
    frame axes: they follow from the signature, so they are computed when it is first seen."""
    pytest.importorskip("jax")
    calls = []
    real = remora.interfaces.api._frame_axes
    monkeypatch.setattr(remora.interfaces.api, "_frame_axes", lambda app, arrays: calls.append(1) or real(app, arrays))
    f = remora.function("(λ ((v (Arr Float (Shp 3)))) (sum v))", backend="jax")
    x = np.arange(6.0).reshape(2, 3)
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(f(x)), [3.0, 12.0])
    assert len(calls) == 1


def test_function_replay_of_a_seen_signature_converts_nothing(monkeypatch):
    """A call whose arguments are NumPy arrays of a signature met before, whose plan ran last
    time, goes straight to that plan: no argument conversion (``as_remora_array``), no backend
    ``from_numpy`` — decided once per signature — and still a result the caller owns."""
    from remora.backends.numpy_backend import NumpyBackend

    f = remora.function(NORM)
    x = np.array([3.0, 4.0, 12.0])
    assert f(x) == 13.0 and f(x) == 13.0  # (checked and planned, then replayed once)
    seen = Counter(monkeypatch, remora.interfaces.api, "as_remora_array")
    into = Counter(monkeypatch, NumpyBackend, "from_numpy")
    results = [f(np.array([float(i), 0.0, 0.0])) for i in range(5)]
    assert [float(r) for r in results] == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert (seen.calls, into.calls) == (0, 0)
    results[1][...] = 99.0  # (the caller's own array)
    assert float(f(np.array([0.0, 1.0, 0.0]))) == 1.0


def test_function_replay_fast_path_leaves_other_arguments_to_the_checks():
    """Arguments that only look like a seen signature (a byte-swapped float64, a NumPy scalar, a
    list) are converted or refused as on a first call, after that signature replayed."""
    f = remora.function("(λ ((v (Arr Float (Shp 3)))) (+ v 1.0))")
    assert f(np.array([1.0, 2.0, 3.0])).tolist() == [2.0, 3.0, 4.0]
    assert f(np.array([1.0, 2.0, 3.0])).tolist() == [2.0, 3.0, 4.0]
    with pytest.raises(remora.RemoraTypeError, match="dtype >f8"):
        f(np.array([1.0, 2.0, 3.0], dtype=">f8"))  # (refused, as on a first call)
    with pytest.raises(remora.RemoraTypeError, match="is a list"):
        f([5.0, 6.0, 7.0])
    g = remora.function("(λ ((x [Float])) (* x 2.0))")
    assert float(g(np.asarray(1.5))) == 3.0 and float(g(np.asarray(1.5))) == 3.0
    assert float(g(np.float64(2.5))) == 5.0 and float(g(2.5)) == 5.0
    with pytest.raises(remora.RemoraTypeError):
        f(np.array([1, 2, 3]))  # (an Int vector: a new signature, and a type error)


def test_evaluate_does_not_reparse_same_source(counters):
    source = f"; {uuid.uuid4().hex}\n(+ x 1)"
    remora.evaluate(source, x=np.arange(3))
    assert counters["read"].calls == 1
    for c in counters.values():
        c.calls = 0
    for i in range(20):
        np.testing.assert_array_equal(remora.evaluate(source, x=np.arange(3) + i), np.arange(3) + i + 1)
    assert counters["read"].calls == 0 and counters["parse_top"].calls == 0
    assert counters["check_form"].calls == 0


# ---------------------------------------------------------------------------
# register


def test_register_scalar_primitive_lifts():
    name = unique("softplus")
    remora.register(name, "(-> ((Arr Float (Shp))) (Arr Float (Shp)))", lambda a: np.log1p(np.exp(a)))
    assert str(remora.check(name)) == "(Arr (-> ((Arr Float (Shp))) (Arr Float (Shp))) (Shp))"
    x = np.array([[0.0, 1.0, -2.0], [2.0, 3.0, 10.0]])
    r = remora.evaluate(f"({name} x)", x=x)
    assert r.shape == (2, 3) and r.dtype == np.float64
    assert np.allclose(r, np.log1p(np.exp(x)))
    assert np.isclose(remora.evaluate(f"({name} 0.0)")[()], np.log(2.0))
    # usable inside functions and with other primitives
    f = remora.function(f"(λ ((v [Float 3])) (sum ({name} v)))")
    assert np.allclose(f(x), np.log1p(np.exp(x)).sum(axis=-1))
    with pytest.raises(remora.RemoraTypeError):
        remora.evaluate(f"({name} x)", x=np.arange(3))  # an Int argument is a type error


def test_register_vector_cell_primitive_lifts():
    name = unique("vsum")
    remora.register(
        name, "(-> ((Arr Float (Shp n))) (Arr Float (Shp)))", lambda a: a.sum(axis=-1), variables="n:Dim"
    )
    assert str(remora.check(name)) == "(Arr (Pi ((n Dim)) (Arr (-> ((Arr Float (Shp n))) (Arr Float (Shp))) (Shp))) (Shp))"
    assert remora.evaluate(f"({name} [1.0 2.0 4.5])")[()] == 7.5
    x = np.arange(24.0).reshape(2, 3, 4)
    r = remora.evaluate(f"({name} x)", x=x)
    assert r.shape == (2, 3)
    assert np.allclose(r, x.sum(axis=-1))
    g = remora.function(f"(λ ((m [Float 2 3])) ({name} m))")
    y = np.random.default_rng(2).standard_normal((4, 2, 3))
    assert np.allclose(g(y), y.sum(axis=-1))


def test_register_two_argument_primitive_with_prefix_frames():
    name = unique("hypot")
    remora.register(
        name, "(-> ((Arr Float (Shp)) (Arr Float (Shp))) (Arr Float (Shp)))", lambda a, b: np.hypot(a, b)
    )
    x, y = np.arange(6.0).reshape(3, 2), np.array([3.0, 4.0, 5.0])
    r = remora.evaluate(f"({name} x y)", x=x, y=y)
    assert np.allclose(r, np.hypot(x, y[:, None]))


def test_register_existing_primitive_raises():
    with pytest.raises(remora.RemoraError):
        remora.register("sqrt", "(-> ((Arr Float (Shp))) (Arr Float (Shp)))", np.exp)
    assert remora.evaluate("(sqrt 4.0)")[()] == 2.0  # the primitive is untouched
    name = unique("twice")
    remora.register(name, "(-> ((Arr Int (Shp))) (Arr Int (Shp)))", lambda a: a * 2)
    with pytest.raises(remora.RemoraError):
        remora.register(name, "(-> ((Arr Int (Shp))) (Arr Int (Shp)))", lambda a: a * 3)
    assert remora.evaluate(f"({name} 5)")[()] == 10


def test_register_ill_formed_signature_raises_and_registers_nothing():
    name = unique("bad")
    with pytest.raises(remora.RemoraTypeError):
        remora.register(name, "(-> (Int) Int)", np.negative)  # an Atom type where an Array is needed
    with pytest.raises(remora.RemoraTypeError):
        remora.register(name, "(-> ((Arr Float (Shp n))) (Arr Float (Shp)))", np.sum)  # n undeclared
    with pytest.raises(remora.RemoraSyntaxError):
        remora.register(name, "(-> ((Arr Float (Shp))) (Arr Float (Shp)", np.exp)
    remora.register(name, "(-> ((Arr Int (Shp))) (Arr Int (Shp)))", np.negative)  # the name is still free
    np.testing.assert_array_equal(remora.evaluate(f"({name} [1 2])"), [-1, -2])


def _run_python(code: str) -> subprocess.CompletedProcess:
    env = subprocess_env()
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env, cwd=ROOT, timeout=60
    )


def test_register_prelude_name_raises():
    # in a separate process: a successful registration would change the process-wide registry
    proc = _run_python(
        """
        import numpy as np, remora
        try:
            remora.register("sum", "(-> ((Arr Float (Shp))) (Arr Float (Shp)))", lambda a: a * 100)
        except remora.RemoraError:
            print("RAISED")
        else:
            print("NO ERROR", remora.evaluate("(sum [1.0 2.0])"))
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "RAISED"


@pytest.mark.parametrize(
    "impl", [lambda a: a.astype(np.int64), lambda a: a.sum()], ids=["wrong-dtype", "wrong-shape"]
)
def test_register_result_is_checked(impl):
    name = unique("liar")
    remora.register(name, "(-> ((Arr Float (Shp))) (Arr Float (Shp)))", impl)
    with pytest.raises(remora.RemoraError):
        r = remora.evaluate(f"({name} x)", x=np.arange(6.0).reshape(2, 3))
        # if it does not raise, at least the result must be what the type promises
        assert r.dtype == np.float64 and r.shape == (2, 3)


def test_prelude_functions_from_the_api():
    assert remora.evaluate("(mean x)", x=np.arange(4.0))[()] == 1.5
    np.testing.assert_array_equal(remora.evaluate("(sum x)", x=np.arange(6).reshape(2, 3)), [3, 12])
    assert remora.evaluate("(dot x x)", x=np.arange(3.0))[()] == 5.0
    a, b = np.eye(2), np.arange(4.0).reshape(2, 2)
    np.testing.assert_array_equal(remora.evaluate("(matmul a b)", a=a, b=b), a @ b)
    assert remora.evaluate("(maximum x)", x=np.array([3, 9, 2]))[()] == 9


# ---------------------------------------------------------------------------
# wrong Python arguments: a TypeError or ValueError that says what to pass


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: remora.evaluate(b"(+ 1 2)"), ["remora.evaluate", "str", "bytes", "decode"]),
        (lambda: remora.evaluate(None), ["remora.evaluate", "str", "NoneType"]),
        (lambda: remora.check(123), ["remora.check", "str", "int"]),
        (lambda: remora.check(b"1"), ["remora.check", "decode"]),
        (lambda: remora.function(["(λ ((x [Int])) x)"]), ["remora.function", "str", "list"]),
        (lambda: remora.evaluate("(read-nums)", stdin=b"1 2"), ["stdin", "str", "bytes"]),
    ],
)
def test_source_must_be_text(call, words):
    with pytest.raises(TypeError) as info:
        call()
    for word in words:
        assert word in str(info.value)


@pytest.mark.parametrize("variables", ["garbage", "n:Foo", "n Dim", "n:", ":Dim", "3:Dim", "define:Dim", "n:dim", "n:Numeric"])
def test_register_variables_must_be_name_sort_pairs(variables):
    name = unique("vars")
    with pytest.raises(ValueError) as info:
        remora.register(name, "(-> ((Arr Int (Shp))) (Arr Int (Shp)))", np.negative, variables=variables)
    message = str(info.value)
    assert "remora.register" in message and "name:Sort" in message and "Dim, Shape, Atom, Array" in message
    assert name not in PRIMITIVES


def test_register_variable_declared_twice():
    name = unique("twice")
    with pytest.raises(ValueError, match="declared twice"):
        remora.register(name, "(-> ((Arr Int (Shp n))) (Arr Int (Shp n)))", np.negative, variables="n:Dim n:Dim")
    assert name not in PRIMITIVES


@pytest.mark.parametrize(
    "name", ["my fn", "", "3", "-1.5", "(x)", "[a]", "define", "λ", "lambda", "let", "array", "#t", "a;b", " x",
             "Int", "Shp", "->", "Dim", "a'b"]
)
def test_register_refuses_names_no_program_can_call(name):
    with pytest.raises(ValueError) as info:
        remora.register(name, "(-> ((Arr Int (Shp))) (Arr Int (Shp)))", np.negative)
    assert "remora.register" in str(info.value) and "not a name" in str(info.value)
    assert name not in PRIMITIVES or PRIMITIVES[name].builtin


def test_register_accepts_unusual_but_callable_names():
    for name in (unique("neg?"), unique("a->b/c"), unique("x*")):
        remora.register(name, "(-> ((Arr Int (Shp))) (Arr Int (Shp)))", np.negative)
        assert remora.evaluate(f"({name} [1 2])").tolist() == [-1, -2]


def test_register_wrong_argument_types():
    with pytest.raises(TypeError, match="name must be a str"):
        remora.register(7, "(-> ((Arr Int (Shp))) (Arr Int (Shp)))", np.negative)
    with pytest.raises(TypeError, match="signature must be a str"):
        remora.register(unique("sig"), None, np.negative)
    with pytest.raises(TypeError, match="fn must be callable"):
        remora.register(unique("fn"), "(-> ((Arr Int (Shp))) (Arr Int (Shp)))", "np.negative")
    with pytest.raises(TypeError, match="variables must be a str"):
        remora.register(unique("v"), "(-> ((Arr Int (Shp))) (Arr Int (Shp)))", np.negative, variables=["n:Dim"])


def test_function_of_65_parameters():
    params = " ".join(f"(x{i} [Int])" for i in range(65))
    f = remora.function(f"(λ ({params}) (+ x0 x64))")
    assert f(*range(65))[()] == 64
    assert f(*([np.arange(3)] * 65)).tolist() == [0, 2, 4]
    for count in (64, 66):
        with pytest.raises(remora.RemoraTypeError) as info:
            f(*range(count))
        assert f"takes 65 arguments, but is given {count}" in info.value.message


def test_type_with_more_than_64_axes_is_a_type_error():
    ones = " ".join(["1"] * 65)
    with pytest.raises(remora.RemoraTypeError) as info:
        remora.check(f"(λ ((x [Int {ones}])) x)")
    assert "65 axes" in info.value.message and "64" in info.value.message
    assert (info.value.line, info.value.column) == (1, 8)
    assert_located(info.value)
    with pytest.raises(remora.RemoraTypeError, match="65 axes"):
        remora.check(f"(λ ((x (Arr Int (Shp {ones})))) x)")
    with pytest.raises(remora.RemoraTypeError, match="65 axes"):
        remora.check(f"(Iλ ((s Shape)) (λ ((x (Arr Float (++ s (Shp {ones}))))) x))")
    sixty_four = " ".join(["1"] * 64)
    assert str(remora.check(f"(λ ((x [Int {sixty_four}])) x)")).count(" 1") == 2 * 64


# ---------------------------------------------------------------------------
# registered functions: one calling convention on both engines


def _register_from_list(name: str) -> None:
    # written for stacks of cells: one list entry per cell
    remora.register(name, "(-> ((Arr Float (Shp n))) (Arr Float (Shp)))",
                    lambda a: [float(np.sum(row)) for row in a], variables="n:Dim")


@pytest.mark.parametrize("source, expected", [
    ("({f} [1.0 2.0])", "3.0"),
    ("({f} [[1.0 2.0] [3.0 4.0] [5.0 6.0]])", "[3.0 7.0 11.0]"),
    ("(reduce (λ ((a [Float]) (b [Float])) ({f} [a b])) [1.0 2.0 3.0])", "6.0"),
    ("({f} (array (2 0) Float))", "[0.0 0.0]"),
])
def test_registered_function_returning_a_list_agrees_on_both_engines(source, expected):
    from conftest import eval_value

    name = unique("rowsum")
    _register_from_list(name)
    assert eval_value(source.format(f=name)) == expected


def test_registered_function_gets_stacks_of_cells():
    seen = []
    name = unique("spy")

    def spy(a):
        seen.append(a.shape)
        return a * 2

    remora.register(name, "(-> ((Arr Int (Shp 2))) (Arr Int (Shp 2)))", spy)
    from conftest import eval_value

    assert eval_value(f"({name} [[[1 2] [3 4] [5 6]] [[1 2] [3 4] [5 6]]])") == "[[[2 4] [6 8] [10 12]] [[2 4] [6 8] [10 12]]]"
    assert set(seen) == {(6, 2), (1, 2)}  # the frames engine: all 6 cells at once; the reference: one at a time


def test_registered_function_empty_list_takes_the_declared_atom_type():
    name = unique("none")
    remora.register(name, "(-> ((Arr Int (Shp))) (Arr Int (Shp 0)))", lambda a: [[] for _ in a])
    from conftest import eval_value

    assert eval_value(f"({name} [1 2 3])") == "(array (3 0) Int)"


def test_registered_function_cannot_change_the_program():
    from conftest import eval_error

    name = unique("inplace")
    remora.register(name, "(-> ((Arr Int (Shp 3))) (Arr Int (Shp 3)))", lambda a: np.add(a, 1, out=a))
    for engine in ("frames", "reference"):
        for value in ("[1 2 3]", "(+ [1 2 3] 0)"):  # a literal constant, a computed definition
            err = eval_error(f"(define c {value})\n({name} c)\nc", engine)
            assert "read-only" in err.message and (err.line, err.column) == (2, 1)


def test_registered_function_returning_a_cell_not_a_stack():
    name = unique("scalar")
    remora.register(name, "(-> ((Arr Float (Shp n))) (Arr Float (Shp)))", lambda a: float(a.sum()), variables="n:Dim")
    with pytest.raises(remora.RemoraRuntimeError) as info:
        remora.evaluate(f"({name} [1.0 2.0])")
    assert "shape ()" in info.value.message and "(1,)" in info.value.message and "one result cell per row" in info.value.message
    assert_located(info.value)


# ---------------------------------------------------------------------------
# inputs: what they are, and errors that name them


@pytest.mark.parametrize("dtype, hint", [  # (the narrowest Remora dtype that holds every value)
    (np.float16, ".astype(numpy.float32)"), (">f4", ".astype(numpy.float32)"), (">f8", ".astype(numpy.float64)"),
    (np.uint8, ".astype(numpy.int32)"), (np.int16, ".astype(numpy.int32)"), (">i4", ".astype(numpy.int32)"),
    (np.uint32, ".astype(numpy.int64)"), (">i8", ".astype(numpy.int64)"), (np.uint64, ".astype(numpy.int64)"),
])
def test_dtype_hint_fits_the_dtype(dtype, hint):
    with pytest.raises(remora.RemoraTypeError) as info:
        remora.evaluate("x", x=np.arange(3).astype(dtype))
    assert hint in info.value.message
    assert info.value.message.count(".astype(") == 1


def test_complex_input_hint():
    with pytest.raises(remora.RemoraTypeError) as info:
        remora.evaluate("x", x=np.array([1 + 2j]))
    assert "complex" in info.value.message and ".real" in info.value.message


def test_masked_array_is_refused_not_unmasked():
    x = np.ma.masked_array([1, 2, 3], mask=[False, True, False])
    with pytest.raises(remora.RemoraTypeError) as info:
        remora.evaluate("(+ x 1)", x=x)
    assert "`x`" in info.value.message and "mask" in info.value.message and ".filled(" in info.value.message
    with pytest.raises(remora.RemoraTypeError, match="mask"):
        remora.function("(λ ((v [Int 3])) v)")(x)
    with pytest.raises(remora.RemoraTypeError, match="mask"):
        remora.check("x", x=x)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_other_ndarray_subclasses_are_refused():
    with pytest.raises(remora.RemoraTypeError) as info:
        remora.evaluate("x", x=np.matrix([[1, 2]]))
    assert "numpy.matrix" in info.value.message and "numpy.asarray" in info.value.message


def test_memory_mapped_input_is_an_ordinary_array(tmp_path):
    m = np.lib.format.open_memmap(tmp_path / "x.npy", mode="w+", dtype=np.float64, shape=(2, 3))
    m[:] = np.arange(6.0).reshape(2, 3)
    assert remora.evaluate("(sum x)", x=m).tolist() == [3.0, 12.0]


def test_input_errors_name_the_input():
    with pytest.raises(remora.RemoraTypeError) as info:
        remora.evaluate("(+ x 1)", x=np.zeros(2, np.float16))
    err = info.value
    assert err.file == "input x" and (err.line, err.column) == (0, 0)
    assert str(err).startswith("input x: error: input `x` has dtype float16")  # (issue 27: not `:0:0`)
    assert "<unknown>" not in str(err)
    with pytest.raises(remora.RemoraTypeError) as info:
        remora.evaluate("y", y=2**70)
    assert str(info.value).startswith("input y: error:")
    f = remora.function("(λ ((a [Int]) (b [Int])) (+ a b))")
    with pytest.raises(remora.RemoraTypeError) as info:
        f(1, [2])
    assert str(info.value).startswith("argument 2: error: argument 2 is a list")


def test_empty_function_source_is_located():
    with pytest.raises(remora.RemoraTypeError) as info:
        remora.function("; nothing here")
    assert "<unknown>" not in str(info.value) and info.value.file == "<function>"


def test_register_name_taken_names_the_call():
    with pytest.raises(remora.RemoraTypeError) as info:
        remora.register("sqrt", "(-> ((Arr Float (Shp))) (Arr Float (Shp)))", np.exp)
    assert str(info.value).startswith("register: error: a primitive named `sqrt` already exists")


# ---------------------------------------------------------------------------
# types and function values at the boundary


@pytest.mark.parametrize("source", ["[1 2 3]", "mean", "(λ ((x [Float 2 3])) x)", "(iota/v 3)"])
def test_type_repr_is_the_canonical_text(source):
    t = remora.check(source)
    assert repr(t) == str(t)
    assert repr(t).startswith("(Arr ")
    assert repr([t]) == f"[{t}]"


@pytest.mark.parametrize("source, what", [
    ("(λ ((x [Int])) (+ x 1))", "a function"),
    ("+", "a function"),
    ("[+ -]", "an array of functions"),
    ("(define (f (x [Int])) x)", "a function"),
    ("(Iλ ((n Dim)) (λ ((v [Float n])) v))", "a function"),
])
def test_function_valued_program_is_refused_clearly(source, what):
    with pytest.raises(remora.RemoraTypeError) as info:
        remora.evaluate(source)
    err = info.value
    assert f"the value of this program is {what}" in err.message
    assert "remora.function" in err.message
    assert_located(err)
    remora.check(source)  # its type is still there to see


def test_function_boxes_of_functions_are_refused():
    src = "(box 1 [+] (Sigma ((n Dim)) (Arr (-> ((Arr Int (Shp)) (Arr Int (Shp))) (Arr Int (Shp))) (Shp n))))"
    with pytest.raises(remora.RemoraTypeError) as info:
        remora.evaluate(src)
    assert "functions inside its boxes" in info.value.message
    assert_located(info.value)


def test_function_returning_a_function_is_refused_clearly():
    f = remora.function("(λ ((x [Int])) (λ ((y [Int])) (+ x y)))")
    with pytest.raises(remora.RemoraTypeError) as info:
        f(1)
    assert "the result of this function is a function" in info.value.message
    assert_located(info.value)
    g = remora.function("(λ ((x [Int])) ((λ ((y [Int])) (+ x y)) 2))")  # functions inside are fine
    assert g(1)[()] == 3
