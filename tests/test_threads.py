"""The Python API called from many threads at once (spec/interfaces.md, "Threads").

`check`, `evaluate`, `function` (and calling a Function) and `register` are safe to call
concurrently: every result must be exactly the single-threaded one.  Each test compares every
answer a thread gets with the answer computed first in one thread; a barrier starts the threads
together so their calls overlap.  The z3 part runs in a subprocess: before z3 use was serialised
it was a segmentation fault that killed the whole process.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import uuid
from pathlib import Path

import numpy as np

import remora
from conftest import subprocess_env

ROOT = Path(__file__).resolve().parents[1]
THREADS = 8


def run_threads(work, rounds: int) -> list[str]:
    """Run ``work(thread, round)`` for every round in THREADS threads started together; the
    failures they report (an exception counts as one)."""
    failures: list[str] = []
    barrier = threading.Barrier(THREADS)

    def body(t: int) -> None:
        barrier.wait()
        for i in range(rounds):
            try:
                problem = work(t, i)
            except Exception as exc:  # noqa: BLE001 - a crash in a thread is a failure to report
                problem = f"{type(exc).__name__}: {exc}"
            if problem:
                failures.append(f"thread {t}, round {i}: {problem}")

    threads = [threading.Thread(target=body, args=(t,)) for t in range(THREADS)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often, so that calls really interleave
    try:
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    finally:
        sys.setswitchinterval(interval)
    return failures


def _same(got: np.ndarray, want: np.ndarray) -> str | None:
    if got.shape != want.shape or got.dtype != want.dtype or not np.array_equal(got, want):
        return f"got {got.dtype}{got.shape} {got.tolist()!r}, expected {want.dtype}{want.shape} {want.tolist()!r}"
    return None


def test_one_function_called_from_many_threads_on_different_shapes():
    # Polymorphic in n, lifted over any frame: every argument shape is its own signature, and
    # the calls share one Function (one checker, one engine).
    f = remora.function("(Iλ ((n Dim)) (λ ((v (Arr Int (Shp n)))) (+ (reverse v) (* 10 (length v)))))")
    shapes = [(2,), (3,), (4, 5), (1, 7), (6,), (2, 2, 3), (0,), (3, 0)]
    inputs = [np.arange(int(np.prod(s)), dtype=np.int64).reshape(s) for s in shapes]
    expected = [f(x) for x in inputs]

    def work(t: int, i: int):
        j = (t + i) % len(inputs)
        return _same(f(inputs[j]), expected[j])

    failures = run_threads(work, rounds=150)
    assert not failures, f"{len(failures)} wrong calls, e.g. {failures[:3]}"


def test_new_signatures_checked_concurrently():
    # Every thread brings argument shapes the Function has not seen: they are checked while
    # other threads check theirs and run theirs.
    f = remora.function("(λ ((a [Float 2]) (b [Float])) (* a b))")

    def work(t: int, i: int):
        n = 1 + (t * 40 + i) % 37
        a, b = np.full((n, 2), float(t)), np.arange(float(n))
        return _same(f(a, b), a * b[:, None])

    failures = run_threads(work, rounds=40)
    assert not failures, f"{len(failures)} wrong calls, e.g. {failures[:3]}"


def test_evaluate_and_check_from_many_threads():
    programs = [
        ("(+ x (length x))", lambda x: x + len(x)),
        ("(reverse (append x x))", lambda x: np.concatenate([x, x])[::-1]),
        ("(unbox (n v (iota/v (length x))) (+ (reduce + (append [0] v)) (head x)))", lambda x: len(x) * (len(x) - 1) // 2 + x[0]),
    ]

    def work(t: int, i: int):
        source, meaning = programs[(t + i) % len(programs)]
        x = np.arange(1 + (t + i) % 5, dtype=np.int64) * (t + 1)
        got = remora.evaluate(source, x=x)
        problem = _same(got, np.asarray(meaning(x), dtype=np.int64))
        if problem:
            return f"{source}: {problem}"
        typ = str(remora.check(source, x=x))
        return None if typ.startswith("(Arr Int") else f"{source}: type {typ}"

    failures = run_threads(work, rounds=20)
    assert not failures, f"{len(failures)} wrong answers, e.g. {failures[:3]}"


def test_register_while_other_threads_evaluate():
    names = [f"thr-{t}-{uuid.uuid4().hex[:8]}" for t in range(THREADS)]

    def work(t: int, i: int):
        if i == 0:
            remora.register(names[t], "(-> ((Arr Int (Shp))) (Arr Int (Shp)))", lambda a, t=t: a + t)
        got = remora.evaluate(f"({names[t]} x)", x=np.arange(3) + i)
        return _same(got, np.arange(3) + i + t)

    try:
        failures = run_threads(work, rounds=10)
    finally:
        from remora.primitives.registry import PRIMITIVES

        for name in names:
            PRIMITIVES.pop(name, None)
        remora.interfaces.api._checked.cache_clear()
    assert not failures, f"{len(failures)} wrong answers, e.g. {failures[:3]}"


# Index questions only z3 answers: counterexamples in error messages, and instantiations found
# by solving linear equations over naturals ((+ m n), (+ m m n)).  Checked with a fresh comment
# each time, so no cache answers them.
Z3_SCRIPT = textwrap.dedent(
    r"""
    import sys, threading, remora
    sys.setswitchinterval(1e-5)

    PROGRAMS = [
        "(Iλ ((n Dim)) (λ ((a [Int n 3])) ((λ ((x [Int 3 n])) x) a)))",
        "(define split (Iλ ((m Dim) (n Dim)) (λ ((x [Int (+ m n)])) x)))\n(split [1 2 3])",
        "(define g (Iλ ((m Dim) (n Dim)) (λ ((x [Int (+ m m n)])) x)))\n(g [1 2 3 4 5])",
        "(define g (Iλ ((m Dim) (n Dim)) (λ ((x [Int (+ m m n)])) (length x))))\n(g (array (0) Int))",
        "(Iλ ((m Dim) (n Dim)) (λ ((a [Int m]) (b [Int n])) (+ a b)))",
        "(Iλ ((s Shape)) (λ ((a (Arr Int (++ s (Shp 2))))) ((λ ((x [Int 2 2])) x) a)))",
    ]
    counter = iter(range(10**9))

    def answer(source):
        tagged = f"{source}\n; {next(counter)}"
        try:
            return "type " + str(remora.check(tagged))
        except remora.RemoraError as err:
            return "error " + err.message

    expected = [answer(p) for p in PROGRAMS]
    assert sum(e.startswith("error") for e in expected) >= 4, expected
    wrong = []
    barrier = threading.Barrier(8)

    def work(t):
        barrier.wait()
        for i in range(12):
            j = (t + i) % len(PROGRAMS)
            got = answer(PROGRAMS[j])
            if got != expected[j]:
                wrong.append((j, got))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    print("wrong", len(wrong), wrong[:2])
    print("done")
    """
)


def test_z3_questions_from_many_threads():
    proc = subprocess.run(
        [sys.executable, "-c", Z3_SCRIPT], capture_output=True, text=True, env=subprocess_env(), cwd=ROOT, timeout=120
    )
    assert proc.returncode == 0, f"exit status {proc.returncode}\n{proc.stderr[-2000:]}"
    assert proc.stdout.splitlines() == ["wrong 0 []", "done"], proc.stdout + proc.stderr[-2000:]


# ---------------------------------------------------------------------------
# The mechanisms, one at a time, with the interleaving forced


def in_other_thread(fn):
    """Run ``fn`` in a new thread and return its result (re-raising what it raised)."""
    box: dict = {}

    def body():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed back to the caller
            box["error"] = exc

    th = threading.Thread(target=body)
    th.start()
    th.join()
    if "error" in box:
        raise box["error"]
    return box.get("value")


def test_a_failed_unification_solves_nothing_and_never_touches_another_threads_unknowns():
    """T-EQV is found first and committed after: an attempt that fails half-way leaves its
    unknowns unsolved, and another thread's solutions stay."""
    from remora.statics.types import FLOAT, INT, AtomMeta, TArr, TFun, prune
    from remora.statics.indices import Shape
    from remora.statics.unify import unify

    def fun(*atoms):
        return TFun(tuple(TArr(a, Shape(())) for a in atoms[:-1]), TArr(atoms[-1], Shape(())))

    theirs = AtomMeta(None, "theirs")
    mine = AtomMeta(None, "mine")
    assert in_other_thread(lambda: unify(theirs, INT))  # another thread solves its own unknown ...
    assert not unify(fun(mine, INT), fun(INT, FLOAT))  # ... this thread's attempt fails half-way
    assert prune(mine) is mine  # nothing of it stays
    assert prune(theirs) == INT  # and the other thread's solution is untouched


def test_recursion_room_lasts_until_the_last_thread_is_done():
    from remora.interfaces.session import RECURSION_LIMIT, deep_recursion

    started, finished = threading.Event(), threading.Event()
    seen: list[int] = []

    def other():
        with deep_recursion():
            started.set()
            finished.wait(10)
            seen.append(sys.getrecursionlimit())

    th = threading.Thread(target=other)
    outside = sys.getrecursionlimit()
    sys.setrecursionlimit(1500)  # a known limit below the room asked for
    try:
        with deep_recursion():
            th.start()
            started.wait(10)
        # this thread is done; the other one still needs the room
        finished.set()
        th.join()
        assert seen == [RECURSION_LIMIT]
        assert sys.getrecursionlimit() == 1500  # given back when both are done
    finally:
        finished.set()
        sys.setrecursionlimit(outside)


def test_ragged_evaluation_depth_is_per_thread():
    from remora.dynamics.engine import Frames

    engine = Frames()
    engine.ragged_depth += 1  # this thread is inside a ragged unbox
    try:
        assert in_other_thread(lambda: engine.ragged_depth) == 0
        assert engine.ragged_depth == 1
    finally:
        engine.ragged_depth -= 1


def test_function_arguments_are_per_call():
    # A call's arguments are its own environment: nothing of them stays in the shared engine.
    f = remora.function("(λ ((x [Int])) (+ x 1))")
    x = np.arange(3)
    assert f(x).tolist() == [1, 2, 3]
    assert not any(value is x for value in f._session.engine.globals.values())
