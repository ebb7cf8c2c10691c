"""Type-checking speed: a generated program of many definitions, and the shipped examples.

``python -m bench check`` reports the time to check (parse + typecheck, no evaluation)
and how often z3 was consulted — canonical forms should settle every equality of a
well-typed program, so z3 is not even imported.
"""

from __future__ import annotations

import gc
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

TEMPLATES = [
    "(define v{i} (array (3) {i} {j} {k}))",
    "(define f{i} (λ ((x [Int 3]) (y [Int])) (+ x (* y v{p}))))",
    "(define g{i} (f{q} [[1 2 3] [4 5 6]] [7 8]))",
    "(define h{i} (Iλ ((n Dim)) (λ ((x (Arr Float (Shp n)))) (sqrt (sum (* x x))))))",
    "(define r{i} (reduce + (append [{i} {j}] [[1 2] [3 4]])))",
    "(define b{i} (unbox (len xs (iota/v {k})) (reduce + (append [0] xs))))",
    "(define s{i} ((t-app (i-app scan 3 (Shp) (Shp)) Int Int) + 0 [{i} {j} {k}]))",
    "(define m{i} (matmul [[1.0 2.0] [3.0 4.0]] [[{i}.0] [{j}.0]]))",
    "(define k{i} (h{u} [[1.0 2.0] [3.0 {k}.0]]))",
    "(define e{i} (rotate (reverse (iota/w [[1 2] [3 4]])) {j}))",
]


def generated_program(count: int) -> str:
    """``count`` definitions cycling through the templates (each refers to earlier ones)."""
    lines = []
    for i in range(count):
        template = TEMPLATES[i % len(TEMPLATES)]
        base = i - i % len(TEMPLATES)
        lines.append(
            template.format(i=i, j=i + 1, k=i % 7 + 1, p=base, q=base + 1, u=base + 3)
        )
    return "\n".join(lines) + "\n"


def many_dims_error(count: int) -> str:
    """An ill-typed λ over ``count`` (≤ 256) Dim variables: a vector of shape ``(Shp b0 …)`` passed
    where ``(Shp a0 …)`` is expected; the error's counterexample is a z3 question over all of them.
    Beyond rank 64 each dimension is a sum of two variables."""
    half = count // 2

    def dims(p: str) -> str:
        if half <= 64:
            return " ".join(f"{p}{i}" for i in range(half))
        return " ".join(f"(+ {p}{2 * i} {p}{2 * i + 1})" for i in range(half // 2))

    binders = " ".join(f"({p}{i} Dim)" for p in "ab" for i in range(half))
    a, b = dims("a"), dims("b")
    return f"(Iλ ({binders}) (λ ((x (Arr Int (Shp {a}))) (y (Arr Int (Shp {b})))) ((λ ((z (Arr Int (Shp {a})))) z) y)))\n"


def time_error(text: str) -> float:
    """Seconds to check ``text`` up to its (expected) type error."""
    from remora.interfaces.session import Session
    from remora.errors import RemoraTypeError

    session = Session()
    start = time.perf_counter()
    try:
        session.check_text(text, "<ill-typed>")
    except RemoraTypeError:
        return time.perf_counter() - start
    raise AssertionError("the program was expected to be ill-typed")


def time_check(text: str, name: str, prelude: bool = True, inputs: tuple = ()) -> float:
    """Seconds to check ``text``, its NAME=PATH ``inputs`` bound first (not timed), as
    ``remora check FILE NAME=PATH`` does."""
    from remora.interfaces.cli import _bind_inputs
    from remora.interfaces.session import Session

    session = Session(prelude=prelude)
    _bind_inputs(session, list(inputs))
    gc.disable()
    try:
        start = time.perf_counter()
        session.check_text(text, name)
        return time.perf_counter() - start
    finally:
        gc.enable()


def time_phases(text: str, name: str) -> dict[str, float]:
    """Seconds to read, to parse and to type-check ``text`` (each the best of 3 runs)."""
    from remora.front.parse import parse_top
    from remora.front.reader import read
    from remora.interfaces.session import Session

    best = {"reading": float("inf"), "parsing": float("inf"), "checking": float("inf")}
    for _ in range(3):
        session = Session()
        gc.disable()
        try:
            start = time.perf_counter()
            nodes = read(text, name)
            read_done = time.perf_counter()
            forms = [parse_top(n) for n in nodes]
            parse_done = time.perf_counter()
            for form in forms:
                session.check_form(form)
            check_done = time.perf_counter()
        finally:
            gc.enable()
        for phase, seconds in (("reading", read_done - start), ("parsing", parse_done - read_done),
                               ("checking", check_done - parse_done)):
            best[phase] = min(best[phase], seconds)
    return best


def example_inputs(path: Path) -> tuple:
    """The NAME=PATH inputs an example reads (its ``.args`` file, paths from the repository's
    root): an example over a data file is checked with the file's type, as its ``Run:`` line says."""
    args = path.with_suffix(".args")
    if not args.exists():
        return ()
    return tuple((name, str(ROOT / file)) for name, _, file in
                 (word.partition("=") for word in args.read_text(encoding="utf-8").split()))


def examples_check_time(examples: list[Path], repeat: int = 3) -> float:
    """Seconds to check every example (each the best of ``repeat`` checks)."""
    return sum(min(time_check(path.read_text(encoding="utf-8"), str(path), inputs=example_inputs(path))
                   for _ in range(repeat)) for path in examples)


def main(argv: list[str]) -> int:
    from remora.statics import smt
    from remora.interfaces import prelude_cache
    from remora.interfaces.session import _check_prelude, load_prelude, prelude_from_cache

    count = int(argv[0]) if argv else 1000
    start = time.perf_counter()
    load_prelude()
    prelude_time = time.perf_counter() - start
    texts = [(path.name, path.read_text(encoding="utf-8")) for path in prelude_cache.prelude_files()]
    start = time.perf_counter()
    _check_prelude(texts)
    prelude_check = time.perf_counter() - start
    program = generated_program(count)
    best = min(time_check(program, "<generated>") for _ in range(3))
    print(f"prelude: {prelude_time * 1000:.0f} ms to load ({'from the cache' if prelude_from_cache() else 'checked'}; "
          f"{prelude_check * 1000:.0f} ms to check)")
    print(f"generated program, {count} definitions: {best:.3f} s to check "
          f"({best / count * 1e6:.0f} µs per definition)")
    phases = time_phases(program, "<generated>")
    print("  of which " + ", ".join(f"{phase} {seconds * 1000:.0f} ms" for phase, seconds in phases.items()))
    examples = sorted((ROOT / "examples").glob("*.rem"))
    print(f"all {len(examples)} examples: {examples_check_time(examples):.3f} s to check")
    for count in (120, 200):
        print(f"ill-typed λ over {count} Dim variables: {time_error(many_dims_error(count)):.3f} s to report")
    print(f"z3 imported: {'z3' in sys.modules}; z3 queries: {smt.stats.queries}")
    return 0
