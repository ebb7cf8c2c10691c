"""z3's work is bounded (remora.statics.smt): a question, and a top-level form, have a time budget after
which the checker still gives its error — without the counterexample, or saying it could not
decide — and nothing z3 prints ever reaches the user."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import check_error, subprocess_env

from remora.statics import smt
from remora.statics.indices import Shape, Var, dim_var

SYMBOLIC = "(Iλ ((n Dim)) (λ ((x (Arr Int (Shp n 3)))) ((λ ((y (Arr Int (Shp 3 n)))) y) x)))"
SPLIT = "(define split (Iλ ((m Dim) (n Dim)) (λ ((x [Int (+ m n)])) x)))\n(split [1 2 3])"


def _vector_shape(prefix: str, count: int) -> tuple[Shape, list[Var]]:
    vs = [Var(f"{prefix}{i}", "Dim") for i in range(count)]
    return Shape(tuple(dim_var(v) for v in vs)), vs


def test_a_spent_budget_gives_no_counterexample_and_is_not_remembered():
    a, _ = _vector_shape("p", 2)
    b, _ = _vector_shape("q", 2)
    with smt.deadline(0):
        assert smt.differ(a, b) is None
    assert smt.differ(a, b) is not None  # asked again with time: answered


def test_a_form_out_of_budget_still_gets_its_error_without_the_counterexample(monkeypatch):
    assert "(it is not a suffix when n = 0)" in check_error(SYMBOLIC).message
    smt._cache.clear()
    monkeypatch.setattr(smt, "FORM_SECONDS", 0.0)
    message = check_error(SYMBOLIC).message
    assert message.startswith("argument 1 of this λ has shape (Shp n 3)")
    assert " when " not in message


def test_inference_out_of_budget_says_it_could_not_decide(monkeypatch):
    assert "ambiguous application of `split`" in check_error(SPLIT).message
    monkeypatch.setattr(smt, "QUESTION_SECONDS", 0.0)
    message = check_error(SPLIT).message
    assert message.startswith("cannot decide how to instantiate `split`")
    assert "i-app" in message


def test_the_least_counterexample_over_many_variables():
    """120 variables: z3's lexicographic Optimize took 15 s here; the answer is still the least."""
    a, avs = _vector_shape("a", 60)
    b, bvs = _vector_shape("b", 60)
    found = smt.differ(a, b)
    assert found is not None
    last = max(avs + bvs, key=lambda v: v.name)
    assert found == {v: int(v is last) for v in avs + bvs}


def _many_dims(count: int) -> str:
    """An ill-typed λ over ``count`` Dim variables (the outside report: 35–187 s before its error)."""
    a = " ".join(f"a{i}" for i in range(count // 2))
    b = " ".join(f"b{i}" for i in range(count // 2))
    binders = " ".join(f"({v} Dim)" for v in (a + " " + b).split())
    return f"(Iλ ({binders}) (λ ((y (Arr Int (Shp {b})))) ((λ ((z (Arr Int (Shp {a})))) z) y)))\n"


SHAPE_VARIABLE = "(define g (Iλ ((s Shape)) (λ ((f (Arr (-> ((Arr Int s)) (Arr Int s)) (Shp)))) (f (array () 1)))))\n"


@pytest.mark.parametrize(
    "source,starts,clause",
    [
        # once printed z3's `WARNING: optimization with quantified constraints is not supported`
        (SHAPE_VARIABLE, ":1:82: error: argument 1 of `f` has shape (Shp)", "(it is not a suffix when s = (Shp"),
        (_many_dims(120), ":1:", "(it is not a suffix when a0 = 0, a1 = 0, a10 = 0, "),
    ],
    ids=["shape-variable", "120-dims"],
)
def test_nothing_from_z3_reaches_the_user(tmp_path, source, starts, clause):
    program = tmp_path / "program.rem"
    program.write_text(source)
    proc = subprocess.run(
        [sys.executable, "-m", "remora", "check", str(program)],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=120,
    )
    assert proc.returncode == 1
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 4 and lines[3] == "Found 1 error in 1 file", proc.stderr  # (the report, then check's count)
    assert lines[0].startswith(f"{program}{starts}")
    assert clause in lines[0]
