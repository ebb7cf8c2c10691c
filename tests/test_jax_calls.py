"""A compiled call on the JAX backend (spec D48, "A compiled call"): a later call of
``remora.evaluate`` or of a ``remora.function`` with JAX arrays of a signature met before is the
compiled executable's own call — the same function a hand-written ``jax.jit`` compiles, taking
the arrays positionally, no 64-bit scope entered, nothing of the first call's path run again —
and stays correct: checks located, threads apart, an input the executable refuses taken by the
jitted function."""

from __future__ import annotations

import subprocess
import sys
import threading
import textwrap

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

import remora  # noqa: E402
from remora.backends import jax_backend  # noqa: E402

from conftest import counting, subprocess_env  # noqa: E402


def _device(x: np.ndarray):
    with jax_backend.x64():
        return jax.device_put(x)


@pytest.mark.parametrize("source", ["(dot a b)", "(sum (* b a))", "((λ ((u [Float 32]) (v [Float 32])) (sum (* u v))) a b)",
                                    "((λ ((u [Float 32]) (v [Float 32])) (reduce + (* v u))) a b)"])
def test_a_lifted_dot_lowers_to_one_contraction_taking_the_arrays_positionally(monkeypatch, source):
    # (however it is written: the program is one contraction of its two inputs, nothing else, and
    # the compiled function takes the arrays positionally and returns the value alone — a dict
    # of inputs costs JAX's dispatch a sort of its keys per call; a flag nobody reads, an output)
    from remora.backends import jax_compiled

    programs: list = []
    lower = jax_compiled.lower
    monkeypatch.setattr(jax_compiled, "lower", lambda program, *a: programs.append(program) or lower(program, *a))
    a, b = _device(np.ones((20, 32))), _device(np.arange(640.0).reshape(20, 32))  # (≥ BLAS_WORK: D27)
    got = remora.evaluate(source, a=a, b=b, backend="jax")
    np.testing.assert_allclose(np.asarray(got), np.arange(640.0).reshape(20, 32).sum(axis=1), rtol=1e-12)
    (program,) = programs
    assert [op for op in program.ops() if op not in ("reshape", "broadcast_to")] == ["einsum"], program.text()
    (entry,) = [e for table in jax_backend.BACKEND._compiled._entries.values() for e in table[1].values()
                if e.variants and e.variants[0].lowered.program is program]
    assert entry.names == ("a", "b") and not entry.variants[0].lowered.checks


def _counting_64_bit_scopes(monkeypatch) -> list:
    """The 64-bit scopes entered, counted where every one is made — JAX's own context manager,
    which :func:`remora.backends.jax_width.x64` looks up at each call — so no module's alias of
    ``x64``/``_x64`` escapes the count (the kept call lives in :mod:`.jax_compiled`)."""
    if hasattr(jax, "enable_x64"):
        return counting(monkeypatch, jax, "enable_x64")
    from jax import experimental

    return counting(monkeypatch, experimental, "enable_x64")


def test_the_64_bit_scope_count_sees_the_compiled_calls_scope(monkeypatch):
    """The count above is not blind: a first call (in the scope) is counted."""
    a = _device(np.arange(3.0))
    scopes = _counting_64_bit_scopes(monkeypatch)
    remora.evaluate("(+ x 0.5)", x=a, backend="jax")
    assert scopes


def test_a_kept_call_of_jax_arrays_runs_nothing_of_the_first_calls_path(monkeypatch):
    """Neither the 64-bit scope (an executable's input types are fixed), nor the entry's own
    call with a dict of inputs, nor the look-up of the compiled function: its executable."""
    a, b = _device(np.ones((4, 3))), _device(np.arange(12.0).reshape(4, 3))
    f = remora.function("(λ ((u [Float 3]) (v [Float 3])) (dot u v))", backend="jax")
    source = "(dot b a)"  # (the inputs by keyword, in another order than the compiled function's)
    want = [3.0, 12.0, 21.0, 30.0]
    np.testing.assert_allclose(np.asarray(remora.evaluate(source, b=b, a=a, backend="jax")), want)
    np.testing.assert_allclose(np.asarray(f(a, b)), want)
    scopes = _counting_64_bit_scopes(monkeypatch)
    entries = counting(monkeypatch, jax_backend._Compiled, "__call__")
    looked_up = counting(monkeypatch, jax_backend.JaxBackend, "compiled")
    before = jax.config.jax_enable_x64
    for _ in range(3):
        out = remora.evaluate(source, b=b, a=a, backend="jax")
        assert isinstance(out, jax.Array) and out.dtype == jnp.float64
        np.testing.assert_allclose(np.asarray(out), want)
        np.testing.assert_allclose(np.asarray(f(a, b)), want)
    assert (len(scopes), len(entries), len(looked_up)) == (0, 0, 0)
    assert jax.config.jax_enable_x64 == before  # (the user's own JAX code: its configuration)


def test_a_failed_check_of_a_kept_call_of_jax_arrays_is_numpys_error_on_every_call():
    source = "(reduce + (/ 12 x))"
    good, bad = _device(np.array([1, 2, 3])), _device(np.array([1, 0, 3]))
    f = remora.function("(λ ((v [Int 3])) (/ 12 v))", backend="jax")
    assert int(remora.evaluate(source, x=good, backend="jax")) == 22
    assert np.asarray(f(good)).tolist() == [12, 6, 4]
    with pytest.raises(remora.RemoraRuntimeError) as want:
        remora.evaluate(source, x=np.array([1, 0, 3]))
    for _ in range(2):
        with pytest.raises(remora.RemoraRuntimeError) as got:
            remora.evaluate(source, x=bad, backend="jax")
        assert (str(got.value), got.value.line, got.value.column) == (str(want.value), want.value.line,
                                                                     want.value.column)
        with pytest.raises(remora.RemoraRuntimeError, match="division by zero"):
            f(bad)
    assert int(remora.evaluate(source, x=good, backend="jax")) == 22
    assert np.asarray(f(good)).tolist() == [12, 6, 4]


def test_kept_calls_from_eight_threads_at_once_each_get_their_own_value():
    f = remora.function("(λ ((v [Int 4])) (* v (reduce + (/ 12 v))))", backend="jax")
    source = "(+ (* x 2) (reduce + x))"
    inputs = [_device(np.arange(1, 5) + k) for k in range(8)]
    zero = _device(np.array([1, 0, 2, 3]))
    f(inputs[0]), remora.evaluate(source, x=inputs[0], backend="jax")  # (the calls kept)
    start, results, errors = threading.Barrier(8), {}, {}

    def work(k: int) -> None:
        start.wait()
        for _ in range(20):
            if k == 7:  # (one thread's check fails every time: the others never see it)
                with pytest.raises(remora.RemoraRuntimeError, match="division by zero"):
                    f(zero)
                continue
            got = (np.asarray(f(inputs[k])).tolist(), np.asarray(remora.evaluate(source, x=inputs[k], backend="jax")).tolist())
            if results.setdefault(k, got) != got:
                errors[k] = got

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k in range(7):
        v = np.arange(1, 5) + k
        assert results[k] == ((v * (12 // v).sum()).tolist(), (v * 2 + v.sum()).tolist())


def test_an_input_on_another_device_takes_the_jitted_call():
    # (the executable is made for the first call's device; the jitted function takes any)
    program = textwrap.dedent("""
        import jax, numpy as np, remora
        from remora.backends import jax_backend
        one, other = jax.devices()[:2]
        with jax_backend.x64():
            a, b = (jax.device_put(np.arange(4.0), d) for d in (one, other))
        for x, device in [(a, one), (a, one), (b, other), (b, other), (a, one)]:
            out = remora.evaluate("(* x 2.0)", backend="jax", x=x)
            assert np.asarray(out).tolist() == [0.0, 2.0, 4.0, 6.0] and out.devices() == {device}, out.devices()
        print("ok")
    """)
    env = {**subprocess_env(), "XLA_FLAGS": "--xla_force_host_platform_device_count=2", "JAX_PLATFORMS": "cpu"}
    done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_first_calls_from_eight_threads_at_once_each_get_their_own_value():
    # (each may trace and compile: whichever executable is kept, every call's value is its own)
    f = remora.function("(λ ((v [Int 3])) (- (* v v) 1))", backend="jax")
    source = "(+ (* x 3) 1)"
    start, results = threading.Barrier(8), {}

    def work(k: int) -> None:
        x = _device(np.arange(3) + k)
        start.wait()
        results[k] = [(np.asarray(f(x)).tolist(), np.asarray(remora.evaluate(source, x=x, backend="jax")).tolist())
                      for _ in range(5)]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(8):
        v = np.arange(3) + k
        assert results[k] == [((v * v - 1).tolist(), (v * 3 + 1).tolist())] * 5
