"""z3 is imported only to explain a false index question (remora.statics.smt): well-typed programs never load it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap

from conftest import check_error, subprocess_env

ENV = subprocess_env()

WELL_TYPED = r"""
(define mtx (array (3 2) 0 1 2 3 4 5))
((t-app (i-app head 2 (Shp 2)) Num) mtx)
((t-app (i-app head 1 (Shp)) Num) mtx)
(+ [[1 2 3] [4 5 6]] [10 20])
(define (f (x [Int 3])) (+ x 1))
(f [[1 2 3] [4 5 6]])
(Iλ ((n Dim) (s Shape)) (λ ((x (Arr Int (++ (Shp n) s))) (y (Arr Int (Shp n)))) (+ x y)))
(Iλ ((n Dim)) (λ ((x (Arr Int (Shp (+ n n))))) ((λ ((y (Arr Int (Shp (+ n 0 n))))) y) x)))
(unbox (n x (iota/v 5)) ((t-app (i-app length n (Shp)) Int) x))
(λ ((n (Arr Num (Shp))))
  (unbox (len nums (iota/v n))
    ((t-app (i-app reduce len (Shp)) Num)
     +
     ((t-app (i-app append 1 len (Shp)) Num) (array (1) 0) nums))))
((t-app (i-app reduce 2 (Shp)) Float) + [1.0 2.0 3.0])
(box 3 (array (3 3) 0 1 2 3 4 5 6 7 8) (Sigma ((n Dim)) (Arr Int (Shp n 3))))
"""

# Ill-typed, but with no index variables: nothing for z3 to explain.
ILL_TYPED_CONCRETE = ["(+ [1 2 3] [4 5])", "((λ ((x [Int 2])) x) [1 2 3])", "(box 2 [1 2 3] (Sigma ((n Dim)) (Arr Int (Shp n))))"]

ILL_TYPED_SYMBOLIC = "(Iλ ((n Dim)) (λ ((x (Arr Int (Shp n 3)))) ((λ ((y (Arr Int (Shp 3 n)))) y) x)))"

SCRIPT = textwrap.dedent(
    """
    import json, sys
    from remora.interfaces.session import Session
    from remora.errors import RemoraError
    from remora.statics import smt
    from remora.statics.typed import form_type

    report = {}
    types = [str(form_type(f)) for f in Session().check_text(sys.argv[1], "<well-typed>")]
    report["forms"] = len(types)
    report["after_well_typed"] = "z3" in sys.modules or smt.z3_loaded()
    for source in json.loads(sys.argv[2]):
        try:
            Session().check_text(source, "<concrete>")
            report.setdefault("unexpectedly_ok", []).append(source)
        except RemoraError:
            pass
    report["after_concrete_errors"] = "z3" in sys.modules or smt.z3_loaded()
    try:
        Session().check_text(sys.argv[3], "<symbolic>")
        report["symbolic"] = None
    except RemoraError as err:
        report["symbolic"] = err.message
    report["after_symbolic_error"] = "z3" in sys.modules
    print(json.dumps(report))
    """
)


def run_script():
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, WELL_TYPED, json.dumps(ILL_TYPED_CONCRETE), ILL_TYPED_SYMBOLIC],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_z3_is_imported_only_when_a_counterexample_is_needed():
    report = run_script()
    assert report["forms"] == 12
    assert report["after_well_typed"] is False, "checking a well-typed program imported z3"
    assert "unexpectedly_ok" not in report
    assert report["after_concrete_errors"] is False, "an error without index variables imported z3"
    assert report["symbolic"] is not None
    assert re.search(r"when n = \d+", report["symbolic"]), report["symbolic"]
    assert report["after_symbolic_error"] is True


def test_counterexample_message_in_process():
    err = check_error(ILL_TYPED_SYMBOLIC)
    assert (err.line, err.column) == (1, 77)
    m = re.search(r"when n = (\d+)", err.message)
    assert m, err.message
    # (Shp 3 n) is a suffix of (Shp n 3) only when n = 3: the assignment must be another value.
    assert int(m.group(1)) != 3


def test_counterexample_for_incompatible_shape_variables():
    err = check_error("(Iλ ((s Shape) (t Shape)) (λ ((x (Arr Int s)) (y (Arr Int t))) (+ x y)))")
    m = re.search(r"when s = \(Shp([ \d]*)\), t = \(Shp([ \d]*)\)", err.message)
    assert m, err.message
    s = tuple(int(v) for v in m.group(1).split())
    t = tuple(int(v) for v in m.group(2).split())
    assert s[: len(t)] != t and t[: len(s)] != s
