"""The parser (remora.front.parse.parse_program): every form of Fig. 1 and the sugar; located syntax errors."""

from __future__ import annotations

import pytest

from conftest import check_type
from remora.front import syntax as S
from remora.errors import RemoraSyntaxError
from remora.front.parse import parse_program


def parse1(text: str):
    """The single top-level form of ``text``."""
    (form,) = parse_program(text, "<test>").forms
    return form


def expr(text: str):
    form = parse1(text)
    assert isinstance(form, S.ExprForm)
    return form.expr


def atom_of(text: str):
    """The atom of a bare atom form (sugar: a scalar array holding it)."""
    e = expr(text)
    assert isinstance(e, S.ArrayLit) and e.dims == () and len(e.atoms) == 1
    return e.atoms[0]


def param_type(type_text: str):
    """The parsed type of the only parameter of ``(λ ((x TYPE)) x)``."""
    lam = atom_of(f"(λ ((x {type_text})) x)")
    return lam.params[0].type


def syntax_error(text: str) -> RemoraSyntaxError:
    with pytest.raises(RemoraSyntaxError) as info:
        parse_program(text, "<test>")
    err = info.value
    assert err.span is not None, f"syntax error without a location: {err.message}"
    return err


def at(err, line, col):
    assert (err.line, err.column) == (line, col), f"{err.line}:{err.column}: {err.message}"


# ---------------------------------------------------------------------------
# Expressions of Fig. 1


def test_array_literal():
    e = expr("(array (2 3) 1 2 3 4 5 6)")
    assert isinstance(e, S.ArrayLit) and not e.sugar
    assert e.dims == (2, 3)
    assert [a.value for a in e.atoms] == [1, 2, 3, 4, 5, 6]
    assert all(isinstance(a, S.Lit) for a in e.atoms)


def test_array_literal_scalar_and_mixed_atoms():
    e = expr("(array () 5)")
    assert isinstance(e, S.ArrayLit) and e.dims == () and e.atoms[0].value == 5
    e = expr("(array (3) #t 2.5 +)")
    assert [type(a) for a in e.atoms] == [S.Lit, S.Lit, S.Prim]
    assert e.atoms[0].value is True and e.atoms[2].name == "+"


def test_array_of_lambda_atoms():
    e = expr("(array (2) (λ ((x [Int])) x) (lambda ((y [Int])) y))")
    assert [type(a) for a in e.atoms] == [S.Lam, S.Lam]


def test_empty_array():
    e = expr("(array (0 3) Int)")
    assert isinstance(e, S.EmptyArray)
    assert e.dims == (0, 3)
    assert isinstance(e.atom_type, S.STBase) and e.atom_type.name == "Int"


def test_empty_array_with_function_atom_type():
    e = expr("(array (2 0) (-> ((Arr Int (Shp))) (Arr Int (Shp))))")
    assert isinstance(e, S.EmptyArray) and isinstance(e.atom_type, S.STFun)


def test_frame():
    e = expr("(frame (2) [1 2] x)")
    assert isinstance(e, S.Frame) and not e.sugar
    assert e.dims == (2,)
    assert isinstance(e.cells[0], S.ArrayLit) and isinstance(e.cells[1], S.Ref)


def test_empty_frame():
    e = expr("(frame (0) (Arr Int (Shp 3)))")
    assert isinstance(e, S.EmptyFrame)
    assert e.dims == (0,)
    assert isinstance(e.cell_type, S.STArr)


def test_application():
    e = expr("(f 1 x)")
    assert isinstance(e, S.App)
    assert isinstance(e.fn, S.Ref) and e.fn.name == "f"
    assert isinstance(e.args[0], S.ArrayLit) and isinstance(e.args[1], S.Ref)


def test_application_without_arguments():
    e = expr("(f)")
    assert isinstance(e, S.App) and e.args == ()


def test_application_with_computed_function():
    e = expr("((t-app (i-app head 2 (Shp 2)) Num) mtx)")
    assert isinstance(e, S.App) and isinstance(e.fn, S.TApp) and isinstance(e.fn.fn, S.IApp)


def test_type_application():
    e = expr("(t-app f Int Float (Arr Bool (Shp 2)))")
    assert isinstance(e, S.TApp) and e.fn.name == "f"
    assert [type(t) for t in e.types] == [S.STBase, S.STBase, S.STArr]


def test_index_application():
    e = expr("(i-app f 1 (Shp 2) (+ 1 n) (++ s (Shp 1)) n)")
    assert isinstance(e, S.IApp)
    assert [type(i) for i in e.indices] == [S.INat, S.IShp, S.IPlus, S.IAppend, S.IName]


def test_unbox():
    e = expr("(unbox (m n x e) (f x))")
    assert isinstance(e, S.Unbox)
    assert [n.name for n in e.index_names] == ["m", "n"]
    assert e.value_name == "x"
    assert isinstance(e.boxed, S.Ref) and isinstance(e.body, S.App)


def test_unbox_without_index_names():
    e = expr("(unbox (x e) x)")
    assert isinstance(e, S.Unbox) and e.index_names == () and e.value_name == "x"


@pytest.mark.parametrize("keyword", ["λ", "lambda"])
def test_lambda(keyword):
    lam = atom_of(f"({keyword} ((x (Arr Int (Shp))) (y [Float 3])) x)")
    assert isinstance(lam, S.Lam)
    assert [p.name for p in lam.params] == ["x", "y"]
    assert isinstance(lam.params[0].type, S.STArr)
    assert isinstance(lam.body, S.Ref)


def test_lambda_without_parameters():
    lam = atom_of("(λ () 1)")
    assert isinstance(lam, S.Lam) and lam.params == ()


@pytest.mark.parametrize("keyword", ["Tλ", "t-lambda"])
def test_type_lambda(keyword):
    tl = atom_of(f"({keyword} ((t Atom) (u Array)) f)")
    assert isinstance(tl, S.TLam)
    assert [(b.name, b.sort) for b in tl.binders] == [("t", "Atom"), ("u", "Array")]


@pytest.mark.parametrize("keyword", ["Iλ", "i-lambda"])
def test_index_lambda(keyword):
    il = atom_of(f"({keyword} ((n Dim) (s Shape)) f)")
    assert isinstance(il, S.ILam)
    assert [(b.name, b.sort) for b in il.binders] == [("n", "Dim"), ("s", "Shape")]


def test_box():
    b = atom_of("(box 3 (Shp 1) [1 2 3] (Sigma ((n Dim) (s Shape)) (Arr Int (++ (Shp n) s))))")
    assert isinstance(b, S.Box)
    assert [type(i) for i in b.indices] == [S.INat, S.IShp]
    assert isinstance(b.body, S.ArrayLit)
    assert isinstance(b.type, S.STQuant) and b.type.quantifier == "Sigma"


def test_box_with_no_indices():
    b = atom_of("(box [1] (Sigma () (Arr Int (Shp 1))))")
    assert isinstance(b, S.Box) and b.indices == ()


def test_bare_atoms_are_scalar_arrays():
    for text, value in [("5", 5), ("2.5", 2.5), ("#f", False)]:
        e = expr(text)
        assert isinstance(e, S.ArrayLit) and e.dims == () and e.sugar
        assert e.atoms[0].value == value


def test_bare_name_is_a_reference():
    e = expr("+")
    assert isinstance(e, S.Ref) and e.name == "+"


# ---------------------------------------------------------------------------
# Types, kinds, sorts, indices


def test_base_types_and_num_alias():
    assert param_type("(Arr Int (Shp))").atom.name == "Int"
    assert param_type("(Arr Num (Shp))").atom.name == "Int"
    assert param_type("(Arr Float (Shp))").atom.name == "Float"
    assert param_type("(Arr Bool (Shp))").atom.name == "Bool"


def test_function_type():
    t = param_type("(Arr (-> ((Arr Int (Shp)) (Arr Float (Shp 2))) (Arr Bool (Shp))) (Shp))")
    fn = t.atom
    assert isinstance(fn, S.STFun) and len(fn.params) == 2 and isinstance(fn.result, S.STArr)


def test_function_type_without_parameters():
    t = param_type("(Arr (-> () (Arr Int (Shp))) (Shp))")
    assert t.atom.params == ()


@pytest.mark.parametrize(
    "quant,binders",
    [("Forall", "((t Atom) (T Array))"), ("Pi", "((n Dim) (s Shape))"), ("Sigma", "((n Dim) (s Shape))")],
)
def test_quantified_types(quant, binders):
    t = param_type(f"(Arr ({quant} {binders} (Arr Int (Shp))) (Shp))")
    q = t.atom
    assert isinstance(q, S.STQuant) and q.quantifier == quant
    assert len(q.binders) == 2
    assert isinstance(q.body, S.STArr)


def test_type_variable():
    t = param_type("(Arr t (Shp))")
    assert isinstance(t.atom, S.STName) and t.atom.name == "t"


def test_index_forms():
    shape = param_type("(Arr Int (++ (Shp 2 (+ x 5 x)) (++ d (Shp 3))))").shape
    assert isinstance(shape, S.IAppend)
    first, second = shape.args
    assert isinstance(first, S.IShp)
    assert isinstance(first.dims[0], S.INat) and first.dims[0].value == 2
    assert isinstance(first.dims[1], S.IPlus) and len(first.dims[1].args) == 3
    assert isinstance(second, S.IAppend) and isinstance(second.args[0], S.IName)


def test_bracket_type_sugar():
    t = param_type("[Float 3 n]")
    assert isinstance(t, S.STArr) and t.atom.name == "Float"
    assert isinstance(t.shape, S.ISplice)
    assert [type(i) for i in t.shape.args] == [S.INat, S.IName]


@pytest.mark.parametrize(
    "source,expected",
    [
        ("(λ ((x [Int])) x)", "(Arr (-> ((Arr Int (Shp))) (Arr Int (Shp))) (Shp))"),
        ("(λ ((x [Float 3 2])) x)", "(Arr (-> ((Arr Float (Shp 3 2))) (Arr Float (Shp 3 2))) (Shp))"),
        (
            "(Iλ ((n Dim)) (λ ((x [Float 3 n])) x))",
            "(Arr (Pi ((n Dim)) (Arr (-> ((Arr Float (Shp 3 n))) (Arr Float (Shp 3 n))) (Shp))) (Shp))",
        ),
        (
            "(Iλ ((s Shape)) (λ ((x [Int 3 s])) x))",
            "(Arr (Pi ((s Shape)) (Arr (-> ((Arr Int (++ (Shp 3) s))) (Arr Int (++ (Shp 3) s))) (Shp))) (Shp))",
        ),
        ("(λ ((x [Int (Shp 2 3) 4])) x)", "(Arr (-> ((Arr Int (Shp 2 3 4))) (Arr Int (Shp 2 3 4))) (Shp))"),
    ],
)
def test_bracket_type_sugar_meaning(source, expected):
    assert check_type(source) == expected


# ---------------------------------------------------------------------------
# Bracket frame sugar


def test_bracket_literal_collapses_to_one_array():
    e = expr("[[1 2] [3 4]]")
    assert isinstance(e, S.ArrayLit) and e.sugar
    assert e.dims == (2, 2)
    assert [a.value for a in e.atoms] == [1, 2, 3, 4]


def test_bracket_literal_three_levels():
    e = expr("[[[1] [2]] [[3] [4]] [[5] [6]]]")
    assert isinstance(e, S.ArrayLit) and e.dims == (3, 2, 1)
    assert [a.value for a in e.atoms] == [1, 2, 3, 4, 5, 6]


def test_bracket_vector_of_literals():
    e = expr("[1 2.5 #t]")
    assert isinstance(e, S.ArrayLit) and e.dims == (3,)


def test_bracket_with_lambdas_is_a_literal():
    e = expr("[(λ ((x [Int])) x) (λ ((y [Int])) y)]")
    assert isinstance(e, S.ArrayLit) and e.dims == (2,)
    assert all(isinstance(a, S.Lam) for a in e.atoms)


def test_bracket_of_variables_is_a_frame():
    e = expr("[x y z]")
    assert isinstance(e, S.Frame) and e.sugar
    assert e.dims == (3,) and all(isinstance(c, S.Ref) for c in e.cells)


def test_ragged_bracket_is_a_frame_of_arrays():
    e = expr("[[1 2] [3]]")
    assert isinstance(e, S.Frame) and e.dims == (2,)
    assert [c.dims for c in e.cells] == [(2,), (1,)]


def test_bracket_mixing_literals_and_expressions():
    e = expr("[[1 2] (f 3)]")
    assert isinstance(e, S.Frame) and e.dims == (2,)
    assert isinstance(e.cells[0], S.ArrayLit) and e.cells[0].dims == (2,)
    assert isinstance(e.cells[1], S.App)


# ---------------------------------------------------------------------------
# Top level and let


def test_define_value():
    form = parse1("(define x 5)")
    assert isinstance(form, S.Define) and form.name == "x"
    assert isinstance(form.value, S.ArrayLit)
    assert (form.name_span.line, form.name_span.col) == (1, 9)


def test_define_function_form_is_a_lambda():
    form = parse1("(define (f (x [Int]) (y [Int 2])) (+ x y))")
    assert isinstance(form, S.Define) and form.name == "f"
    lam = form.value.atoms[0]
    assert isinstance(lam, S.Lam)
    assert [p.name for p in lam.params] == ["x", "y"]
    assert isinstance(lam.body, S.App)


def test_define_function_form_has_the_same_type_as_the_lambda():
    a = check_type("(define (f (x [Int 3])) x)")
    b = check_type("(define f (λ ((x [Int 3])) x))")
    assert a == b == "(Arr (-> ((Arr Int (Shp 3))) (Arr Int (Shp 3))) (Shp))"


def test_program_of_several_forms():
    forms = parse_program("(define x 1)\n(+ x 1)\n; done\n(define (g) 2)").forms
    assert [type(f) for f in forms] == [S.Define, S.ExprForm, S.Define]


def test_let():
    e = expr("(let ((x 1) (y [x x])) y)")
    assert isinstance(e, S.Let)
    assert [b[0] for b in e.bindings] == ["x", "y"]
    assert isinstance(e.body, S.Ref)


def test_let_is_sequential():
    assert check_type("(let ((x 1) (y [x x])) y)") == "(Arr Int (Shp 2))"


# ---------------------------------------------------------------------------
# Malformed forms


@pytest.mark.parametrize(
    "text,line,col,words",
    [
        ("(array)", 1, 1, ["array", "(array (n ...)"]),
        ("(array 2 1 2)", 1, 8, ["dimensions"]),
        ("(frame)", 1, 1, ["frame", "(frame (n ...)"]),
        ("(frame 2 1 2)", 1, 8, ["dimensions"]),
        ("(λ)", 1, 1, ["λ", "((x τ) ...)"]),
        ("(λ ((x [Int])))", 1, 1, ["λ", "expected"]),
        ("(λ ((x [Int])) x x)", 1, 1, ["λ", "expected"]),
        ("(lambda ((x [Int])))", 1, 1, ["expected"]),
        ("(Tλ ((t Atom)))", 1, 1, ["Tλ"]),
        ("(Iλ ((n Dim)) f f)", 1, 1, ["Iλ"]),
        ("(unbox (n x e))", 1, 1, ["unbox", "expected"]),
        ("(unbox (n x e) x x)", 1, 1, ["unbox", "expected"]),
        ("(unbox x x)", 1, 8, ["unbox"]),
        ("(unbox (e) x)", 1, 8, ["unbox"]),
        ("(define x)", 1, 1, ["define", "(define x e)"]),
        ("(define x 1 2)", 1, 1, ["define", "(define x e)"]),
        ("(define)", 1, 1, ["define"]),
        ("(define (f))", 1, 1, ["define"]),
        ("(define () 1)", 1, 9, ["define"]),
        ("(box)", 1, 1, ["box"]),
        ("(t-app)", 1, 1, ["t-app"]),
        ("(i-app)", 1, 1, ["i-app"]),
        ("(let ((x 1)))", 1, 1, ["let"]),
        ("(let x 1)", 1, 6, ["let"]),
        ("(let ((x)) 1)", 1, 7, ["binding"]),
    ],
)
def test_wrong_arity_and_shape_of_forms(text, line, col, words):
    err = syntax_error(text)
    at(err, line, col)
    for w in words:
        assert w in err.message


def test_lambda_parameter_without_type():
    err = syntax_error("(λ (x) x)")
    at(err, 1, 5)
    assert "`x`" in err.message and "needs a type" in err.message and "(x τ)" in err.message


def test_lambda_parameter_in_parens_without_type():
    err = syntax_error("(λ ((x)) x)")
    at(err, 1, 5)
    assert "`x`" in err.message and "needs a type" in err.message


def test_lambda_parameter_with_too_many_parts():
    err = syntax_error("(λ ((y [Int]) (x Int Int)) x)")
    at(err, 1, 15)
    assert "(x τ)" in err.message


def test_lambda_parameters_not_a_list():
    err = syntax_error("(λ x x)")
    at(err, 1, 4)


def test_define_function_parameter_without_type():
    err = syntax_error("(define (f x) x)")
    at(err, 1, 12)
    assert "needs a type" in err.message


@pytest.mark.parametrize(
    "text,col,bad",
    [
        ("(Iλ ((n Atom)) f)", 9, "Atom"),
        ("(i-lambda ((n Array)) f)", 15, "Array"),
        ("(Iλ ((m Dim) (n Int)) f)", 17, "Int"),
        ("(λ ((f (Arr (Pi ((n Atom)) [Int]) (Shp)))) f)", 21, "Atom"),
        ("(λ ((f (Arr (Sigma ((n Array)) [Int]) (Shp)))) f)", 24, "Array"),
        ("(λ ((f (Arr (Pi ((n dim)) [Int]) (Shp)))) f)", 21, "dim"),
    ],
)
def test_sort_that_is_not_dim_or_shape(text, col, bad):
    err = syntax_error(text)
    at(err, 1, col)
    assert "sort" in err.message and "Dim" in err.message and "Shape" in err.message
    assert bad in err.message


@pytest.mark.parametrize(
    "text,col,bad",
    [
        ("(Tλ ((t Dim)) f)", 9, "Dim"),
        ("(t-lambda ((t Shape)) f)", 15, "Shape"),
        ("(λ ((f (Arr (Forall ((t Dim)) [Int]) (Shp)))) f)", 25, "Dim"),
        ("(λ ((f (Arr (Forall ((t Type)) [Int]) (Shp)))) f)", 25, "Type"),
    ],
)
def test_kind_that_is_not_atom_or_array(text, col, bad):
    err = syntax_error(text)
    at(err, 1, col)
    assert "kind" in err.message and "Atom" in err.message and "Array" in err.message
    assert bad in err.message


def test_binder_without_sort():
    err = syntax_error("(Iλ ((n)) f)")
    at(err, 1, 6)
    assert "Dim" in err.message


def test_binder_list_not_a_list_of_pairs():
    err = syntax_error("(Iλ (n) f)")
    at(err, 1, 6)


@pytest.mark.parametrize(
    "text,col",
    [
        ("(array (-1) 1)", 9),
        ("(array (2 -3) 1)", 11),
        ("(array (1.5) 1)", 9),
        ("(array (a) 1)", 9),
        ("(array (#t) 1)", 9),
        ("(frame (-2) 1)", 9),
        ("(frame (2.0) 1 2)", 9),
    ],
)
def test_dimensions_must_be_naturals(text, col):
    err = syntax_error(text)
    at(err, 1, col)
    assert "natural" in err.message


def test_negative_index_in_i_app():
    err = syntax_error("(i-app f -1)")
    at(err, 1, 10)
    assert "natural" in err.message


def test_non_integer_index():
    err = syntax_error("(i-app f (Shp 1.5))")
    at(err, 1, 15)
    assert "index" in err.message


def test_empty_brackets():
    err = syntax_error("(f [])")
    at(err, 1, 4)
    assert "[]" in err.message and "(array (0) Int)" in err.message


def test_empty_brackets_as_type():
    err = syntax_error("(λ ((x [])) x)")
    at(err, 1, 8)
    assert "type" in err.message


def test_empty_application():
    err = syntax_error("(f ())")
    at(err, 1, 4)
    assert "()" in err.message


def test_define_not_at_top_level():
    err = syntax_error("(f (define x 1))")
    at(err, 1, 4)
    assert "top level" in err.message


def test_define_inside_lambda_body():
    err = syntax_error("(define (g (y [Int]))\n  (define z y))")
    at(err, 2, 3)
    assert "top level" in err.message


@pytest.mark.parametrize(
    "text,col,name",
    [
        ("(define array 1)", 9, "array"),
        ("(define (frame (x [Int])) x)", 10, "frame"),
        ("(λ ((array [Int])) 1)", 6, "array"),
        ("(λ ((Int [Int])) 1)", 6, "Int"),
        ("(λ ((x [Int]) (λ [Int])) 1)", 16, "λ"),
        ("(let ((λ 1)) 1)", 8, "λ"),
        ("(Iλ ((Shp Dim)) f)", 7, "Shp"),
        ("(Tλ ((Arr Atom)) f)", 7, "Arr"),
        ("(unbox (n box e) 1)", 11, "box"),
    ],
)
def test_keyword_used_as_a_variable(text, col, name):
    err = syntax_error(text)
    at(err, 1, col)
    assert f"`{name}`" in err.message and "reserved" in err.message


@pytest.mark.parametrize("kw", ["array", "frame", "unbox", "t-app", "i-app", "λ", "Tλ", "Iλ", "box", "let"])
def test_bare_keyword_in_expression_position(kw):
    err = syntax_error(f"(f {kw})")
    at(err, 1, 4)
    assert kw in err.message and "keyword" in err.message


def test_variable_name_inside_array_atoms():
    err = syntax_error("(array (2) 1 x)")
    at(err, 1, 14)
    assert "`x`" in err.message and "atom" in err.message and "frame" in err.message


def test_expression_inside_array_atoms():
    err = syntax_error("(array (1) (f 1))")
    at(err, 1, 12)
    assert "atom" in err.message


@pytest.mark.parametrize(
    "text,col,name",
    [
        ("(λ ((x [Int]) (x [Int])) x)", 15, "x"),
        ("(define (f (x [Int]) (y [Int]) (x [Float])) x)", 32, "x"),
        ("(Iλ ((n Dim) (n Shape)) f)", 14, "n"),
        ("(Tλ ((t Atom) (t Atom)) f)", 15, "t"),
        ("(λ ((f (Arr (Sigma ((n Dim) (n Dim)) [Int]) (Shp)))) f)", 29, "n"),
        ("(unbox (n n e) 1)", 11, "n"),
    ],
)
def test_duplicate_parameter_names(text, col, name):
    err = syntax_error(text)
    at(err, 1, col)
    assert f"`{name}`" in err.message and "twice" in err.message


def test_type_in_array_without_a_zero_dimension():
    err = syntax_error("(array (2) Int)")
    at(err, 1, 12)
    assert "type" in err.message and "0" in err.message


def test_type_in_frame_without_a_zero_dimension():
    err = syntax_error("(frame (2) (Arr Int (Shp)))")
    at(err, 1, 12)
    assert "type" in err.message and "0" in err.message


def test_empty_array_with_atoms():
    err = syntax_error("(array (0 3) 1 2)")
    at(err, 1, 1)
    assert "empty" in err.message and "(array (n ...) τ)" in err.message


def test_empty_array_without_type():
    err = syntax_error("(array (0))")
    at(err, 1, 1)
    assert "empty" in err.message


def test_empty_frame_with_cells():
    err = syntax_error("(frame (0) 1)")
    at(err, 1, 1)
    assert "empty" in err.message and "cell type" in err.message


@pytest.mark.parametrize(
    "text,col,words",
    [
        ("(λ ((x (Arr Int))) x)", 8, ["Arr", "(Arr τ ι)"]),
        ("(λ ((x (-> Int))) x)", 8, ["->"]),
        ("(λ ((x (Forall ((t Atom))))) x)", 8, ["Forall"]),
        ("(λ ((x (Foo Int))) x)", 8, ["expected a type"]),
        ("(λ ((x 3)) x)", 8, ["expected a type"]),
        ("(λ ((x (Arr Int (Foo 1)))) x)", 17, ["expected an index"]),
        ("(λ ((x (Arr Int Int))) x)", 17, ["expected an index"]),
        ("(t-app f 1)", 10, ["expected a type"]),
    ],
)
def test_malformed_types_and_indices(text, col, words):
    err = syntax_error(text)
    at(err, 1, col)
    for w in words:
        assert w in err.message


def test_error_on_a_later_line_and_form():
    err = syntax_error("(define x 1)\n(define y\n   (array (2) 1 z))")
    at(err, 3, 17)


def test_syntax_errors_come_before_type_checking():
    # The first form is ill-typed, the second ill-formed: parsing the whole program reports the latter.
    err = syntax_error("(+ 1 2.5)\n(λ (x) x)")
    at(err, 2, 5)
