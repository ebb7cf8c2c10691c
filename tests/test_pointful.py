"""The pointful `for` (contract §12): its type, its values on both engines, its elaboration
(`check --explicit`), its errors located at the binding, and the editor's view of it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from remora.errors import RemoraSyntaxError, RemoraTypeError
from remora.interfaces.document import Document
from remora.interfaces.scopes import resolve
from remora.interfaces.session import Session

from conftest import check_error, check_type, check_types, eval_value, subprocess_env

A = "(define a [[1 2] [3 4] [5 6]])\n(define b [[1 0 2] [0 1 3]])\n"


def test_one_index_is_the_iota_frame():
    assert check_type("(for ((i 4)) i)") == "(Arr Int (Shp 4))"
    assert eval_value("(for ((i 4)) (* i i))") == "[0 1 4 9]"


def test_several_indices_nest_first_outermost():
    assert check_type("(for ((i 2) (j 3)) (+ (* 10 i) j))") == "(Arr Int (Shp 2 3))"
    assert eval_value("(for ((i 2) (j 3)) (+ (* 10 i) j))") == "[[0 1 2] [10 11 12]]"


def test_nested_for_and_the_body_cell_shape_follows_the_frame():
    assert check_type("(for ((i 2)) (for ((j 3)) [i j]))") == "(Arr Int (Shp 2 3 2))"
    assert eval_value("(for ((i 2)) (for ((j 3)) [i j]))") == "[[[0 0] [0 1] [0 2]] [[1 0] [1 1] [1 2]]]"
    assert check_type("(for ((i 2)) [1.5 2.5])") == "(Arr Float (Shp 2 2))"


def test_the_pointful_matrix_product():
    source = A + "(for ((i 3) (j 3)) (sum (for ((k 2)) (* (index (index a i) k) (index (index b k) j)))))"
    assert check_types(source)[-1] == "(Arr Int (Shp 3 3))"
    assert eval_value(source) == eval_value(A + "(matmul a b)") == "[[1 2 8] [3 4 18] [5 6 28]]"


def test_a_range_from_a_pi_is_an_index_variable_in_scope():
    source = ("(define rev (Iλ ((n Dim)) (λ ((x [Int n])) (for ((i n)) (index x (- (- (length x) 1) i))))))\n"
              "(rev [5 6 7])\n")
    assert check_types(source)[0] == "(Arr (Pi ((n Dim)) (Arr (-> ((Arr Int (Shp n))) (Arr Int (Shp n))) (Shp))) (Shp))"
    assert eval_value(source) == "[7 6 5]"


def test_a_range_sum_of_index_variables():
    source = "(define f (Iλ ((m Dim) (n Dim)) (λ ((x [Int m]) (y [Int n])) (for ((i (+ m n 1))) i))))\n(f [1 2] [3])"
    assert check_type(source) == "(Arr Int (Shp 4))"
    assert eval_value(source) == "[0 1 2 3]"


def test_a_for_index_shadows_and_is_shadowed_as_a_lambda_parameter():
    assert eval_value("(define i 100)\n(for ((i 3)) (+ i 1))") == "[1 2 3]"
    assert eval_value("(for ((i 2)) ((λ ((i [Int])) (* i 10)) 7))") == "[70 70]"


def test_a_program_named_iota_s_does_not_capture_the_elaboration():
    assert eval_value("(define iota/s 5)\n(for ((i 3)) i)") == "[0 1 2]"


def test_an_empty_range_is_an_empty_array_of_the_body_type():
    assert eval_value("(for ((i 0)) [1.5 2.0])") == "(array (0 2) Float)"


def test_explicit_prints_the_elaboration():
    out = subprocess.run([sys.executable, "-m", "remora", "check", "--explicit", "-e", "(for ((i 3) (j 2)) (+ i j))"],
                         capture_output=True, text=True, env=subprocess_env(), check=True).stdout
    assert out.strip() == ("((λ ((i (Arr Int (Shp)))) ((λ ((j (Arr Int (Shp)))) (+ i j)) ((i-app iota/s (Shp 2))))) "
                           "((i-app iota/s (Shp 3))))")


# --- errors, located at the binding -------------------------------------------------------


def _at(err, col: int, line: int = 1) -> None:
    assert (err.span.line, err.span.col) == (line, col), (err.span, err.message)


def test_an_unbound_range_is_located_at_it():
    err = check_error("(for ((i m)) i)", RemoraTypeError)
    assert "unbound index variable `m`" in err.message
    _at(err, 10)


def test_a_shape_range_is_located_at_it():
    err = check_error("(define f (Iλ ((s Shape)) (λ ((x [Int s])) (for ((i s)) i))))", RemoraTypeError)
    assert "the range of `i` must be a Dim index, but `s` is a Shape" in err.message
    _at(err, 53)
    err = check_error("(for ((i 2) (j (Shp 3))) i)", RemoraTypeError)
    assert "the range of `j` must be a Dim index" in err.message
    _at(err, 16)


def test_a_term_range_says_it_is_a_term():
    err = check_error("(let ((n 3))\n  (for ((i n)) i))", RemoraTypeError)
    assert "`n` is a term of type (Arr Int (Shp))" in err.message and "iota/v" in err.message
    _at(err, 12, line=2)


def test_a_type_variable_range():
    err = check_error("(Tλ ((t Atom)) (λ ((x [t 2])) (for ((i t)) i)))", RemoraTypeError)
    assert "type variable" in err.message
    _at(err, 40)


@pytest.mark.parametrize("source, col, words", [
    ("(for (i 3) i)", 6, "a list of (i n) pairs"),
    ("(for ((i)) i)", 7, "a for binding is written (i n)"),
    ("(for ((i 3 4)) i)", 7, "a for binding is written (i n)"),
    ("(for () 1)", 6, "at least one index"),
    ("(for ((i 2) (i 3)) i)", 13, "index `i` is bound twice"),
    ("(for ((3 2)) 1)", 8, "expected an index name"),
    ("(for ((i 2)))", 1, "malformed `for`"),
    ("(for ((i -1)) i)", 10, "a dimension is a natural number"),
    ("(for ((i x)) i)\n(define for 3)", 9, "`for` is reserved"),
    ("(+ for 1)", 4, "`for` is a keyword"),
])
def test_malformed_for_is_a_located_syntax_error(source, col, words):
    err = check_error(source, RemoraSyntaxError)
    assert words in err.message
    _at(err, col, line=source.count("\n") + 1 if "define for" in source else 1)


def test_a_type_error_in_the_body_is_located_in_the_body():
    err = check_error("(for ((i 3)) (+ i 1.5))", RemoraTypeError)
    assert err.span.col == 19 and "int->float" in err.message


# --- the editor ------------------------------------------------------------------------------


def test_indices_resolve_to_their_binding_and_are_not_free():
    text = "(define a [1 2 3])\n(for ((i 3) (j 2)) (+ (index a i) j k))\n"
    s = resolve(Session().forms(text, "<t>"))
    assert s.free_terms() == {"+", "index", "k"}
    uses = {(u.name, u.span.col): u.binding for u in s.uses if u.name in "ij"}
    assert uses[("i", 32)].span.col == 8 and uses[("j", 35)].span.col == 14


def test_hover_shows_the_index_the_frame_and_the_whole():
    d = Document("(define a [1 2 3])\n(for ((i 3) (j 2)) (+ (index a i) j))\n")
    assert not d.errors
    assert "i : (Arr Int (Shp))" in d.hover(2, 8)
    assert d.hover(2, 10) == "```remora\n(Arr Int (Shp 3))\n```"  # the range: the index frame
    assert "(Arr Int (Shp 3 2))" in d.hover(2, 2)  # the keyword: the whole array
    assert "for" in [c.name for c in d.completions(2, 2)]


def test_the_keyword_has_its_documentation_and_its_token():
    from remora.interfaces.docs import describe
    from remora.interfaces.lexer import RemoraLexer
    from pygments.token import Keyword

    assert describe("for", {}).startswith("for — a keyword: (for ((i n) ...) e)")
    tokens = dict((v, t) for t, v in RemoraLexer().get_tokens("(for ((i 3)) i)"))
    assert tokens["for"] is Keyword
