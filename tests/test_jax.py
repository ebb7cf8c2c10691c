"""The JAX backend (issue 14, contract §8): the NumPy backend's values, errors and API, compiled.

- every example runs with ``remora eval --backend=jax`` and prints its ``.out`` file (Float atoms
  within a relative 1e-9: XLA may turn a division by a constant into a multiplication);
- every benchmark workload at its quick size gives the NumPy version's values;
- run-time errors — also inside compiled loops — are the NumPy backend's, message and location;
- the API takes NumPy or JAX arrays and returns JAX arrays; one compilation per input signature;
- loops under compilation are ``lax`` loops, never unrolled;
- what cannot be traced (data-dependent shapes, effects, boxed results) runs eagerly, correctly;
- Remora's 64-bit scope leaves the user's JAX configuration alone.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

import remora  # noqa: E402
from remora import backends  # noqa: E402
from remora.backends import jax_backend  # noqa: E402
from remora.interfaces.cli import main as cli_main  # noqa: E402
from conftest import counting  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
NAMES = [p.stem for p in sorted(EXAMPLES.glob("*.rem"))]
sys.path.insert(0, str(ROOT))
from bench.programs import COLLATZ, MANDELBROT, WORKLOADS  # noqa: E402

XP = backends.get("jax")
NUMBER = re.compile(r"-?(?:\d+\.\d*(?:e[-+]?\d+)?|\d+e[-+]?\d+|inf|nan)")


def _cli(argv: list[str], stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli_main(argv)
    finally:
        sys.stdin = saved
    return code, out.getvalue(), err.getvalue()


def same_text(got: str, want: str, rtol: float = 1e-9) -> bool:
    """Whether two printed outputs are the same but for Float atoms within ``rtol``."""
    got_floats, want_floats = NUMBER.findall(got), NUMBER.findall(want)
    if NUMBER.sub("F", got) != NUMBER.sub("F", want) or len(got_floats) != len(want_floats):
        return False
    a, b = np.array(got_floats, dtype=float), np.array(want_floats, dtype=float)
    return bool(np.allclose(a, b, rtol=rtol, atol=0, equal_nan=True))


def test_same_text_compares_floats_within_tolerance_only():
    assert same_text("[0.08700000000000001 1]", "[0.087 1]")
    assert not same_text("[0.0871 1]", "[0.087 1]")
    assert not same_text("[0.087 2]", "[0.087 1]")
    assert not same_text("[0.087]", "[0.087 0.0]")


@pytest.mark.parametrize("name", NAMES)
def test_every_example_runs_on_jax(name, monkeypatch):
    stdin_path = EXAMPLES / f"{name}.in"
    stdin = stdin_path.read_text(encoding="utf-8") if stdin_path.exists() else ""
    args_path = EXAMPLES / f"{name}.args"  # NAME=PATH data files, relative to the repository
    inputs = args_path.read_text(encoding="utf-8").split() if args_path.exists() else []
    monkeypatch.chdir(ROOT)
    code, out, err = _cli(["eval", "--backend=jax", str(EXAMPLES / f"{name}.rem"), *inputs], stdin)
    want = (EXAMPLES / f"{name}.out").read_text(encoding="utf-8")
    assert code == 0, err
    # (a program in single precision: XLA's reassociations and reciprocals change the last bits
    # of a float32, whose relative precision is 6e-8)
    rtol = 1e-6 if "Float32" in (EXAMPLES / f"{name}.rem").read_text(encoding="utf-8") else 1e-9
    assert same_text(out, want, rtol), f"{name} on jax:\n{out}\nexpected:\n{want}"


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: w.name)
def test_every_workload_agrees_with_numpy_on_jax(workload):
    inputs = workload.inputs(workload.quick)
    got = remora.evaluate(workload.source, backend="jax", **inputs)
    want = workload.numpy(**inputs)
    assert isinstance(got, jax.Array)
    got = np.asarray(got)
    assert got.shape == np.shape(want)
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=max(workload.rtol, 1e-9), atol=1e-9)
    else:
        np.testing.assert_array_equal(got, want)


#: the workloads whose shapes all follow from their inputs' (the others build ragged boxes)
RAGGED_WORKLOADS = {"segmented sums", "triangular mat-vec"}


@pytest.mark.parametrize("workload", [w for w in WORKLOADS if w.name not in RAGGED_WORKLOADS], ids=lambda w: w.name)
def test_workloads_without_ragged_values_are_compiled_whole(workload):
    before, eager = len(XP.fallbacks), XP.eager_runs
    remora.evaluate(workload.source, backend="jax", **workload.inputs(workload.quick))
    assert list(XP.fallbacks)[before:] == []
    assert XP.eager_runs == eager  # (nor a signature found untraceable before, nor a failed check)


# --- run-time errors: the NumPy backend's, located, also from inside compiled code ----------------

ERRORS = [
    ("(/ x 0)", {"x": np.arange(3)}),
    ("(mod x (- x x))", {"x": np.arange(1, 4)}),
    ("(index v 7)", {"v": np.arange(3)}),
    ("(floor (/ x 0.0))", {"x": np.zeros(2)}),
    ("(fold (λ ((a [Int]) (acc [Int])) (/ acc a)) 100 x)", {"x": np.array([1, 0, 2])}),
    ("(scan (λ ((acc [Int]) (a [Int])) (/ acc a)) 100 x)", {"x": np.array([1, 2, 0])}),
    ("(define (f (v [Int 3])) (/ 10 v))\n(f x)", {"x": np.array([[1, 2, 3], [4, 0, 6]])}),
]


def _error(source: str, backend: str, inputs: dict) -> remora.RemoraError:
    with pytest.raises(remora.RemoraRuntimeError) as info:
        remora.evaluate(source, backend=backend, **inputs)
    return info.value


@pytest.mark.parametrize("source,inputs", ERRORS, ids=[s for s, _ in ERRORS])
def test_run_time_errors_are_the_numpy_backends(source, inputs):
    want = _error(source, "numpy", inputs)
    got = _error(source, "jax", inputs)
    assert (str(got), got.line, got.column) == (str(want), want.line, want.column)


def test_a_failed_check_in_a_compiled_function_is_reported_on_every_call():
    f = remora.function("(λ ((v [Int 3])) (/ 12 v))", backend="jax")
    assert np.asarray(f(np.array([1, 2, 3]))).tolist() == [12, 6, 4]
    for _ in range(2):
        with pytest.raises(remora.RemoraRuntimeError, match="division by zero"):
            f(np.array([1, 0, 3]))
    assert np.asarray(f(np.array([4, 3, 2]))).tolist() == [3, 4, 6]


def test_cli_errors_on_jax_are_located_as_on_numpy(tmp_path):
    program = tmp_path / "p.rem"
    program.write_text("(define x [1 2 3])\n(+ x 1)\n(reduce + (/ x (- x 2)))\n", encoding="utf-8")
    want = _cli(["eval", str(program)])
    got = _cli(["eval", "--backend=jax", str(program)])
    assert want[0] == 1 and got == want


# --- the API ----------------------------------------------------------------------------------


def test_evaluate_takes_numpy_and_jax_arrays_and_returns_jax_arrays():
    with jax_backend.x64():
        x_jax = jnp.arange(4, dtype=jnp.int64)
    for x in (np.arange(4), x_jax):
        out = remora.evaluate("(* x x)", x=x, backend="jax")
        assert isinstance(out, jax.Array) and out.dtype == jnp.int64
        assert np.asarray(out).tolist() == [0, 1, 4, 9]
    out = remora.evaluate("(int->float x)", x=np.arange(2), backend="jax")
    assert out.dtype == jnp.float64


def test_boxes_come_back_holding_jax_arrays():
    out = remora.evaluate("(iota [2 3])", backend="jax")
    box = out[()]
    assert box.indices == ((2, 3),) and isinstance(box.value, jax.Array)
    assert np.asarray(box.value).tolist() == [[0, 1, 2], [3, 4, 5]]


def test_a_jax_array_of_32_bit_atoms_is_an_int32_input_and_the_result_keeps_its_dtype():
    x = jnp.arange(3, dtype=jnp.int32)  # (contract §10: what JAX makes by default)
    out = remora.evaluate("(+ x 1)", x=x, backend="jax")
    assert out.dtype == jnp.int32 and np.asarray(out).tolist() == [1, 2, 3]


def test_a_jax_array_of_another_dtype_is_refused_with_the_dtype():
    x = jnp.ones(3, dtype=jnp.float16)
    with pytest.raises(remora.RemoraTypeError, match="float16"):
        remora.evaluate("(+ x 1.0)", x=x, backend="jax")


def test_a_function_compiles_once_per_argument_signature():
    f = remora.function("(λ ((v [Float 3])) (sqrt (reduce + (* v v))))", backend="jax")
    start = XP.traces
    a = f(np.ones((5, 3)))
    assert XP.traces == start + 1 and isinstance(a, jax.Array)
    f(2 * np.ones((5, 3)))
    with jax_backend.x64():
        f(jnp.ones((5, 3), dtype=jnp.float64))
    assert XP.traces == start + 1  # same signature: the compiled function again
    b = f(np.ones((2, 4, 3)))
    assert XP.traces == start + 2 and b.shape == (2, 4)
    np.testing.assert_allclose(np.asarray(a), np.sqrt(3.0))


def test_evaluate_compiles_a_program_once_per_input_signature():
    source = "(define y (* x 2))\n(+ y 1)"
    start = XP.traces
    assert np.asarray(remora.evaluate(source, x=np.arange(3), backend="jax")).tolist() == [1, 3, 5]
    assert np.asarray(remora.evaluate(source, x=np.arange(3) + 1, backend="jax")).tolist() == [3, 5, 7]
    assert XP.traces == start + 1
    remora.evaluate(source, x=np.arange(4), backend="jax")
    assert XP.traces == start + 2


def test_a_compiled_call_checks_and_looks_up_its_signature_once(monkeypatch):
    from remora.interfaces import api

    f = remora.function("(λ ((u [Float 3]) (v [Float 3])) (dot u v))", backend="jax")
    with jax_backend.x64():
        a, b = jnp.ones((4, 3)), jnp.arange(12.0).reshape(4, 3)
    converted = counting(monkeypatch, api, "as_remora_array")  # (the checks of JAX arrays)
    looked_up = counting(monkeypatch, jax_backend.JaxBackend, "compiled")
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(remora.evaluate("(dot a b)", a=a, b=b, backend="jax")),
                                   [3.0, 12.0, 21.0, 30.0])
        np.testing.assert_allclose(np.asarray(f(a, b)), [3.0, 12.0, 21.0, 30.0])
        np.testing.assert_allclose(np.asarray(f(np.ones((4, 3)), np.ones((4, 3)))), [3.0] * 4)
    # each signature's inputs were checked, and its compiled function looked up, on its first call only
    assert (len(converted), len(looked_up)) == (2 + 2, 3)


def test_a_new_signature_is_still_checked_after_compiled_calls():
    f = remora.function("(λ ((v [Int 3])) (* v 2))", backend="jax")
    with jax_backend.x64():
        good = jnp.arange(3, dtype=jnp.int64)
    for _ in range(2):
        assert np.asarray(f(good)).tolist() == [0, 2, 4]
        assert np.asarray(remora.evaluate("(+ x 1)", x=good, backend="jax")).tolist() == [1, 2, 3]
    with pytest.raises(remora.RemoraTypeError, match="Int32.*int32->int"):
        f(jnp.arange(3, dtype=jnp.int32))
    with pytest.raises(remora.RemoraTypeError, match="float16"):
        remora.evaluate("(+ x 1)", x=jnp.arange(3, dtype=jnp.float16), backend="jax")
    with pytest.raises(remora.RemoraTypeError):
        f(np.arange(4))  # (a shape the function's type refuses)
    with pytest.raises(remora.RemoraTypeError, match="masked"):
        remora.evaluate("(+ x 1)", x=np.ma.masked_array(np.arange(3)), backend="jax")


def test_a_failed_check_of_a_compiled_evaluate_is_numpys_error_on_every_call():
    source = "(reduce + (/ 12 x))"
    assert int(remora.evaluate(source, x=np.array([1, 2, 3]), backend="jax")) == 22
    want = _error(source, "numpy", {"x": np.array([1, 0, 3])})
    for _ in range(2):
        got = _error(source, "jax", {"x": np.array([1, 0, 3])})
        assert (str(got), got.line, got.column) == (str(want), want.line, want.column)
    assert int(remora.evaluate(source, x=np.array([4, 3, 2]), backend="jax")) == 13


def test_a_compiled_loop_whose_step_checks_nothing_returns_no_flag():
    """A compiled function without checks returns no flag: its call never waits to read one."""

    def run(inputs):
        return XP.loop(4, lambda i, acc: acc * 0.5 + inputs["x"][i], np.float64(0.0))

    def checked(inputs):
        def step(i, acc):
            XP.require(inputs["x"][i] > 0, "not positive", (), None)
            return acc + inputs["x"][i]

        return XP.loop(4, step, np.float64(0.0))

    with jax_backend.x64():
        x = jnp.arange(1.0, 5.0)
        out = jax.jit(XP._traced(run, ("x",)))(x)
        assert isinstance(out, jax.Array) and float(out) == 0.125 + 0.5 + 1.5 + 4
        out, ok = jax.jit(XP._traced(checked, ("x",)))(x)
        assert bool(ok) and float(out) == 10.0


# --- loops compile to loops ----------------------------------------------------------------------


@pytest.mark.parametrize("source,want", [
    ("(fold (λ ((a [Int]) (acc [Int])) (- a acc)) 0 x)", lambda x: _right_fold(x)),
    ("(reduce (λ ((acc [Int]) (a [Int])) (+ (* 2 acc) a)) x)", lambda x: _left_reduce(x)),
    ("(scan (λ ((acc [Int]) (a [Int])) (- a acc)) 0 x)", lambda x: _left_scan(x)),
])
def test_loops_with_a_user_function_are_lax_loops_not_unrolled(monkeypatch, source, want):
    lowered = _lowered_programs(monkeypatch)
    x = np.random.default_rng(0).integers(-5, 5, 500)
    got = remora.evaluate(source, x=x, backend="jax")
    assert np.asarray(got).tolist() == np.asarray(want(x)).tolist()
    # one loop of the IR (its body once), lowered as one lax loop, whatever the length
    (program,) = lowered
    ops = program.ops()
    assert ops.count("loop") + ops.count("scan") == 1 and len(ops) < 20, ops


def _lowered_programs(monkeypatch) -> list:
    """The IR programs the JAX backend lowers from now on (appended as they are lowered)."""
    from remora.backends import jax_compiled

    programs: list = []
    lower = jax_compiled.lower
    monkeypatch.setattr(jax_compiled, "lower", lambda program, *a: programs.append(program) or lower(program, *a))
    return programs


def _right_fold(x):
    acc = 0
    for a in reversed(x.tolist()):
        acc = a - acc
    return acc


def _left_reduce(x):
    acc = int(x[0])
    for a in x[1:].tolist():
        acc = (2 * acc + a + 2**63) % 2**64 - 2**63
    return acc


def _left_scan(x):
    out, acc = [], 0
    for a in x.tolist():
        acc = a - acc
        out.append(acc)
    return out


# --- what cannot be traced runs eagerly -------------------------------------------------------------

UNTRACEABLE = [
    ("(unbox (k v (filter (> x 1) x)) (reduce + (append [0] v)))", {"x": np.arange(5)}, ""),
    ("(unbox (k v (iota/v n)) (reduce + (append [0] v)))", {"n": np.int64(6)}, ""),
    ("(unbox (k v (read-nums)) (reduce + (append [0] v)))", {}, "4 5 6\n"),
]


@pytest.mark.parametrize("source,inputs,stdin", UNTRACEABLE, ids=[s for s, _, _ in UNTRACEABLE])
def test_data_dependent_shapes_and_effects_run_eagerly_with_numpys_values(source, inputs, stdin):
    want = remora.evaluate(source, stdin=stdin, **inputs)
    got = remora.evaluate(source, stdin=stdin, backend="jax", **inputs)
    assert np.asarray(got).tolist() == np.asarray(want).tolist()
    start = XP.traces
    again = remora.evaluate(source, stdin=stdin, backend="jax", **inputs)  # decided once: no new trace
    assert XP.traces == start and np.asarray(again).tolist() == np.asarray(want).tolist()


def test_read_nums_reads_standard_input_once_on_jax(tmp_path):
    program = tmp_path / "r.rem"
    program.write_text("(unbox (k v (read-nums)) (reduce + (append [0] v)))\n", encoding="utf-8")
    assert _cli(["eval", "--backend=jax", str(program)], "1 2 3\n")[:2] == (0, "6\n")


# --- 64-bit in Remora's own scope ---------------------------------------------------------------


def test_remora_does_not_change_the_users_jax_configuration():
    before = jax.config.jax_enable_x64
    remora.evaluate("(+ x 1)", x=np.arange(3), backend="jax")
    remora.function("(λ ((v [Int])) (* v v))", backend="jax")(np.arange(3))
    assert jax.config.jax_enable_x64 == before
    if not before:
        assert jnp.asarray(1).dtype == jnp.int32


def test_int_arithmetic_is_64_bit_and_wraps():
    out = remora.evaluate("(* x x)", x=np.array([2**40, 3 * 2**31]), backend="jax")
    assert out.dtype == jnp.int64
    assert np.asarray(out).tolist() == (np.array([2**40, 3 * 2**31]) ** 2).tolist()


def test_a_numpy_array_still_belongs_to_the_numpy_backend_once_jax_is_loaded():
    # (the JAX backend holds NumPy arrays too, for what runs on the host: the default comes first)
    assert backends.of(np.arange(3)) is backends.get("numpy")
    with jax_backend.x64():
        assert backends.of(jnp.arange(3)) is XP


def test_a_lifted_dot_over_an_outer_frame_compiles_to_a_matrix_product(monkeypatch):
    # (a traced array has no strides: the backend remembers its broadcasts for compact)
    from remora.backends import jax_ops

    calls = []
    matmul = jax_ops.jnp.matmul
    monkeypatch.setattr(jax_ops.jnp, "matmul", lambda a, b: calls.append(a.shape) or matmul(a, b))
    r = np.random.default_rng(3)
    a, b = r.standard_normal((100, 120)), r.standard_normal((120, 110))  # (over the BLAS threshold)
    got = remora.evaluate("(matmul a b)", a=a, b=b, backend="jax")
    np.testing.assert_allclose(np.asarray(got), a @ b, rtol=1e-9, atol=1e-12)
    assert calls, "the traced matmul workload did not become one matrix product"


def test_the_bench_jax_mode_runs(capsys):
    from bench import workloads

    assert workloads.main(["--backend=jax", "--quick", "--only", "Mandelbrot"]) == 0
    out = capsys.readouterr().out
    assert "jax.jit" in out and "Mandelbrot" in out


def test_a_ragged_fold_traced_step_by_step_updates_its_accumulator_correctly(monkeypatch):
    # While compiling, unbox groups boxes by shape; forced through the ragged pass instead, the
    # fold's step updates the accumulator from itself (acc[:k] = (f acc[:k])): the scatter kernel
    # must not let XLA update it in place (it did, giving [4 3 3 4] for the first row).
    from remora.dynamics import ragged

    unbox = ragged.unbox

    def ragged_even_while_tracing(engine, *args):
        engine.xp.tracing = lambda: False  # (an instance attribute over the method, for this pass)
        try:
            return unbox(engine, *args)
        finally:
            del engine.xp.tracing

    monkeypatch.setattr(ragged, "unbox", ragged_even_while_tracing)
    source = "(iterate (λ ((x [Float 4])) (reverse x)) [3 1] rod)"
    rod = np.array([1.0, 2.0, 3.0, 4.0])
    got = remora.evaluate(source, backend="jax", rod=rod)
    assert np.asarray(got).tolist() == [[4.0, 3.0, 2.0, 1.0], [4.0, 3.0, 2.0, 1.0]]


# --- while and if over a frame, compiled: masked whole-frame forms (spec D48) ----------------------


def _compiled(source: str, **inputs):
    """The value on JAX, and whether it was compiled: one new trace, no eager run (no fallback,
    no re-run after a failed check)."""
    traces, eager = XP.traces, XP.eager_runs
    got = remora.evaluate(source, backend="jax", **inputs)
    return got, XP.traces == traces + 1 and XP.eager_runs == eager



MASKED = [
    # while over a frame: each cell stops on its own; a stopped cell's step would divide by zero
    (COLLATZ, {"ns": np.arange(1, 40)}),
    ("(define (f (x [Int])) (while (λ ((y [Int])) (> y 0)) (λ ((y [Int])) (- y (+ 1 (/ 10 y)))) x))\n(f xs)",
     {"xs": np.array([0, 2, -1, 5, 30])}),
    # while on one value whose condition depends on the input
    ("(while (λ ((y [Int])) (< y 1000)) (λ ((y [Int])) (* y 3)) x)", {"x": np.int64(2)}),
    # if over a frame: the untaken branch's checks (division by zero, index out of range) are masked
    ("(define (f (x [Int])) (if (> x 0) (/ 10 x) 0))\n(f xs)", {"xs": np.array([0, 2, -1, 5])}),
    ("(define (f (x [Int])) (if (< x 2) (index [1 2 3] 10) x))\n(f xs)", {"xs": np.array([3, 2, 4, 5])}),
    ("(define (f (x [Int]) (v [Int 3])) (if (< x 3) (index v (abs x)) -1))\n(f xs v)",
     {"xs": np.array([0, 7, 2, -2]), "v": np.array([10, 20, 30])}),
    # nested: an if inside a while's step, a while inside an if's branch
    ("(define (f (x [Int])) (while (λ ((y [Int])) (!= y 1)) (λ ((y [Int])) (if (= 0 (mod y 2)) (/ y 2) "
     "(+ 1 (* 3 y)))) x))\n(f xs)", {"xs": np.arange(1, 20)}),
    ("(define (f (x [Int])) (if (> x 0) (while (λ ((y [Int])) (> y 1)) (λ ((y [Int])) (/ y 2)) x) (/ 1 x)))"
     "\n(f xs)", {"xs": np.array([5, 64, 3, 1])}),
    # a while in a lane not taken never runs there (here it would not end)
    ("(define (f (x [Int])) (if (> x 0) (while (λ ((y [Int])) (!= y 0)) (λ ((y [Int])) (- y 1)) x) 0))\n(f xs)",
     {"xs": np.array([3, -5, 0, 7])}),
    # an if on one Bool that depends on the input
    ("(if (> (reduce + xs) 0) (/ 100 (reduce + xs)) 0)", {"xs": np.array([-3, 1, 1])}),
]


@pytest.mark.parametrize("source,inputs", MASKED, ids=range(len(MASKED)))
def test_while_and_if_over_a_frame_compile_with_numpys_values(source, inputs):
    want = remora.evaluate(source, **inputs)
    got, compiled = _compiled(source, **inputs)
    assert np.asarray(got).tolist() == np.asarray(want).tolist()
    assert compiled, list(XP.fallbacks)[-1:]


def test_while_compiles_to_one_lax_while_loop(monkeypatch):
    calls = []
    lax = jax_backend.lax

    class Spy:
        def __getattr__(self, name):
            return getattr(lax, name)

        def while_loop(self, *args, **kwargs):
            calls.append(1)
            return lax.while_loop(*args, **kwargs)

    monkeypatch.setattr(jax_backend, "lax", Spy())
    ns = np.arange(1, 300)
    got, compiled = _compiled(COLLATZ + " ", ns=ns)  # (a program of its own: traced here)
    assert compiled and calls == [1]
    assert np.asarray(got).tolist() == remora.evaluate(COLLATZ, ns=ns).tolist()


MASKED_ERRORS = [
    # a real error in a taken branch / a running cell is still the NumPy backend's, located
    ("(define (f (x [Int])) (if (>= x 0) (/ 10 x) 0))\n(f xs)", {"xs": np.array([1, 0, -1])}),
    ("(define (f (x [Int])) (if (< x 2) (index [1 2 3] 10) x))\n(f xs)", {"xs": np.array([3, 1, 4])}),
    ("(define (f (x [Int])) (while (λ ((y [Int])) (>= y 0)) (λ ((y [Int])) (- y (/ y y))) x))\n(f xs)",
     {"xs": np.array([-1, 3, -5])}),
    ("(while (λ ((y [Int])) (< y 100)) (λ ((y [Int])) (index [1 2 3] y)) x)", {"x": np.int64(0)}),
]


@pytest.mark.parametrize("source,inputs", MASKED_ERRORS, ids=range(len(MASKED_ERRORS)))
def test_real_errors_under_compiled_while_and_if_are_numpys(source, inputs):
    want = _error(source, "numpy", inputs)
    got = _error(source, "jax", inputs)
    assert (str(got), got.line, got.column) == (str(want), want.line, want.column)


def test_a_recursive_function_whose_if_depends_on_data_runs_eagerly():
    # (both branches of a masked if are traced: a recursion would be traced without end)
    source = "(define (fact (n [Int])) : [Int] (if (= n 0) 1 (* n (fact (- n 1)))))\n(fact xs)"
    xs = np.array([0, 3, 5])
    got = remora.evaluate(source, backend="jax", xs=xs)
    assert np.asarray(got).tolist() == [1, 6, 120]
    assert "recursive" in XP.fallbacks[-1]


# --- what XLA is given: no copies a hand-written jax.jit would not make ----------------------------


def _jaxpr(monkeypatch, source: str, **inputs):
    """The jaxpr of the function ``source`` compiles to (JAX's own view of what XLA is given)."""
    captured = []
    jit = jax_backend.jax.jit
    monkeypatch.setattr(jax_backend.jax, "jit", lambda f, *a, **k: captured.append(f) or jit(f, *a, **k))
    remora.evaluate(source, backend="jax", **inputs)
    with jax_backend.x64():
        return jax.make_jaxpr(captured[-1])(*_positional(inputs))


def _positional(inputs: dict) -> list:
    """The inputs as a compiled evaluation takes them: their arrays, in the order of their names."""
    return [inputs[name] for name in sorted(inputs)]


def _loops(jaxpr):
    return [e for e in jaxpr.eqns if e.primitive.name in ("scan", "while")]


def test_a_fold_over_curtail_reads_its_items_from_the_whole_array(monkeypatch):
    # (XLA copies a slice a compiled loop reads from: all but one row of Pathfinder's input)
    source = "(fold (λ ((row [Int 5]) (acc [Int 5])) (+ row (reverse acc))) (tail wall) (curtail wall))"
    wall = np.arange(40).reshape(8, 5)
    jaxpr = _jaxpr(monkeypatch, source, wall=wall)
    (loop,) = _loops(jaxpr.jaxpr)
    assert jaxpr.jaxpr.invars[0] in loop.invars  # the input itself, not a slice of it
    want = remora.evaluate(source, wall=wall)
    assert np.asarray(remora.evaluate(source, backend="jax", wall=wall)).tolist() == want.tolist()


def test_constants_in_a_compiled_loop_are_literals_not_operands(monkeypatch):
    # (XLA divides by an operand that holds 2; by the literal 2 it shifts)
    for source, inputs in [
        ("(fold (λ ((row [Int 5]) (acc [Int 5])) (+ row (/ acc 2))) (tail rows) (curtail rows))",
         {"rows": np.arange(40).reshape(8, 5)}),
        ("(define (f (n [Int])) (while (λ ((m [Int])) (> m 1)) (λ ((m [Int])) (/ m 2)) n))\n(f ns)",
         {"ns": np.arange(1, 50)}),
    ]:
        (loop,) = _loops(_jaxpr(monkeypatch, source, **inputs).jaxpr)
        consts = loop.params["num_consts"] - 1 if loop.primitive.name == "scan" else loop.params["body_nconsts"]
        assert consts == 0, loop.params  # (a scan's one constant: the items it reads)


def _loop_body(monkeypatch, source: str, **inputs) -> set:
    """The primitives of the body of the one loop ``source`` compiles to (JAX's jaxpr, with
    every jaxpr it calls: what the lowering gives XLA, the same on every device)."""
    from tests.test_jax_ragged import _primitives

    (loop,) = _loops(_jaxpr(monkeypatch, source, **inputs).jaxpr)
    body = loop.params.get("body_jaxpr") or loop.params["jaxpr"]
    return _primitives(body.jaxpr)


def test_a_while_over_cells_of_a_few_columns_carries_each_column_by_itself(monkeypatch):
    # (Collatz's [n steps] state: stacked whole, XLA interleaves the two columns and rebuilds
    # them — a concatenate and a transpose — at every step; a hand-written loop carries two arrays)
    ns = np.arange(1, 200)
    (loop,) = _loops(_jaxpr(monkeypatch, COLLATZ + "  ", ns=ns).jaxpr)
    assert all(v.aval.ndim <= 1 for v in loop.invars)
    body = _loop_body(monkeypatch, COLLATZ + "   ", ns=ns)
    assert "while" not in body and "select_n" in body and "concatenate" not in body, body


def test_an_iterate_over_cells_of_a_few_columns_carries_each_column_by_itself(monkeypatch):
    # (Mandelbrot's [x y count] accumulator: stacked whole, XLA rebuilds it — a concatenate, a
    # transpose and a copy — at every one of the 30 steps; a hand-written fori_loop carries three arrays)
    points = np.stack(np.meshgrid(np.linspace(-2.0, 0.6, 6), np.linspace(-1.2, 1.2, 5)), axis=-1)
    (loop,) = _loops(_jaxpr(monkeypatch, MANDELBROT, points=points).jaxpr)
    carried = loop.invars[loop.params["num_consts"]:]
    assert all(v.aval.ndim <= 2 for v in carried), [v.aval for v in carried]
    body = _loop_body(monkeypatch, MANDELBROT + " ", points=points)
    assert "select_n" in body and "concatenate" not in body and "transpose" not in body, body
    # (nor slices ``c``'s two columns again at every step: they are sliced once, before the loop)
    assert "slice" not in body and "gather" not in body, body
    got, compiled = _compiled(MANDELBROT + "  ", points=points)
    assert compiled and np.allclose(np.asarray(got), remora.evaluate(MANDELBROT, points=points), rtol=1e-12)


def test_what_a_trace_remembers_is_let_go_when_it_ends():
    got, compiled = _compiled(COLLATZ + "    ", ns=np.arange(1, 30))
    assert compiled and np.asarray(got).tolist() == remora.evaluate(COLLATZ, ns=np.arange(1, 30)).tolist()
    tracing = XP._tracing
    assert tracing.depth == 0 and not tracing.columns and not tracing.broadcasts and not tracing.slices


COLUMNS = """
(define (step (s [Int 3])) [(- (head s) 1) (+ (index s 1) (/ 12 (- (head s) k))) (+ 1 (tail s))])
(define (f (n [Int])) (while (λ ((s [Int 3])) (> (head s) 0)) step [n 0 0]))
(f ns)
"""


@pytest.mark.parametrize("k", [-1, 2, 40])
def test_a_while_carried_by_columns_has_numpys_values_and_errors(k):
    ns = np.array([0, 5, -2, 9, 1])
    source = COLUMNS.replace("k)", f"{k})")
    if k == 2:  # (the cells starting above 2 divide by zero on their way down)
        want = _error(source, "numpy", {"ns": ns})
        got = _error(source, "jax", {"ns": ns})
        assert (str(got), got.line, got.column) == (str(want), want.line, want.column)
        ns = np.array([0, 1, -7, 2 - 1])
    got, compiled = _compiled(source, ns=ns)
    assert compiled and np.asarray(got).tolist() == remora.evaluate(source, ns=ns).tolist()


def test_every_workload_has_a_hand_written_jax_version_with_numpys_values():
    from bench.jax_versions import VERSIONS

    assert set(VERSIONS) == {w.name for w in WORKLOADS}
    for name in ("Collatz (while)", "fold of a λ"):  # (the others: test_the_bench_jax_mode_runs's kind)
        w = next(w for w in WORKLOADS if w.name == name)
        inputs = w.inputs(w.quick)
        with jax_backend.x64():
            got = np.asarray(VERSIONS[name](**inputs))
        np.testing.assert_allclose(got, w.numpy(**inputs), rtol=1e-9)
