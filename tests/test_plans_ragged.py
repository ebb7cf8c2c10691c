"""Plans of ragged work whose shapes follow from shapes alone (a triangle's rows): planned whole,
the mask found once, the trace's memory counted as what it keeps alive."""

from __future__ import annotations

import numpy as np

from remora.dynamics.runtime import RunConfig
from remora.erasure.erase import erase_form
from remora.interfaces.session import Session
from remora.plans import PLANS

TRIANGLE = """
(define (rows (a [Float N N]))
  ((λ ((row [Float N]) (i [Int])) (filter (<= (iota/w row) i) row)) a (positions a)))
(define (times (rows (Arr (Sigma ((k Dim)) (Arr Float (Shp k))) (Shp N))) (x [Float N]))
  (unbox (k r rows) (sum (* r (index x (iota/w r))))))
(times (rows mat) vec)
"""


def _triangle(n: int):
    """(the session, the erased main form, its value once evaluated, the NumPy value)"""
    rng = np.random.default_rng(n)
    mat, vec = rng.standard_normal((n, n)), rng.standard_normal(n)
    session = Session(run=RunConfig())
    session.bind("mat", mat)
    session.bind("vec", vec)
    *defs, main = session.check_text(TRIANGLE.replace("N", str(n)), "<test>")
    for form in defs:
        session.engine.eval_form(erase_form(form))
    form = erase_form(main)
    value = session.engine.eval_form(form)
    want = np.array([np.add.reduce(mat[i, : i + 1] * vec[: i + 1]) for i in range(n)])
    return session, form, value, want


def test_a_triangles_rows_are_selected_at_positions_found_once():
    """The rows' mask follows from the shapes: the plan gathers at its positions (no ``compress``
    finding them again each call, no guard on the count), and replays give the same atoms."""
    session, form, value, want = _triangle(150)
    assert value.tobytes() == want.tobytes()
    (plan,) = PLANS.plans(form)
    assert "gather" in plan.ir.ops() and "select_items" not in plan.ir.ops(), plan.ir.text()
    assert not any(e.shape_guard for e in plan.ir.eqns())
    before = PLANS.stats["replayed"]
    assert session.engine.eval_form(form).tobytes() == want.tobytes()
    assert PLANS.stats["replayed"] == before + 1


def test_a_broadcast_view_counts_as_the_array_it_views(monkeypatch):
    """The trace's byte budget counts what it keeps alive: ``x`` indexed by every item of a
    triangle is a broadcast view reporting (items × n) × 8 bytes (256 GB at n = 4000) that keeps
    one n-vector — the form is planned, not evaluated dynamically."""
    from remora.plans import trace

    monkeypatch.setattr(trace, "TRACE_BYTES", 2 << 20)  # the view reports 20100·200·8 = 32 MB
    before = dict(PLANS.stats)
    _, form, value, want = _triangle(200)
    assert value.tobytes() == want.tobytes()
    assert PLANS.stats["dynamic"] == before["dynamic"] and len(PLANS.plans(form)) == 1


SEGMENTED = """
(define (keep (m [Bool 16]) (row [Float 16])) (filter m row))
(unbox (n xs (keep mask data)) (sum xs))
"""


def test_new_lengths_with_the_same_number_of_survivors_replay_the_plan():
    """The boxes' lengths are data to a ragged sum: another pattern of lengths replays the plan
    (only the filter's count of survivors, which fixes the buffer's shape, is a guard)."""
    import remora

    rng = np.random.default_rng(3)
    data = rng.standard_normal((40, 16))
    lengths = rng.integers(1, 12, 40)
    others = lengths.copy()
    others[np.argmax(lengths)] += 1  # a length no box had
    others[np.argmin(lengths)] -= 1
    mask, other = (np.array([rng.permutation(16) < k for k in ks]) for ks in (lengths, others))
    assert set(mask.sum(1)) != set(other.sum(1)) and mask.sum() == other.sum()
    remora.evaluate(SEGMENTED, data=data, mask=mask)
    before = dict(PLANS.stats)
    got = remora.evaluate(SEGMENTED, data=data, mask=other)
    assert PLANS.stats["replayed"] == before["replayed"] + 1 and PLANS.stats["traced"] == before["traced"]
    want = np.array([np.add.reduce(row[m]) for row, m in zip(data, other)])
    assert got.tobytes() == want.tobytes()
