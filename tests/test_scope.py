"""Lexical scope of top-level definitions, sequential `let` at scale, and `:trace` in the REPL.

Contract §1: `(define x e)` binds `x` *for the rest of the file* — the forms after it, and only
those.  A reference means the binding the checker found in force where it is written; a later
definition of the same name (a user's `sum`, a redefinition of `f` in terms of the old `f`) is a
new binding and changes nothing already written — not the prelude's functions, not the user's
earlier functions.  Each case runs on both engines (conftest.eval_values), through the command
line, the REPL and the Python API.
"""

from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT, check_types, eval_values, run_program, subprocess_env

import remora
from remora.interfaces.session import Session
from remora.erasure.erase import erase_form
from remora.erasure.erased import show_erased
from remora.dynamics.reference import Reference
from remora.interfaces.repl import Repl
from remora.dynamics.runtime import RunConfig

# (program, printed types of its forms, printed values of its expressions)
SCOPE_CASES = {
    # the first program: g keeps the a it was checked against
    "redefined_global": (
        "(define a 1)\n(define (g (x [Int])) (+ x a))\n(define a 2.5)\n(g 1)\na",
        ["(Arr Int (Shp))", "(Arr (-> ((Arr Int (Shp))) (Arr Int (Shp))) (Shp))", "(Arr Float (Shp))",
         "(Arr Int (Shp))", "(Arr Float (Shp))"],
        ["2", "2.5"],
    ),
    # a user's `sum` (a value) does not reach the prelude's mean and count
    "sum_shadowed_by_value": (
        "(define sum 5)\n(mean [1.0 2.0 4.5])\n(count [#t #f #t])\nsum",
        ["(Arr Int (Shp))", "(Arr Float (Shp))", "(Arr Int (Shp))", "(Arr Int (Shp))"],
        ["2.5", "2", "5"],
    ),
    # ... nor does a user's `sum` function
    "sum_shadowed_by_function": (
        "(define (sum (xs [Int 3])) 100)\n(count [#t #f #t])\n(mean [1.0 3.0])\n(sum [1 2 3])",
        ["(Arr (-> ((Arr Int (Shp 3))) (Arr Int (Shp))) (Shp))", "(Arr Int (Shp))", "(Arr Float (Shp))",
         "(Arr Int (Shp))"],
        ["2", "2.0", "100"],
    ),
    # a user's `dot` does not reach the prelude's matmul
    "dot_shadowed": (
        "(define (dot (a [Int 2]) (b [Int 2])) 0)\n(matmul [[1 2] [3 4]] [[5 6] [7 8]])\n(dot [1 2] [3 4])",
        ["(Arr (-> ((Arr Int (Shp 2)) (Arr Int (Shp 2))) (Arr Int (Shp))) (Shp))", "(Arr Int (Shp 2 2))",
         "(Arr Int (Shp))"],
        ["[[19 22] [43 50]]", "0"],
    ),
    # nor a user's `max` (a primitive's name) the prelude's maximum
    "primitive_name_shadowed": (
        "(define (max (a [Int]) (b [Int])) 0)\n(maximum [1 5 3])\n(max 1 2)",
        ["(Arr (-> ((Arr Int (Shp)) (Arr Int (Shp))) (Arr Int (Shp))) (Shp))", "(Arr Int (Shp))",
         "(Arr Int (Shp))"],
        ["5", "0"],
    ),
    # f redefined in terms of the previous f (it used to loop until the depth guard)
    "function_in_terms_of_previous": (
        "(define (f (x [Int])) (+ x 1))\n(define (f (x [Int])) (* 2 (f x)))\n(f 3)\n"
        "(define f (λ ((x [Int])) (+ (f x) (f x))))\n(f 3)",
        ["(Arr (-> ((Arr Int (Shp))) (Arr Int (Shp))) (Shp))"] * 2 + ["(Arr Int (Shp))"]
        + ["(Arr (-> ((Arr Int (Shp))) (Arr Int (Shp))) (Shp))", "(Arr Int (Shp))"],
        ["8", "16"],
    ),
    "value_in_terms_of_previous": (
        "(define x 1)\n(define x (+ x 1))\n(define x [x x])\nx",
        ["(Arr Int (Shp))", "(Arr Int (Shp))", "(Arr Int (Shp 2))", "(Arr Int (Shp 2))"],
        ["[2 2]"],
    ),
    "polymorphic_in_terms_of_previous": (
        "(define g (Iλ ((n Dim)) (λ ((v [Int n])) v)))\n"
        "(define g (Iλ ((n Dim)) (λ ((v [Int n])) (+ 1 (g v)))))\n(g [1 2])",
        ["(Arr (Pi ((n Dim)) (Arr (-> ((Arr Int (Shp n))) (Arr Int (Shp n))) (Shp))) (Shp))"] * 2
        + ["(Arr Int (Shp 2))"],
        ["[2 3]"],
    ),
    # closures in a frame keep the global they captured
    "frame_of_closures": (
        "(define k 10)\n(define adders [(λ ((x [Int])) (+ x k)) (λ ((x [Int])) (* x k))])\n(define k 0)\n"
        "(adders 2)",
        ["(Arr Int (Shp))", "(Arr (-> ((Arr Int (Shp))) (Arr Int (Shp))) (Shp 2))", "(Arr Int (Shp))",
         "(Arr Int (Shp 2))"],
        ["[12 20]"],
    ),
}


@pytest.mark.parametrize("name", sorted(SCOPE_CASES))
def test_definitions_are_lexically_scoped(name):
    source, types, values = SCOPE_CASES[name]
    assert check_types(source) == types
    assert eval_values(source) == values  # (both engines, checked to agree)


def _cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "remora", *args], input=stdin, capture_output=True, text=True,
                          cwd=ROOT, env=subprocess_env(), timeout=120)


CLI_PROGRAM = "\n".join(SCOPE_CASES[n][0] for n in ("redefined_global", "function_in_terms_of_previous"))


@pytest.mark.parametrize("engine", ["frames", "reference"])
def test_cli_eval_lexical_scope(tmp_path, engine):
    path = tmp_path / "scope.rem"
    path.write_text(CLI_PROGRAM + "\n(define sum 5)\n(mean [1.0 2.0])\n(define (dot (a [Int 2]) (b [Int 2])) 0)\n"
                    "(matmul [[1 2] [3 4]] [[1 0] [0 1]])\n", encoding="utf-8")
    r = _cli("eval", f"--engine={engine}", str(path))
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout.splitlines() == ["2", "2.5", "8", "16", "1.5", "[[1 2] [3 4]]"]


def test_cli_check_reports_the_binding_in_force(tmp_path):
    path = tmp_path / "scope.rem"
    path.write_text(SCOPE_CASES["redefined_global"][0], encoding="utf-8")
    r = _cli("check", str(path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[3:] == ["(Arr Int (Shp))", "(Arr Float (Shp))"]


def test_explicit_output_reads_back_with_the_same_meaning():
    """`check --explicit` prints source names; read back in order they denote the same bindings."""
    session = Session()
    source = SCOPE_CASES["function_in_terms_of_previous"][0] + "\n(define sum 5)\n(mean [1.0 2.0])"
    from remora.statics.typed import show_form

    explicit = "\n".join(show_form(f) for f in session.check_text(source, "<test>"))
    assert eval_values(explicit) == eval_values(source) == ["8", "16", "1.5"]


# ---------------------------------------------------------------------------
# The REPL


def repl(text: str, status: int = 0) -> tuple[str, str]:
    """A piped REPL session (no terminal: values on stdout, errors on stderr); its exit status
    is 1 when some input failed."""
    out, err = io.StringIO(), io.StringIO()
    assert Repl(io.StringIO(text), out, err, interactive=False).run() == status, err.getvalue()
    return out.getvalue(), err.getvalue()


TRACE_RULES = ("lift", "map", "δ", "β", "iβ", "collapse", "unbox")


def _values(out: str) -> list[str]:
    """The printed values among the lines of a :trace session's output."""
    return [line for line in out.splitlines() if line.split()[0] not in TRACE_RULES]


def test_repl_redefinition_at_the_prompt():
    out, err = repl("(define a 1)\n(define (g (x [Int])) (+ x a))\n(define a 2.5)\n(g 1)\na\n"
                    "(define (g (x [Int])) (* 10 (g x)))\n(g 1)\n(define sum 5)\n(mean [1.0 2.0])\n")
    assert err == ""
    assert out.splitlines() == ["2", "2.5", "20", "1.5"]


def test_repl_failed_redefinition_leaves_the_old_one():
    out, err = repl(
        "(define (f (x [Int])) (+ x 1))\n"
        "(define f (/ 1 0))\n"  # fails at run time
        "(f 1)\n"
        "(define (f (x [Int])) (+ (f x) 2.5))\n"  # fails to check
        "(f 1)\n"
        ":type f\n"
        "(define (f (x [Int])) (* 3 (f x)))\n"  # succeeds, in terms of the old f
        "(f 1)\n",
        status=1,
    )
    assert out.splitlines() == ["2", "2", "(Arr (-> ((Arr Int (Shp))) (Arr Int (Shp))) (Shp))", "6"]
    errors = [line.split(": error: ")[1] for line in err.splitlines() if ": error: " in line]
    assert len(errors) == 2
    assert errors[0].startswith("Int division by zero")
    assert errors[1].startswith("argument 2 of `+` has atom type Float")


def test_repl_load_keeps_only_what_ran(tmp_path):
    path = tmp_path / "prog.rem"
    path.write_text("(define a 2.5)\n(define b (/ 1 0))\n(define a 7)\n", encoding="utf-8")
    out, err = repl(f"(define a 1)\n:load {path}\na\n:type a\n", status=1)
    assert out.splitlines() == ["2.5", "(Arr Float (Shp))"]
    assert err.count(": error: ") == 1


def test_repl_trace_sees_the_prelude():
    out, err = repl(":trace (sum [1 2 3])\n(+ 1 1)\n")
    assert err == ""
    assert _values(out) == ["6", "2"]  # the session goes on
    assert any(line.startswith("δ") and "total" in line for line in out.splitlines())


def test_repl_trace_sees_session_definitions_and_shadowing():
    out, err = repl(
        "(define sum 5)\n"
        "(define h (let ((c 10)) (λ ((x [Int])) (+ x (+ c sum)))))\n"
        "(define b (iota/v 3))\n"
        ":trace (mean [1.0 2.0])\n"
        ":trace (h [1 2])\n"
        ":trace (unbox (n v b) (+ sum (reduce + (append [0] v))))\n"
    )
    assert err == ""
    assert _values(out) == ["1.5", "[16 17]", "8"]


def test_repl_trace_error_is_reported_and_the_session_goes_on():
    out, err = repl(":trace (/ 1 0)\n:trace (+ 1 2.5)\n:trace undefined-name\n(+ 1 1)\n", status=1)
    assert out.splitlines()[-1] == "2"
    assert err.count(": error: ") == 3
    assert "Traceback" not in err


def test_repl_trace_on_a_reference_session():
    """A session already on the reference engine traces with its own values."""
    session = Session(engine="reference")
    for form in session.check_text("(define (f (x [Int])) (+ x 1))\n(define (f (x [Int])) (* 2 (f x)))", "<t>"):
        session.evaluate(form)
    trace = io.StringIO()
    [typed] = session.check_text("(f 3)", "<t>")
    assert session.tracer(trace).eval_form(erase_form(typed)) == 8
    assert "β" in trace.getvalue()


# ---------------------------------------------------------------------------
# The Python API: inputs and remora.function


def test_api_input_named_like_a_prelude_function():
    assert remora.evaluate("(mean [1.0 2.0 4.5])", sum=5) == 2.5
    assert remora.evaluate("(+ sum (count [#t #t #f]))", sum=5) == 7
    assert remora.evaluate("(matmul m m)", dot=1, m=np.eye(2, dtype=np.int64)).tolist() == [[1, 0], [0, 1]]
    assert str(remora.check("(mean [1.0 2.0])", sum=5)) == "(Arr Float (Shp))"
    assert str(remora.check("sum", sum=5)) == "(Arr Int (Shp))"


def test_api_program_redefines_its_input():
    assert remora.evaluate("(define x (+ x 1))\n(define x (* x 10))\nx", x=1) == 20


def test_api_inputs_of_another_signature_are_other_bindings():
    source = "(define (f (v [Int 2])) (+ v sum))\n(f [1 2])"
    assert remora.evaluate(source, sum=10).tolist() == [11, 12]
    assert remora.evaluate(source, sum=np.array([1, 2])).tolist() == [2, 4]
    assert remora.evaluate(source, sum=20).tolist() == [21, 22]  # (checked once, run again)


def test_function_whose_source_redefines_prelude_names():
    f = remora.function("(define sum 7)\n(λ ((a [Float 3])) (+ (mean a) (int->float sum)))")
    assert f(np.array([1.0, 2.0, 3.0])) == 9.0
    assert f(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).tolist() == [9.0, 12.0]
    g = remora.function("(define (dot (a [Int 2]) (b [Int 2])) 0)\n(define (mm (a [Int 2 2])) (matmul a a))\nmm")
    assert g(np.array([[1, 2], [3, 4]])).tolist() == [[7, 10], [15, 22]]


def test_function_redefined_in_terms_of_previous():
    f = remora.function("(define (f (x [Int])) (+ x 1))\n(define (f (x [Int])) (* 2 (f x)))")
    assert f(3) == 8
    assert f(np.array([1, 2])).tolist() == [4, 6]


def test_session_bind_is_a_new_binding():
    session = Session()
    key = session.bind("sum", np.array(5))
    forms = session.check_text("(mean [1.0 3.0])\n(+ sum 1)", "<t>")
    assert [int(session.evaluate(f)) for f in forms] == [2, 6]
    again = session.bind("sum", np.array([1.5, 2.5]))
    assert again != key
    [form] = session.check_text("(+ sum 1.0)", "<t>")
    assert session.evaluate(form).tolist() == [2.5, 3.5]


# ---------------------------------------------------------------------------
# let: sequential bindings, linear in their number


def test_let_closures_keep_the_binding_they_saw():
    """A closure made by a binding sees the bindings before it, not a later one of the same name."""
    assert eval_values("(let ((x 1) (f (λ ((y [Int])) (+ x y))) (x 100)) (f x))") == ["101"]
    assert eval_values("(let ((x 1) (x [x x]) (x (+ x 1))) x)") == ["[2 2]"]
    assert eval_values("((λ ((v [Int])) (let ((w (* v 2)) (g (λ ((z [Int])) (+ z (+ w v))))) (g 1))) [1 2 3])") == [
        "[4 7 10]"]


def test_let_of_boxes_and_inside_unbox():
    assert eval_values("(let ((b (iota/v [2 3]))) (unbox (n v b) (sum v)))") == ["[1 3]"]
    assert eval_values("(unbox (n v (iota/v [2 3])) (let ((w (+ v 1)) (s (sum w))) (* s 2)))") == ["[6 12]"]


def test_let_erases_to_one_sequential_form_and_traces_a_beta_per_binding():
    [typed] = Session().check_text("(let ((x 1) (y (+ x 1))) (+ x y))", "<t>")
    erased = erase_form(typed)
    assert show_erased(erased) == (
        "(let ((x (array () 1)) (y ((array () +) (x (Shp)) ((array () 1) (Shp)) (Shp)))) "
        "((array () +) (x (Shp)) (y (Shp)) (Shp)))"
    )
    trace = io.StringIO()
    assert Reference(RunConfig(trace=trace)).eval_form(erased) == 3
    assert [line.split()[0:3] for line in trace.getvalue().splitlines() if line.startswith("β")] == [
        ["β", "λ", "(x)"], ["β", "λ", "(y)"]]


def _long_let(n: int) -> str:
    """n sequential bindings; now and then a primitive, a prelude function, an unbox, a closure."""
    parts = ["(x0 0)"]
    for i in range(1, n):
        if i % 1000 == 1:
            value = f"(unbox (k v (iota/v 3)) (+ x{i - 1} (sum v)))"  # +3
        elif i % 1000 == 2:
            value = f"((λ ((y [Int])) (+ y x{i - 1})) 0)"  # +0, a closure over the let
        elif i % 100 == 0:
            value = f"(+ x{i - 1} 1)"  # +1
        else:
            value = f"x{i - 1}"
        parts.append(f"(x{i} {value})")
    return "(let (" + "\n".join(parts) + f") x{n - 1})"


def _long_let_value(n: int) -> int:
    return sum(3 if i % 1000 == 1 else 1 if i % 100 == 0 and i % 1000 not in (1, 2) else 0 for i in range(1, n))


def test_let_of_a_thousand_bindings_through_the_api():
    """It used to be a RecursionError: erasure and evaluation nested one level per binding."""
    assert remora.evaluate(_long_let(1000)) == _long_let_value(1000)
    assert int(run_program(_long_let(1000), "reference")[0][1]) == _long_let_value(1000)


def test_let_of_a_hundred_thousand_bindings_checks_and_runs():
    """Linear in the number of bindings (it took minutes and gigabytes): checked, erased and run
    on both engines.  (Correctness is asserted, not time.)"""
    n = 100_000
    session = Session()
    [typed] = session.check_text(_long_let(n), "<let>")
    erased = erase_form(typed)
    assert session.engine.eval_form(erased) == _long_let_value(n)
    assert Session(engine="reference").engine.eval_form(erased) == _long_let_value(n)
