"""remora.records: record classes mean what ``dataclasses.dataclass`` classes mean (the syntax,
type, typed and erased trees are records), and cost nothing at import."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import threading

import pytest

from remora.records import factory, record, replace


@record(frozen=True)
class Point:
    x: int
    y: int = 0
    tags: tuple = ()


@record(eq=False)
class Node:
    """Compared by identity, like the tree nodes."""

    kind: str
    children: list = factory(list)


@record(eq=False)
class Leaf(Node):
    value: int = 7


@record
class Box:
    items: list = factory(list)


@dataclasses.dataclass(frozen=True)
class DataPoint:
    x: int
    y: int = 0
    tags: tuple = ()


def test_init_takes_fields_in_order_with_defaults_and_keywords():
    assert (Point(1).x, Point(1).y, Point(1, 2).y, Point(1, tags=(3,)).tags) == (1, 0, 2, (3,))
    with pytest.raises(TypeError):
        Point()
    with pytest.raises(TypeError):
        Point(1, 2, (), 4)
    leaf = Leaf("leaf", [], 3)
    assert (leaf.kind, leaf.children, leaf.value) == ("leaf", [], 3)
    assert Leaf.__match_args__ == ("kind", "children", "value")


def test_default_factories_make_a_fresh_value_per_instance():
    a, b = Box(), Box()
    a.items.append(1)
    assert b.items == [] and Box([5]).items == [5]
    assert "items" not in Box.__dict__  # (no shared class attribute holding the factory)


def test_frozen_records_compare_and_hash_by_value_like_dataclasses():
    assert Point(1, 2) == Point(1, 2) and Point(1, 2) != Point(2, 1)
    assert hash(Point(1, 2, (3,))) == hash(Point(1, 2, (3,)))
    assert len({Point(1), Point(1), Point(2)}) == 2
    assert Point(1) != DataPoint(1)  # (another class is never equal)
    assert repr(Point(1, 2)) == "Point(x=1, y=2, tags=())" == repr(DataPoint(1, 2)).replace("DataPoint", "Point")


def test_eq_false_records_are_compared_by_identity_and_mutable():
    a, b = Node("n"), Node("n")
    assert a != b and a == a and len({a, b}) == 2
    a.kind = "m"
    assert a.kind == "m"


def test_eq_records_that_are_not_frozen_are_unhashable_as_with_dataclasses():
    assert Box([1]) == Box([1])
    with pytest.raises(TypeError):
        hash(Box())


def test_replace_copy_and_pickle():
    p = Point(1, 2, (3,))
    assert replace(p, y=5) == Point(1, 5, (3,))
    assert copy.copy(p) == p and copy.deepcopy(p) == p
    for obj in (p, Leaf("leaf", [Node("n")], 1)):
        back = pickle.loads(pickle.dumps(obj))
        assert type(back) is type(obj) and repr(back) == repr(obj)
    assert hash(pickle.loads(pickle.dumps(p))) == hash(p)


def test_methods_are_compiled_on_first_use_only():
    @record(frozen=True)
    class Late:
        a: int

    assert Late.__dict__["__init__"].__qualname__ == "__init__"  # a stand-in
    revived = Late.__new__(Late)  # (as unpickling makes it: no __init__ runs)
    revived.a = 1
    assert hash(revived) == hash((1,))  # the stand-in for __hash__ compiles the methods
    assert Late.__dict__["__hash__"].__qualname__.endswith("Late.__hash__")
    assert revived == Late(1)
    assert Late.__dict__["__init__"].__qualname__.endswith("Late.__init__")


def test_threads_compiling_at_once_agree():
    @record(frozen=True)
    class Shared:
        a: int
        b: int = 1

    results, start = [], threading.Barrier(8)

    def make(i):
        start.wait()
        results.append(Shared(i) == Shared(i, 1))

    threads = [threading.Thread(target=make, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [True] * 8
