"""The backend seam (issue 12): array work goes through a backend object, run-time checks are
values handed to ``require``, the erased program holds no arrays, and the whole-frame engine's
shortcuts (ragged unbox, BLAS-free inner products) are only ever faster routes to the reference
engine's values — a bug inside one surfaces instead of being hidden."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import eval_error, eval_value, eval_values
from remora.backends.numpy_backend import NumpyBackend
from remora.dynamics.engine import Frames
from remora.dynamics.reference import Reference
from remora.errors import RemoraRuntimeError
from remora.interfaces.session import Session, load_prelude
from remora.primitives import PRIMITIVES


class DeferringBackend(NumpyBackend):
    """A NumPy backend whose checks are recorded instead of raised, as a tracing backend would
    carry them out later: a primitive that asked Python about its data would still raise."""

    def __init__(self):
        super().__init__()
        self.failed: list[str] = []

    def require(self, ok, message, culprits, fail):
        if not ok.all():
            position = np.unravel_index(int(np.argmin(ok)), ok.shape)
            self.failed.append(message.format(*(np.broadcast_to(c, ok.shape)[position].item() for c in culprits)))


def _run(engine, source: str):
    session = Session()
    session.engine = engine
    bindings, forms = load_prelude()
    for form in forms:
        engine.eval_form(form)
    return [value for _, value in session.run_text(source, "<test>")]


@pytest.mark.parametrize("make", [Frames, Reference])
@pytest.mark.parametrize(
    "source, message",
    [
        ("(/ [6 7] [3 0])", "Int division by zero"),
        ("(mod [6 7] [0 2])", "mod by zero"),
        ("(floor [1.5 (/ 0.0 0.0)])", "floor of nan has no Int value"),
        ("(round [1e300 2.5])", "round of 1e+300 has no Int value"),
    ],
)
def test_primitives_check_their_data_through_require(make, source, message):
    backend = DeferringBackend()
    _run(make(backend=backend), source)  # (no exception: the primitive asked only the backend)
    assert backend.failed == [message]


def test_the_numpy_backend_raises_at_once_with_the_first_failing_atom():
    err = eval_error("(index [[1 2 3] [4 5 6]] [1 7 -1])")
    assert err.message == "index 7 is out of range for 2 items"
    assert eval_error("(index [[1 2 3] [4 5 6]] [1 7 -1])", "reference").message == err.message


def test_engines_report_the_same_negative_length():
    # the whole-frame engine reported the smallest length (-2), the reference engine the first (-1)
    messages = {eval_error("(iota/v [3 -1 -2])", engine).message for engine in ("frames", "reference")}
    assert messages == {"iota/v of a negative length, -1"}


def test_float_matmul_engines_agree():
    # The whole-frame engine summed -2.2500074999999997 for the last entry and the reference engine
    # -2.2500075: NumPy's einsum sums a cell in an order that depends on its operands' strides
    # (here one is broadcast along the frame).  Each cell is now summed as a lone vector is.
    source = (
        "(matmul [[-7.0 0.5 -1.5 0.1 -0.0] [1e-05 0.5 2.25 1.0 -1.5]]"
        " [[-1.5 -1.5] [3.0 -1.5] [-7.0 1e-05] [-7.0 -1.5] [3.0 1e-05]])"
    )
    assert eval_value(source) == "[[21.8 9.599985] [-25.750014999999998 -2.2500075]]"
    assert eval_value("(dot [1e-05 0.5 2.25 1.0 -1.5] [-1.5 -1.5 1e-05 -1.5 1e-05])") == "-2.2500075"


def test_dot_of_every_pair_is_each_dot_alone():
    rows = "[[0.1 0.7 -1.3 1e-05 3.0] [2.25 -0.5 0.3 1.0 -1.5] [1e-05 -7.0 0.1 0.2 0.3]]"
    table = eval_value(f"((λ ((a [Float 5])) ((λ ((b [Float 5])) (dot a b)) {rows})) {rows})")
    singles = [[eval_value(f"(dot (index {rows} {i}) (index {rows} {j}))") for j in range(3)] for i in range(3)]
    assert table == "[" + " ".join("[" + " ".join(row) + "]" for row in singles) + "]"


# --- the ragged path declines explicitly; a real error inside it is an error ------------------

RAGGED_SUM = "(unbox (n xs (filter [[#t #f #t] [#t #t #t]] [[1 2 3] [4 5 6]])) (total xs))"


def test_a_ragged_sum_gives_each_box_its_own_sum():
    assert eval_value(RAGGED_SUM) == "[4 15]"


def test_a_bug_in_the_ragged_path_surfaces(monkeypatch):
    def broken(ctx, xs):
        raise TypeError("a bug in a segmented implementation")

    monkeypatch.setattr(PRIMITIVES["total"], "segmented", broken)
    with pytest.raises(TypeError, match="a bug in a segmented implementation"):
        Session().run_text(RAGGED_SUM, "<test>").__next__()


def test_what_the_ragged_path_does_not_cover_is_grouped():
    # a box built inside the body, a ragged value captured by a closure, an i-app at a ragged shape
    assert eval_value(
        "(unbox (n xs (filter [[#t #f #t] [#t #t #t]] [[1 2 3] [4 5 6]])) (unbox (m ys (box n xs (Sigma ((k Dim)) (Arr Int (Shp k))))) (total ys)))"
    ) == "[4 15]"
    assert eval_value(
        "(unbox (n xs (filter [[#t #f #t] [#t #t #t]] [[1 2 3] [4 5 6]])) ((λ ((y [Int])) (total xs)) 0))"
    ) == "[4 15]"
    assert eval_value(
        "(unbox (n xs (filter [[#t #f #t] [#t #t #t]] [[1 2 3] [4 5 6]])) (total ((i-app iota/s (Shp n)))))"
    ) == "[1 3]"


# --- what the erased program and the engines keep -------------------------------------------------


def _nodes(node):
    """Every erased node under ``node`` (record fields, tuples of them)."""
    from remora.records import field_names, is_record

    stack, seen = [node], []
    while stack:
        x = stack.pop()
        if is_record(x):
            seen.append(x)
            stack.extend(getattr(x, name) for name in field_names(x))
        elif isinstance(x, (tuple, list)):
            stack.extend(x)
    return seen


def test_the_erased_program_holds_no_arrays_and_no_dtypes():
    from remora.erasure.erase import erase_form

    session = Session()
    forms = [erase_form(f) for f in session.check_text("(define v [1.5 2.5]) (+ v (reduce + [1.0 2.0]))", "<test>")]
    for node in (n for f in forms for n in _nodes(f)):
        for value in vars(node).values():
            assert not isinstance(value, (np.ndarray, np.dtype, np.generic)), (node, value)
    reps = {n.rep for f in forms for n in _nodes(f) if hasattr(n, "rep") and isinstance(n.rep, str)}
    assert "Float" in reps and reps <= {"Int", "Float", "Bool", "object"}


def test_evaluation_writes_nothing_into_the_erased_program():
    from remora.erasure.erase import erase_form

    session = Session()
    forms = [erase_form(f) for f in session.check_text("((λ ((x [Int 3])) (+ x (length x))) [[1 2 3] [4 5 6]])", "<test>")]
    before = [dict(vars(n)) for f in forms for n in _nodes(f)]
    for form in forms:
        session.engine.eval_form(form)
    assert [dict(vars(n)) for f in forms for n in _nodes(f)] == before


def test_literal_constants_are_made_once_per_backend_and_cannot_be_written():
    session = Session()
    [value] = [v for _, v in session.run_text("[1 2 3]", "<test>")]
    with pytest.raises(ValueError):
        value[0] = 7
    assert eval_value("[1 2 3]") == "[1 2 3]"


def test_an_engine_runs_on_the_backend_it_is_given():
    class Counting(NumpyBackend):
        calls = 0

        def vecdot(self, a, b):
            Counting.calls += 1
            return super().vecdot(a, b)

    for make in (Frames, Reference):
        Counting.calls = 0
        [value] = _run(make(backend=Counting()), "(dot [1.0 2.0] [3.0 4.0])")
        assert value.tolist() == 11.0 and Counting.calls == 1


def test_printing_asks_the_backend_for_host_values():
    assert eval_values("[1.5 -0.0 (/ 1.0 0.0)] [#t #f] (array (0 2) Int) (box 2 [1 2] (Sigma ((k Dim)) [Int k]))") == [
        "[1.5 -0.0 inf]", "[#t #f]", "(array (0 2) Int)", "(box 2 [1 2])"]


def test_a_run_time_error_in_a_primitive_is_located():
    with pytest.raises(RemoraRuntimeError) as info:
        Session().run_text("(+ 1 (/ 1 0))", "<test>").__next__()
    assert info.value.message == "Int division by zero" and info.value.span is not None


def test_what_the_engines_remember_of_a_program_keeps_none_of_it_alive():
    # The annotation memo and the per-backend literal constants are keyed by erased node: they
    # must forget a program that is gone (a REPL or a long-lived Function makes new nodes forever).
    import gc
    import weakref

    from remora.erasure.erase import erase_form

    session = Session()
    forms = [erase_form(f) for f in session.check_text("((λ ((x [Int 3])) (+ x [1 2 3])) [[1 2 3] [4 5 6]])", "<test>")]
    for form in forms:
        session.engine.eval_form(form)
    alive = [weakref.ref(n) for f in forms for n in _nodes(f) if hasattr(n, "span")]
    del forms, form
    gc.collect()
    assert not [r for r in alive if r() is not None]


# --- choosing a backend (contract §8) ------------------------------------------------------------


def test_an_unknown_backend_is_refused_naming_the_known_ones():
    import remora

    for call in (lambda: remora.evaluate("1", backend="cuda"), lambda: remora.function("(λ ((x Int)) x)", backend="cuda")):
        with pytest.raises(ValueError, match=r"unknown backend 'cuda' \(known: .*numpy"):
            call()


def test_the_numpy_backend_by_name_is_the_default():
    import remora

    assert remora.evaluate("(+ x 1)", x=np.arange(3), backend="numpy").tolist() == [1, 2, 3]
    f = remora.function("(λ ((v [Int 3])) (sum v))", backend="numpy")
    assert f(np.ones((2, 3), dtype=np.int64)).tolist() == [3, 3]


def test_a_backend_whose_extra_is_missing_says_what_to_install(monkeypatch):
    import sys

    from remora import backends

    monkeypatch.setitem(backends.KNOWN, "fake", ("fake_backend", "BACKEND"))
    monkeypatch.setitem(sys.modules, "remora.backends.fake_backend", None)  # an import that fails
    with pytest.raises(backends.BackendUnavailable, match=r"pip install 'remora\[fake\]'"):
        backends.get("fake")


def test_the_command_line_refuses_an_unknown_backend_as_a_usage_error():
    import contextlib
    import io

    from remora.interfaces.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["eval", "--backend=cuda", "-e", "(+ 1 2)"])
    out, err = out.getvalue(), err.getvalue()
    assert code == 2 and out == "" and "unknown backend 'cuda'" in err and "Traceback" not in err


@pytest.mark.parametrize("xs, ms", [((5, 7), (5, 7)), ((5, 7, 3), (5, 7)), ((5, 7, 20), (5,)), ((6,), (6,)),
                                    ((0, 4), (0, 4)), ((4, 0), (4,)), ((3, 4, 0, 2), (3, 4)), ((), ())])
def test_select_items_is_boolean_indexing(xs, ms):
    """NumPy's ``select_items`` compresses the flattened frame (quicker than ``x[mask]``): the same
    cells in the same order, on dense, reversed (strided) and empty arrays alike."""
    rng = np.random.default_rng(0)
    x, mask = rng.standard_normal(xs), rng.random(ms) < 0.5
    xp = NumpyBackend()
    for xv, mv in ((x, mask), (x[::-1], mask[::-1]) if x.ndim else (x, mask)):
        got, want = xp.select_items(xv, mv), xv[mv]
        assert got.shape == want.shape and got.dtype == want.dtype and np.array_equal(got, want)


@pytest.mark.parametrize("chunk", [1, 3, 8])
@pytest.mark.parametrize("xs, ms", [((50, 7), (50, 7)), ((40, 3, 20), (40, 3)), ((9, 0), (9,)), ((300,), (300,))])
def test_a_large_selection_made_piece_by_piece_is_boolean_indexing(monkeypatch, chunk, xs, ms):
    """A large ``select_items`` compresses a piece of the frame at a time (its positions stay in
    the cache): the same cells in the same order, whatever the piece size and cell size."""
    from remora.backends import numpy_backend

    monkeypatch.setattr(numpy_backend, "SELECT_CHUNK", chunk)
    rng = np.random.default_rng(chunk)
    x, mask = rng.standard_normal(xs), rng.random(ms) < 0.4
    for xv, mv in ((x, mask), (x[::-1], mask[::-1]), (x, np.ones(ms, bool)), (x, np.zeros(ms, bool))):
        got, want = NumpyBackend().select_items(xv, mv), xv[mv]
        assert got.shape == want.shape and got.dtype == want.dtype and np.array_equal(got, want)


@pytest.mark.parametrize("shape", [(9000, 8), (300, 64), (70000,), (3, 5000, 16), (2000, 24)])
def test_counting_true_flags_along_the_last_axis_is_sum(shape):
    """NumPy's ``sum`` of Bool flags along the last axis (a frame's ``filter`` counts), counted
    eight flags a word when the axis allows it: the same Int counts as ``np.sum``, on dense
    arrays, on views of another layout, and along another axis."""
    rng = np.random.default_rng(len(shape))
    flags = rng.random(shape) < 0.3
    xp = NumpyBackend()
    for x in (flags, flags[..., ::-1], np.asfortranarray(flags), flags[1:]):
        got = xp.sum(x, axis=-1)
        assert got.dtype == np.int64 and np.array_equal(got, np.sum(x, axis=-1))
    assert np.array_equal(xp.sum(flags, axis=0), np.sum(flags, axis=0))
