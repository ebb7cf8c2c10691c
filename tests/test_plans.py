"""Plans (remora/plans): a form specialised once per input signature, then replayed.

What is checked here is the cache's behaviour — a second call replays, a new shape makes a new
plan, a changed definition or prelude value is never replayed stale, data-dependent parts
specialise on what they find — and that replays give the dynamic engine's values and errors.
(Every eval_value in the suite also runs plans against the reference engine and replays each
planned expression once: tests/conftest.py.)
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import remora
from remora.dynamics.runtime import RunConfig
from remora.erasure.erase import erase_form
from remora.interfaces.session import Session
from remora.plans import PLANS


def _stats() -> dict:
    return dict(PLANS.stats)


def _delta(before: dict) -> dict:
    return {k: PLANS.stats[k] - before[k] for k in before}


def _session_form(session: Session, text: str):
    (typed,) = session.check_text(text, "<test>")
    return erase_form(typed)


# --- reuse ------------------------------------------------------------------------------


def test_a_second_call_replays_its_plan():
    norm = remora.function("(λ ((v (Arr Float (Shp 3)))) (sqrt (sum (* v v))))")
    before = _stats()
    assert norm(np.array([3.0, 4.0, 12.0])) == 13.0
    assert _delta(before)["traced"] == 1
    before = _stats()
    assert norm(np.array([0.0, 3.0, 4.0])) == 5.0
    assert _delta(before) == {"traced": 0, "replayed": 1, "dynamic": 0, "missed": 0}


def test_a_new_input_shape_makes_a_new_plan():
    double = remora.function("(λ ((x (Arr Int (Shp)))) (* x 2))")
    before = _stats()
    assert double(np.arange(3)).tolist() == [0, 2, 4]
    assert double(np.arange(4)).tolist() == [0, 2, 4, 6]
    assert double(np.arange(6).reshape(2, 3)).tolist() == [[0, 2, 4], [6, 8, 10]]
    assert _delta(before)["traced"] == 3
    before = _stats()
    assert double(np.arange(4) + 1).tolist() == [2, 4, 6, 8]
    assert _delta(before) == {"traced": 0, "replayed": 1, "dynamic": 0, "missed": 0}


def test_evaluate_reuses_the_plan_of_a_program_seen_before():
    source = "(define k 3.0) (+ (* x k) 1.0)"
    remora.evaluate(source, x=np.arange(4.0))
    before = _stats()
    assert remora.evaluate(source, x=np.arange(4.0) + 1).tolist() == [4.0, 7.0, 10.0, 13.0]
    assert _delta(before)["replayed"] == 1
    before = _stats()
    assert remora.evaluate(source, x=np.arange(2.0)).tolist() == [1.0, 4.0]  # another signature
    assert _delta(before)["traced"] == 1


def test_a_plan_checks_its_signature_and_is_never_run_on_another():
    session = Session(run=RunConfig())
    key = session.bind("x", np.arange(3))
    form = _session_form(session, "(+ x 10)")
    assert session.engine.eval_form(form).tolist() == [10, 11, 12]
    (plan,) = PLANS.plans(form)
    session.supply(key, np.arange(4))  # (the checker would refuse this; the plan must too)
    with pytest.raises(remora.plans.Miss):
        plan.run(session.engine.globals, {})


# --- what a plan depends on -------------------------------------------------------------------


def test_a_changed_array_global_is_read_at_replay_not_baked_in():
    session = Session(run=RunConfig())
    key = session.bind("x", np.array([1.0, 2.0]))
    form = _session_form(session, "(* x x)")
    assert session.engine.eval_form(form).tolist() == [1.0, 4.0]
    session.supply(key, np.array([3.0, 4.0]))
    before = _stats()
    assert session.engine.eval_form(form).tolist() == [9.0, 16.0]
    assert _delta(before)["replayed"] == 1


def test_a_redefined_function_gives_a_new_plan():
    """A plan assumes the functions it was specialised to: if a global names another one (a
    redefinition in the REPL, a reloaded prelude), the plan misses and a new one is made."""
    session = Session(run=RunConfig())
    for text in ("(define (f (x (Arr Int (Shp)))) (+ x 1))", "(define n 5)"):
        session.engine.eval_form(_session_form(session, text))
    form = _session_form(session, "(f n)")
    f_key = form.expr.fn.key
    assert session.engine.eval_form(form).tolist() == 6
    other = _session_form(session, "(define g (λ ((x (Arr Int (Shp)))) (* x 100)))")
    session.engine.eval_form(other)
    session.engine.globals[f_key] = session.engine.globals[other.key]
    before = _stats()
    assert session.engine.eval_form(form).tolist() == 500
    assert _delta(before)["missed"] == 1 and _delta(before)["traced"] == 1
    assert len(PLANS.plans(form)) == 2


def test_a_changed_prelude_value_gives_new_plans():
    session = Session(run=RunConfig())
    form = _session_form(session, "(sum [2 3 4])")
    assert session.engine.eval_form(form).tolist() == 9
    assert session.engine.eval_form(form).tolist() == 9  # replayed
    sum_key = next(k for k in session.engine.globals if k.startswith("sum#"))
    product_key = next(k for k in session.engine.globals if k.startswith("product#"))
    session.engine.globals[sum_key] = session.engine.globals[product_key]  # the prelude changed under it
    before = _stats()
    assert session.engine.eval_form(form).tolist() == 24
    assert _delta(before)["missed"] == 1 and _delta(before)["traced"] == 1


def test_repl_redefinition_is_seen_by_later_forms():
    session = Session(run=RunConfig())
    values = [v for _, v in session.run_text("(define x [1 2 3]) (define (f (y (Arr Int (Shp)))) (+ y 1)) (f x)")]
    assert values[-1].tolist() == [2, 3, 4]
    values = [v for _, v in session.run_text("(define x [10 20]) (define (f (y (Arr Int (Shp)))) (* y 2)) (f x)")]
    assert values[-1].tolist() == [20, 40]


# --- data-dependent shapes ----------------------------------------------------------------------


def test_iota_v_specialises_on_the_length_it_finds():
    source = "(unbox (k v (iota/v n)) (reduce + (append [0] v)))"
    results = [remora.evaluate(source, n=n).item() for n in (3, 5, 3, 0, 5)]
    assert results == [3, 10, 3, 0, 10]


def test_filter_results_specialise_on_the_count_they_find():
    source = "(unbox (k v (filter bs xs)) (reduce + (append [0] v)))"
    xs = np.array([1, 2, 3, 4])
    for bs, expected in (([True, False, True, False], 4), ([True, True, True, True], 10),
                         ([True, False, True, False], 4), ([False] * 4, 0), ([False, True, False, True], 6)):
        assert remora.evaluate(source, bs=np.array(bs), xs=xs).item() == expected


def test_a_form_whose_data_decides_differently_every_time_runs_dynamically():
    source = "(unbox (k v (iota/v n)) (reduce + (append [0] v)))"
    for n in range(12):
        assert remora.evaluate(source, n=n).item() == n * (n - 1) // 2
    before = _stats()
    assert remora.evaluate(source, n=20).item() == 190
    assert _delta(before)["dynamic"] == 1 and _delta(before)["traced"] == 0


def test_ragged_and_uniform_boxes_through_plans():
    f = remora.function("(λ ((n (Arr Int (Shp)))) (unbox (k v (iota/v n)) (reduce + (append [0] v))))")
    assert f(np.array([1, 2, 3])).tolist() == [0, 1, 3]  # ragged: a different length per box
    assert f(np.array([3, 3, 3])).tolist() == [3, 3, 3]  # uniform
    assert f(np.array([4, 1, 2])).tolist() == [6, 0, 1]
    assert f(np.array([3, 3, 3])).tolist() == [3, 3, 3]


# --- loops ------------------------------------------------------------------------------------


FOLD = "(fold (λ ((a (Arr Float (Shp))) (b (Arr Float (Shp)))) (+ (* b 0.5) a)) 0.0 x)"


def _fold_by_hand(x: np.ndarray) -> float:
    acc = 0.0
    for item in x[::-1]:
        acc = acc * 0.5 + item
    return acc


def test_a_fold_of_a_lambda_is_planned_once_and_replayed_per_item():
    x = np.random.default_rng(1).standard_normal(1000)
    assert remora.evaluate(FOLD, x=x).item() == _fold_by_hand(x)
    plans = [p for _, kept in PLANS._plans.values() if kept for p in kept if "in range(1000):" in p.source]
    assert plans, "the fold was not planned as one loop"
    y = x[::-1].copy()
    before = _stats()
    assert remora.evaluate(FOLD, x=y).item() == _fold_by_hand(y)
    assert _delta(before)["replayed"] == 1


def test_a_fold_over_a_literal_array_indexes_each_item():
    """The step of a loop over an array the tracer cannot see (a literal) must not bake in the
    first item: such a loop runs dynamically, with the right value."""
    for _ in range(2):
        assert remora.evaluate("(fold - 0 [1 2 3])").item() == 2
        assert remora.evaluate("(fold (λ ((a (Arr Int (Shp))) (b (Arr Int (Shp)))) (- a b)) 0 [1 2 3])").item() == 2


def test_a_loop_over_a_literal_whose_last_items_are_equal_is_not_baked_in():
    """Traced for two items that happen to be equal, a step indexing a literal records equal
    constants: they must still not be taken for one constant (the items before differ)."""
    source = "(fold (λ ((a [Int 2]) (b [Int 2])) (+ a b)) [0 7] [[1 -3] [1 -2] [1 -2]])"
    for _ in range(2):
        assert remora.evaluate(source).tolist() == [3, 0]


def test_a_fold_over_functions_whose_last_two_are_the_same():
    """A step that takes its item from a frame of functions: the two items traced are the same
    function, the first is not; the loop must not replay the one it saw."""
    source = """
    (define (inc (x (Arr Int (Shp)))) (+ x 1))
    (define (dbl (x (Arr Int (Shp)))) (* x 2))
    (fold (λ ((f (Arr (-> ((Arr Int (Shp))) (Arr Int (Shp))) (Shp))) (a (Arr Int (Shp)))) (f a)) 1 [dbl inc inc])
    """
    for _ in range(2):
        assert remora.evaluate(source).item() == 6


def test_the_loop_workloads_are_planned_whole():
    """iterate with a λ over a batch (closures that vary with what they captured, one function)
    and folds with folded constants in their step are planned, not run dynamically."""
    source = """
    (define (step (z [Float 2]) (c [Float 2])) [(+ (index z 0) (index c 0)) (* (index z 1) 0.5)])
    (define (run (c [Float 2])) (iterate (λ ((z [Float 2])) (step z c)) 5 [0.0 1.0]))
    (run cs)
    """
    cs = np.arange(6.0).reshape(3, 2)
    before = _stats()
    first = remora.evaluate(source, cs=cs)
    again = remora.evaluate(source, cs=cs + 1)
    assert _delta(before)["dynamic"] == 0 and _delta(before)["replayed"] == 1
    assert first.tolist() == [[5 * c0, 0.5**5] for c0 in (0.0, 2.0, 4.0)]
    assert again.tolist() == [[5 * c0, 0.5**5] for c0 in (1.0, 3.0, 5.0)]


def test_a_run_time_error_in_a_replayed_loop_is_located_as_the_engine_locates_it():
    source = "(fold (λ ((a (Arr Int (Shp))) (b (Arr Int (Shp)))) (/ b a)) 100 xs)"
    assert remora.evaluate(source, xs=np.array([1, 2, 5])).item() == 10
    messages = []
    for _ in range(2):  # traced, then replayed
        with pytest.raises(remora.RemoraRuntimeError) as info:
            remora.evaluate(source, xs=np.array([1, 0, 5]))
        messages.append((info.value.message, info.value.line, info.value.column))
    assert messages[0] == messages[1]
    assert "division by zero" in messages[0][0]


def test_scan_and_reduce_with_a_lambda_replay():
    scan = "(scan (λ ((a (Arr Int (Shp))) (b (Arr Int (Shp)))) (- (* a 2) b)) 1 xs)"
    reduce = "(reduce (λ ((a (Arr Int (Shp))) (b (Arr Int (Shp)))) (- a b)) xs)"
    for xs in ([1, 2, 3, 4], [5, 0, 2, 7]):
        acc, expected = 1, []
        for v in xs:
            acc = acc * 2 - v
            expected.append(acc)
        for _ in range(2):
            assert remora.evaluate(scan, xs=np.array(xs)).tolist() == expected
            assert remora.evaluate(reduce, xs=np.array(xs)).item() == xs[0] - sum(xs[1:])


# --- what cannot be planned --------------------------------------------------------------------


def test_an_effect_is_never_traced_twice():
    source = "(unbox (k v (read-nums)) (reduce + (append [0] v)))"
    for _ in range(2):
        assert remora.evaluate(source, stdin="1 2 3").item() == 6


def test_a_registered_primitive_runs_dynamically_with_the_right_value():
    remora.register("plan-test-twice", "(-> ((Arr Int (Shp))) (Arr Int (Shp)))", lambda x: x * 2)
    f = remora.function("(λ ((x (Arr Int (Shp)))) (+ (plan-test-twice x) 1))")
    for _ in range(2):
        assert f(np.array([1, 2])).tolist() == [3, 5]


# --- threads -----------------------------------------------------------------------------------


def test_plans_in_several_threads_at_once():
    f = remora.function("(λ ((v (Arr Float (Shp n)))) (sqrt (sum (* v v))))".replace("(Shp n)", "(Shp 2)"))
    errors: list = []

    def work(seed: int) -> None:
        rng = np.random.default_rng(seed)
        try:
            for i in range(40):
                shape = (2,) if i % 3 == 0 else (1 + seed % 4, 2)
                x = rng.standard_normal(shape)
                got = f(x)
                want = np.sqrt((x * x).sum(axis=-1))
                if not np.array_equal(np.asarray(got), want):
                    errors.append((shape, got, want))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


# --- remora eval --plan -------------------------------------------------------------------------


def test_eval_plan_prints_each_forms_array_calls_with_their_shapes(tmp_path):
    import subprocess
    import sys

    from conftest import subprocess_env

    program = tmp_path / "p.rem"
    program.write_text("(define xs [1.0 2.0 3.0])\n(* xs xs)\n"
                       "(fold (λ ((a (Arr Float (Shp))) (b (Arr Float (Shp)))) (+ a (* 0.5 b))) 0.0 xs)\n"
                       "(unbox (k v (read-nums)) (length v))\n")
    r = subprocess.run([sys.executable, "-m", "remora", "eval", "--plan", str(program)], input="4 5",
                       capture_output=True, text=True, env=subprocess_env(), timeout=120)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert f";; {program}:2:1: plan" in out and "= input global xs#" in out
    assert "v2: float64[3] = multiply v1 v1" in out  # each equation's result: dtype and shape
    assert "[1.0 4.0 9.0]" in out and "2.75" in out  # the values are printed as usual
    assert "= loop 3 from" in out  # the fold's step, planned once: a loop of the IR
    assert f";; {program}:4:1: evaluated dynamically (`read-nums` has an effect)" in out
    assert out.rstrip().endswith("2")
    python = subprocess.run([sys.executable, "-m", "remora", "eval", "--plan-python", str(program)], input="4 5",
                            capture_output=True, text=True, env=subprocess_env(), timeout=120).stdout
    assert "def plan(G, L):" in python and "in range(3):" in python  # (the NumPy lowering: a Python loop)


def test_a_trace_that_would_hold_too_much_memory_runs_dynamically(monkeypatch):
    """A long data-dependent loop keeps every step's arrays alive while it is traced (a `while`
    over 10⁶ cells held 11 GB): past the trace's byte budget the form runs dynamically instead,
    with the same value."""
    from remora.plans import trace

    monkeypatch.setattr(trace, "TRACE_BYTES", 4096)
    count = remora.function(
        "(λ ((n [Int])) (tail (while (λ ((s [Int 2])) (> (head s) 1))"
        " (λ ((s [Int 2])) [(select (= 0 (mod (head s) 2)) (/ (head s) 2) (+ 1 (* 3 (head s))))"
        " (+ 1 (tail s))]) [n 0])))"
    )
    before = _stats()
    got = count(np.arange(1, 201, dtype=np.int64))
    assert _delta(before)["dynamic"] == 1 and _delta(before)["traced"] == 0
    assert "MiB of intermediate arrays" in PLANS.last_refusal
    assert got[:8].tolist() == [0, 1, 7, 2, 5, 8, 16, 3]


PATHFINDER = """
(define (pathfinder (wall (Arr Int (Shp 40 3000))))
  (fold (λ ((row [Int 3000]) (best [Int 3000]))
          (+ row (min best (min (append [(head best)] (curtail best)) (append (behead best) [(tail best)])))))
        (tail wall)
        (curtail wall)))
(pathfinder wall)
"""


def test_views_of_an_input_do_not_count_against_the_trace_budget(monkeypatch):
    """A fold over the rows of a large input (``curtail wall``: a view of almost all of it) holds
    no new memory for that view: the trace counts each array's memory once, by the array that
    owns it, and the input's not at all — the form is planned (before: run dynamically)."""
    from remora.plans import trace

    wall = np.random.default_rng(6).integers(0, 10, (40, 3000))  # 960 000 bytes
    best = wall[-1]
    for row in wall[-2::-1]:
        best = row + np.minimum(best, np.minimum(np.r_[best[:1], best[:-1]], np.r_[best[1:], best[-1:]]))
    monkeypatch.setattr(trace, "TRACE_BYTES", 600_000)  # (the steps' own arrays: some 100 KB)
    before = _stats()
    assert remora.evaluate(PATHFINDER, wall=wall).tolist() == best.tolist()
    assert remora.evaluate(PATHFINDER, wall=wall).tolist() == best.tolist()
    assert _delta(before) == {"traced": 1, "replayed": 1, "dynamic": 0, "missed": 0}


def test_remora_explain_says_how_each_form_ran_and_why_it_fell_back():
    """REMORA_EXPLAIN=1: each evaluation says on standard error whether its plan was traced or
    replayed, or why it ran on the dynamic engine — the API's counterpart of `eval --plan`."""
    import subprocess
    import sys

    from conftest import subprocess_env

    script = ("import numpy, remora\n"
              "remora.evaluate('(sum (* a a))', a=numpy.ones(3))\n"
              "remora.evaluate('(sum (* a a))', a=numpy.ones(3))\n"
              "remora.evaluate('(unbox (k v (read-nums)) (length v))')\n")
    env = {**subprocess_env(), "REMORA_EXPLAIN": "1"}
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120,
                       input="")
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert lines[0].endswith("traced (a plan made)") and lines[1].endswith("plan replayed"), r.stderr
    assert "evaluated dynamically (`read-nums` has an effect)" in lines[2], r.stderr
    quiet = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=subprocess_env(),
                           timeout=120, input="")
    assert quiet.stderr == ""
