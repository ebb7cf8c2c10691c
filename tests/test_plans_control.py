"""`while` and `if` over a frame in plans (plans/control.py, decisions.md D50).

The cells a `while` round runs, and the cells each branch of an `if` gets, are data; a plan
traces each of these parts once per *bucket* of its size (padding a part with copies of its
first cell) and replays for any data: a second call replays without tracing the form again,
other data of the same shapes traces at most the buckets it has not met yet, and the padding
never runs a stopped cell or an untaken branch.  The reference engine is the oracle.
"""

from __future__ import annotations

import numpy as np
import pytest

import remora
from remora.plans import PLANS
from remora.plans import control
from tests.conftest import eval_error, eval_value


def _stats() -> dict:
    return dict(PLANS.stats)


def _delta(before: dict) -> dict:
    return {k: PLANS.stats[k] - before[k] for k in before}


COLLATZ = """
(λ ((n [Int]))
  (tail (while (λ ((s [Int 2])) (> (head s) 1))
               (λ ((s [Int 2])) [(select (= 0 (mod (head s) 2)) (/ (head s) 2) (+ 1 (* 3 (head s))))
                                 (+ 1 (tail s))])
               [n 0])))
"""


def _collatz(n: int) -> int:
    steps = 0
    while n > 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def _buckets(n: int) -> int:
    return len({control.bucket(k, n) for k in range(1, n + 1)})


def test_bucket_sizes_are_few_and_waste_at_most_a_quarter():
    assert [control.bucket(k, 100) for k in range(1, 13)] == [1, 2, 3, 4, 5, 6, 7, 8, 10, 10, 12, 12]
    assert control.bucket(90, 100) == 96 and control.bucket(99, 100) == 100
    for k in range(1, 5000):
        assert k <= control.bucket(k, 5000) <= max(k, 1.25 * k)
    assert _buckets(10**6) <= 80


def test_a_while_over_a_frame_replays_for_new_data_without_tracing_the_form_again():
    count = remora.function(COLLATZ)
    first = np.arange(1, 201, dtype=np.int64)
    assert count(first).tolist() == [_collatz(int(n)) for n in first]
    before, parts = _stats(), control.STATS["traced"]
    assert count(first).tolist() == [_collatz(int(n)) for n in first]
    assert _delta(before) == {"traced": 0, "replayed": 1, "dynamic": 0, "missed": 0}
    assert control.STATS["traced"] == parts  # the same data: every part replayed
    rng = np.random.default_rng(7)
    for _ in range(6):  # other data, same shape: the plan replays, tracing only buckets not met yet
        data = rng.integers(1, 10_000, 200)
        assert count(data).tolist() == [_collatz(int(n)) for n in data]
    assert _delta(before) == {"traced": 0, "replayed": 7, "dynamic": 0, "missed": 0}
    assert control.STATS["traced"] - parts <= 2 * _buckets(200)  # (condition and step, per bucket)


def test_a_while_step_never_runs_on_a_stopped_cell():
    """The step divides by the state, which only running cells have non-zero: neither stopped
    cells nor the padding (copies of running cells) may be stepped."""
    down = remora.function("(λ ((x [Int])) (while (λ ((x [Int])) (!= x 0)) (λ ((x [Int])) (- x (/ x x))) x))")
    rng = np.random.default_rng(3)
    for _ in range(5):
        data = rng.integers(0, 40, 37)
        assert down(data).tolist() == [0] * 37


def _root(x: float) -> float:
    g = x
    while abs(g * g - x) > 1e-12 * x:
        g = (g + x / g) / 2.0
    return g


def test_a_while_capturing_per_cell_values_agrees_with_the_reference_engine():
    newton = """
    (define (root (x [Float]))
      (while (λ ((g [Float])) (> (abs (- (* g g) x)) (* 1e-12 x))) (λ ((g [Float])) (/ (+ g (/ x g)) 2.0)) x))
    """
    xs = [2.0, 9.0, 1e6, 0.25, 7.0, 1.0]
    assert eval_value(newton + f"(root [{' '.join(map(repr, xs))}])") == f"[{' '.join(repr(_root(x)) for x in xs)}]"
    rng = np.random.default_rng(5)
    values = rng.uniform(1.0, 1e4, 64)
    got = remora.evaluate(newton + "(root xs)", xs=values)
    before = _stats()
    other = rng.uniform(1e-3, 1e8, 64)  # (other iteration counts: the captured x restricted anew)
    again = remora.evaluate(newton + "(root xs)", xs=other)
    assert _delta(before) == {"traced": 0, "replayed": 1, "dynamic": 0, "missed": 0}
    assert again.tolist() == [_root(x) for x in other.tolist()]
    assert np.allclose(got, np.sqrt(values))


def test_a_scalar_while_is_planned_once_and_replayed_for_any_value():
    sqrt = remora.function("(λ ((x [Float])) (while (λ ((g [Float])) (> (abs (- (* g g) x)) (* 1e-12 x)))"
                           " (λ ((g [Float])) (/ (+ g (/ x g)) 2.0)) x))")
    assert abs(sqrt(np.float64(2.0)) - 2.0**0.5) < 1e-12
    before, parts = _stats(), control.STATS["traced"]
    for x in (3.0, 1e6, 0.5, 12345.678):
        assert abs(sqrt(np.float64(x)) - x**0.5) < 1e-9 * max(1.0, x**0.5)
    assert _delta(before) == {"traced": 0, "replayed": 4, "dynamic": 0, "missed": 0}
    assert control.STATS["traced"] == parts  # one bucket (one cell): condition and step traced once


SAFE = "(λ ((a [Int]) (b [Int])) (if (= b 0) 0 (/ a b)))"


def test_an_if_over_a_frame_replays_for_any_partition_and_stays_lazy():
    safe = remora.function(SAFE)
    rng = np.random.default_rng(11)
    a = rng.integers(-50, 50, 40)
    b = rng.integers(-2, 3, 40)
    expected = np.where(b == 0, 0, a // np.where(b == 0, 1, b))
    assert safe(a, b).tolist() == expected.tolist()
    before = _stats()
    for _ in range(8):  # other zero patterns: the untaken division never runs on a zero
        a = rng.integers(-50, 50, 40)
        b = rng.integers(-2, 3, 40)
        expected = np.where(b == 0, 0, a // np.where(b == 0, 1, b))
        assert safe(a, b).tolist() == expected.tolist()
    assert safe(a, np.zeros(40, dtype=np.int64)).tolist() == [0] * 40  # one branch only
    assert _delta(before) == {"traced": 0, "replayed": 9, "dynamic": 0, "missed": 0}


def test_an_untaken_out_of_range_branch_never_runs():
    pick = remora.function("(λ ((i [Int])) (if (< i 3) (index [10 20 30] i) -1))")
    for data in ([0, 5, 2, 9], [7, 8, 1, 0], [3, 3, 3, 3], [0, 1, 2, 2]):
        assert pick(np.array(data)).tolist() == [[10, 20, 30][i] if i < 3 else -1 for i in data]
    with pytest.raises(remora.RemoraRuntimeError):  # (taken, it is an error, replayed or not)
        remora.evaluate("((λ ((i [Int])) (if (< i 5) (index [10 20 30] i) -1)) [0 4 9])")


def test_recursion_under_if_replays_with_deeper_data():
    gcd = "(define (gcd (a [Int]) (b [Int])) : [Int] (if (= b 0) a (gcd b (mod a b))))\n(gcd a b)"
    rng = np.random.default_rng(2)
    before = _stats()
    for digits in (2, 5, 9, 15):
        a = rng.integers(0, 10**digits, 30)
        b = rng.integers(0, 10**digits, 30)
        assert remora.evaluate(gcd, a=a, b=b).tolist() == np.gcd(a, b).tolist()
    assert _delta(before) == {"traced": 1, "replayed": 3, "dynamic": 0, "missed": 0}


def test_errors_in_planned_parts_are_the_engines():
    source = "((λ ((a [Int]) (b [Int])) (if (> a 0) (/ a b) 0)) [5 -1 3 4] [1 0 0 2])"
    err = eval_error(source)
    assert "division by zero" in err.message
    for _ in range(2):  # traced, then replayed: the same located error
        with pytest.raises(remora.RemoraRuntimeError) as info:
            remora.evaluate(source)
        assert (info.value.message, info.value.line, info.value.column) == (err.message, err.line, err.column)


def test_if_and_while_nested_agree_with_the_reference_engine():
    source = """
    (define (halve-odd (x [Int]))
      (while (λ ((x [Int])) (> x 10))
             (λ ((x [Int])) (if (= 0 (mod x 2)) (/ x 2) (- x 1)))
             x))
    (halve-odd [1 100 37 12 999 10 11])
    """
    assert eval_value(source) == "[1 6 9 6 7 10 10]"


def _counting(monkeypatch, names: tuple) -> dict:
    """The NumPy backend's ``names`` counted (calls made from now on, by name)."""
    import inspect

    from remora.backends.numpy_backend import NumpyBackend

    counts = dict.fromkeys(names, 0)
    for name in names:
        raw = inspect.getattr_static(NumpyBackend, name)
        static = isinstance(raw, staticmethod)
        fn = raw.__func__ if static else raw

        def counted(*args, _fn=fn, _name=name, **kw):
            counts[_name] += 1
            return _fn(*args, **kw)

        monkeypatch.setattr(NumpyBackend, name, staticmethod(counted) if static else counted)
    return counts


def test_a_while_round_where_cells_stop_gathers_the_state_once(monkeypatch):
    """A round in which some cells stop takes the positions and the state once each (one index:
    running, padding, stopped), pads with a slice of one zeros array made once per ``while`` (not
    a new ``full`` per round), and writes the stopped cells out with one ``scatter``."""
    count = remora.function(COLLATZ)
    data = np.arange(1, 301, dtype=np.int64)
    expected = [_collatz(int(n)) for n in data]
    assert count(data).tolist() == expected  # traced: every bucket met
    counts = _counting(monkeypatch, ("take", "full", "scatter"))
    before = _stats()
    assert count(data).tolist() == expected
    assert _delta(before) == {"traced": 0, "replayed": 1, "dynamic": 0, "missed": 0}
    stop_rounds = len(set(expected))  # (a round where some cell stops: one per distinct count)
    assert counts["scatter"] == stop_rounds
    assert counts["take"] <= 3 * stop_rounds  # positions, state, padding (before: 4 and a full)
    assert counts["full"] <= 9  # (the zeros only grow, by powers of two: log₂ of the largest padding)


def test_a_while_site_part_is_simplified_like_a_plan():
    """Each bucket of a ``while``'s condition and step is compiled from its simplified recording:
    the engine's identity reshapes (one call per round each) are not in it."""
    from remora.plans import codegen

    texts: list[str] = []
    original = codegen.Source.text

    def text(self):
        made = original(self)
        texts.append(made)
        return made

    count = remora.function(COLLATZ)
    try:
        codegen.Source.text = text
        data = np.arange(1, 51, dtype=np.int64)
        assert count(data).tolist() == [_collatz(int(n)) for n in data]
    finally:
        codegen.Source.text = original
    parts = [t for t in texts if t.startswith("def bucket")]
    assert parts  # (Collatz's condition and step reshape nothing but to the shape they have)
    assert not [t for t in parts if "xp.reshape(" in t]
