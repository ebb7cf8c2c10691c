""""Did you mean": suggested only for likely typos (remora.statics.spelling, spec/decisions.md D34)."""

from __future__ import annotations

import pytest
from conftest import check_error
from hypothesis import given
from hypothesis import strategies as st

from remora.interfaces.session import Session
from remora.primitives import PRIMITIVES
from remora.statics.spelling import did_you_mean, edit_distance


@pytest.mark.parametrize("name", ["print", "cond", "foo", "x"])
def test_no_suggestion_for_a_name_that_is_not_a_typo(name):
    # difflib once suggested `from-int` for `print`, `round` for `cond` (and `*` for `x`).
    assert check_error(f"({name} [1 2])").message == f"unbound variable `{name}`"


def test_take_is_not_a_typo_of_rotate():
    names = set(PRIMITIVES) | set(Session().checker.globals)
    assert "rotate" in names
    assert did_you_mean("take", names - {"take"}) is None


@pytest.mark.parametrize(
    "source,wanted",
    [
        ("(lenght [1 2])", "length"),  # two letters swapped
        ("(sume [1 2])", "sum"),  # one letter too many
        ("(define total 10)\n(+ totl 1)", "total"),  # one letter missing
        ("(revrese [1 2])", "reverse"),  # two edits in a long name
        ("(Iλ ((len Dim)) (λ ((x [Int lne])) x))", "len"),  # index variables too
        ("(Tλ ((elem Atom)) (λ ((x [elme])) x))", "elem"),  # and type variables
    ],
)
def test_a_suggestion_for_a_likely_typo(source, wanted):
    assert check_error(source).message.endswith(f"; did you mean `{wanted}`?")


def test_short_names_allow_one_edit_longer_ones_two():
    assert did_you_mean("mpa", ["map"]) == "map"
    assert did_you_mean("mop", ["map"]) == "map"
    assert did_you_mean("mo", ["map"]) is None  # two edits: too many for a short name
    assert did_you_mean("revrse", ["reverse"]) == "reverse"
    assert did_you_mean("ravarsa", ["reverse"]) is None  # three edits
    assert did_you_mean("xs", ["x", "ys"]) is None  # one edit, but from a two-letter name
    assert did_you_mean("sume", ["sum", "some", "same"]) == "same"  # ties: alphabetical


@pytest.mark.parametrize(
    "a,b,d", [("", "", 0), ("", "abc", 3), ("lenght", "length", 1), ("take", "rotate", 3), ("ca", "abc", 3), ("kitten", "sitting", 3)]
)
def test_edit_distance_examples(a, b, d):
    assert edit_distance(a, b) == d


words = st.text(alphabet="abc-", max_size=7)


@given(words, words)
def test_edit_distance_is_a_symmetric_bound(a, b):
    d = edit_distance(a, b)
    assert d == edit_distance(b, a)
    assert (d == 0) == (a == b)
    assert abs(len(a) - len(b)) <= d <= max(len(a), len(b))


@given(words, st.integers(min_value=0, max_value=6))
def test_one_swap_or_one_insertion_is_one_edit(a, i):
    if len(a) >= 2:
        i %= len(a) - 1
        swapped = a[:i] + a[i + 1] + a[i] + a[i + 2 :]
        assert edit_distance(a, swapped) == (0 if swapped == a else 1)
    assert edit_distance(a, a + "z") == 1
