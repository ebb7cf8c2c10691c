"""The JAX backend lowers a plan's IR (spec D48, issue 24): one ``jax.jit`` function per program,
its guards and checks returned as one flag (a miss replans, a failed check raises NumPy's
located error), the whole-frame trace only where the documented condition holds, and no other
exception turned into a silent slow path."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import remora  # noqa: E402
from remora.backends import jax_backend, jax_compiled  # noqa: E402
from remora.backends.jax_lower import Unlowerable, lower  # noqa: E402
from remora.ir.core import Sym  # noqa: E402
from remora.ir.program import Program  # noqa: E402

from conftest import subprocess_env  # noqa: E402

XP = jax_backend.BACKEND


def _entries(program: Program) -> list:
    return [e for table in XP._compiled._entries.values() for e in table[1].values()
            if e.variants and any(v.lowered.program is program for v in e.variants)]


@pytest.fixture
def lowered(monkeypatch) -> list:
    """The programs the backend lowers from now on."""
    programs: list = []
    real = jax_compiled.lower
    monkeypatch.setattr(jax_compiled, "lower", lambda program, *a: programs.append(program) or real(program, *a))
    return programs


def test_a_guard_miss_makes_another_plan_and_each_gives_numpys_value(lowered):
    # (a scalar `if` on data is a guard of the plan: data deciding the other way misses, and a
    # second plan is made and lowered — each later call takes the plan that fits, compiled)
    source = "(if (> (reduce + x) 0) (* 2 x) (- 0 x))  "
    up, down = np.arange(5), -np.arange(5)
    for x in (up, down, up, down):
        got = remora.evaluate(source, x=x, backend="jax")
        assert np.asarray(got).tolist() == remora.evaluate(source, x=x).tolist()
    assert len(lowered) == 2 and all("guard" in [e.kind for e in p.eqns()] for p in lowered)
    (entry,) = _entries(lowered[0])
    assert len(entry.variants) == 2
    eager = XP.eager_runs
    remora.evaluate(source, x=down, backend="jax")  # (the second variant: no host replay)
    remora.evaluate(source, x=up, backend="jax")
    assert XP.eager_runs == eager


def test_a_failed_check_of_a_lowered_program_raises_numpys_located_error(lowered):
    source = "(/ 10 (- x 2))   "
    assert np.asarray(remora.evaluate(source, x=np.array([3, 4]), backend="jax")).tolist() == [10, 5]
    with pytest.raises(remora.RemoraRuntimeError) as jax_err:
        remora.evaluate(source, x=np.array([3, 2]), backend="jax")
    with pytest.raises(remora.RemoraRuntimeError) as numpy_err:
        remora.evaluate(source, x=np.array([3, 2]))
    assert str(jax_err.value) == str(numpy_err.value)
    assert [e.kind for e in lowered[0].eqns()].count("require") == 1


def test_a_32_bit_program_is_lowered_narrow_and_a_64_bit_one_wide(lowered):
    x32 = np.arange(4, dtype=np.float32)
    got = remora.evaluate("(+ x x)", x=x32, backend="jax")
    assert got.dtype == np.float32 and not jax.config.jax_enable_x64
    got = remora.evaluate("(+ x x)", x=np.arange(4.0), backend="jax")
    assert got.dtype == np.float64
    narrow, wide = lowered
    (n_entry,), (w_entry,) = _entries(narrow), _entries(wide)
    assert not n_entry.variants[0].lowered.wide and w_entry.variants[0].lowered.wide


@pytest.mark.parametrize("source,why", [
    ("(define (f (n [Int])) (while (λ ((m [Int])) (> m 1)) (λ ((m [Int])) (/ m 2)) n))\n(f ns)", "`while`"),
    ("(unbox (n xs (filter (> ns 3) ns)) (sum xs))", "follows the data"),
])
def test_what_cannot_be_lowered_says_why_and_still_compiles_the_whole_frame_way(source, why):
    ns = np.arange(1, 9)
    before = XP.traces
    got = remora.evaluate(source, ns=ns, backend="jax")
    assert np.asarray(got).tolist() == remora.evaluate(source, ns=ns).tolist()
    assert any(why in f for f in XP.fallbacks), list(XP.fallbacks)[-3:]
    assert XP.traces > before


def test_the_lowering_refuses_a_site_by_name():
    site = Sym(np.zeros(3), "v1", None)
    from remora.ir.core import Eqn

    program = Program([(site, "argument x")], [Eqn("site", "while_cells", (site,), Sym(np.zeros(3), "v2", None))],
                      Sym(np.zeros(3), "v2", None))
    with pytest.raises(Unlowerable, match="while"):
        lower(program, ("v1",), {})


def test_an_unexpected_exception_of_the_whole_frame_trace_is_raised_not_hidden(monkeypatch):
    # (only the documented condition falls back to an eager run: spec D48)
    def broken(run, names):
        def traced(*arrays):
            raise KeyError("a bug")
        return traced

    monkeypatch.setattr(XP, "_traced", broken)
    source = "(define (f (n [Int])) (while (λ ((m [Int])) (> m 1)) (λ ((m [Int])) (- m 3)) n))\n(f ns)"
    with pytest.raises(KeyError, match="a bug"):
        remora.evaluate(source, ns=np.arange(1, 7), backend="jax")


def test_remora_explain_says_how_each_evaluation_ran(tmp_path):
    program = tmp_path / "p.rem"
    program.write_text("(define x [1 2 3])\n(+ x 1)\n"
                       "((λ ((n [Int])) (while (λ ((m [Int])) (> m 1)) (λ ((m [Int])) (/ m 2)) n)) x)\n",
                       encoding="utf-8")
    env = {**subprocess_env(), "REMORA_EXPLAIN": "1"}
    done = subprocess.run([sys.executable, "-m", "remora", "eval", "--backend=jax", str(program)],
                          capture_output=True, text=True, env=env, cwd=os.path.dirname(__file__) + "/..")
    assert done.returncode == 0, done.stderr
    assert f"{program}:2:1: compiled from its plan" in done.stderr
    assert f"{program}:3:1: cannot be compiled from a plan (a `while` over a frame" in done.stderr


def test_eval_plan_prints_the_ir_a_jax_evaluation_was_lowered_from(tmp_path):
    program = tmp_path / "p.rem"
    program.write_text("(define x [1 2 3])\n(+ x 1)\n"
                       "((λ ((n [Int])) (while (λ ((m [Int])) (> m 1)) (λ ((m [Int])) (/ m 2)) n)) x)\n",
                       encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "remora", "eval", "--plan", "--backend=jax", str(program)],
                          capture_output=True, text=True, env=subprocess_env(), cwd=os.path.dirname(__file__) + "/..")
    assert done.returncode == 0, done.stderr
    assert f";; {program}:2:1: plan\nv1: int64[3] = input global x#1\nv2: int64[3] = add v1" in done.stdout
    assert f";; {program}:3:1: compiled by tracing the whole-frame engine (no plan to lower: a `while`" in done.stdout
