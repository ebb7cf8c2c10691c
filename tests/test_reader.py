"""The reader (remora.front.reader.read): S-expressions with 1-based source spans, and located failures."""

from __future__ import annotations

import pytest

from remora.errors import RemoraSyntaxError
from remora.front.reader import MAX_NESTING, SAtom, SList, is_incomplete, read


def span(node):
    s = node.span
    return (s.line, s.col, s.end_line, s.end_col)


def read_error(text: str) -> RemoraSyntaxError:
    with pytest.raises(RemoraSyntaxError) as info:
        read(text, "<test>")
    err = info.value
    assert err.span is not None, f"reader error without a location: {err.message}"
    assert err.file == "<test>"
    return err


# ---------------------------------------------------------------------------
# Spans


def test_spans_of_a_nested_form():
    (form,) = read("(a [b 1]\n  2.5 #t)")
    assert isinstance(form, SList) and form.bracket == "("
    assert span(form) == (1, 1, 2, 10)
    a, inner, x, t = form.items
    assert span(a) == (1, 2, 1, 3)
    assert span(inner) == (1, 4, 1, 9)
    b, one = inner.items
    assert span(b) == (1, 5, 1, 6)
    assert span(one) == (1, 7, 1, 8)
    assert span(x) == (2, 3, 2, 6)
    assert span(t) == (2, 7, 2, 9)


def test_spans_of_several_top_level_forms_and_lines():
    forms = read("x\n\n  (f y)\n[1 2]")
    assert [span(f) for f in forms] == [(1, 1, 1, 2), (3, 3, 3, 8), (4, 1, 4, 6)]
    f, y = forms[1].items
    assert span(f) == (3, 4, 3, 5)
    assert span(y) == (3, 6, 3, 7)


def test_columns_count_characters_not_bytes():
    forms = read("(λ ((x [Int])) x) Tλ")
    lam = forms[0]
    assert lam.items[0].value == "λ"
    assert span(lam.items[0]) == (1, 2, 1, 3)
    assert span(lam.items[2]) == (1, 16, 1, 17)
    assert span(forms[1]) == (1, 19, 1, 21)


def test_tabs_and_crlf():
    forms = read("\t(a\t#f)\r\n(b)")
    assert span(forms[0]) == (1, 2, 1, 8)
    assert span(forms[0].items[1]) == (1, 5, 1, 7)
    assert span(forms[1]) == (2, 1, 2, 4)


def test_multi_line_list_span_ends_after_its_closer():
    (form,) = read("(define x\n  [1\n   2])")
    assert span(form) == (1, 1, 3, 7)
    assert span(form.items[2]) == (2, 3, 3, 6)


def test_span_carries_the_source_name():
    (form,) = read("x", "prog.rem")
    assert form.span.source.name == "prog.rem"


# ---------------------------------------------------------------------------
# Atoms


@pytest.mark.parametrize("name", ["t", "nil", "inf", "nan", "-inf", "NaN", "T", "true", "false", "None"])
def test_lisp_and_float_names_stay_symbols(name):
    (atom,) = read(name)
    assert isinstance(atom, SAtom)
    assert atom.is_symbol
    assert type(atom.value) is str and atom.value == name


def test_hash_t_and_hash_f_are_python_bools():
    t, f = read("#t #f")
    assert t.value is True and f.value is False
    assert not t.is_symbol and not f.is_symbol


@pytest.mark.parametrize(
    "text,value",
    [("0", 0), ("42", 42), ("-3", -3), ("-0", 0), ("9223372036854775807", 2**63 - 1),
     ("-9223372036854775808", -(2**63))],
)
def test_integers(text, value):
    (atom,) = read(text)
    assert type(atom.value) is int and atom.value == value


@pytest.mark.parametrize(
    "text,value",
    [("2.5", 2.5), ("-1.5", -1.5), (".5", 0.5), ("-.5", -0.5), ("5.", 5.0), ("1e5", 1e5),
     ("1e-5", 1e-5), ("2E3", 2000.0), ("-1.5e+2", -150.0), ("0.0", 0.0)],
)
def test_floats(text, value):
    (atom,) = read(text)
    assert type(atom.value) is float and atom.value == value


@pytest.mark.parametrize(
    "name", ["+", "-", "*", "/", "->", "int->float", "iota/v", "read-nums", "!=", "<=", "x1", "λ", "été", "t-app", "++"]
)
def test_operator_like_symbols(name):
    (atom,) = read(name)
    assert atom.is_symbol and atom.value == name


def test_parentheses_and_brackets_are_distinct():
    paren, brack = read("(a b) [a b]")
    assert isinstance(paren, SList) and isinstance(brack, SList)
    assert paren.bracket == "(" and brack.bracket == "["
    assert [i.value for i in paren.items] == [i.value for i in brack.items] == ["a", "b"]


def test_nested_brackets_keep_their_kind():
    (form,) = read("[(a) [b]]")
    assert form.bracket == "["
    assert [i.bracket for i in form.items] == ["(", "["]


def test_empty_lists():
    paren, brack = read("() []")
    assert paren.items == () and paren.bracket == "("
    assert brack.items == () and brack.bracket == "["


def test_comments_run_to_end_of_line():
    forms = read("; a comment ( with [ brackets\nx ; trailing (\n  ;; another\ny;no space\n")
    assert [f.value for f in forms] == ["x", "y"]
    assert span(forms[1]) == (4, 1, 4, 2)


def test_comment_only_and_empty_input():
    assert read("") == []
    assert read("   \n\t ; nothing\n") == []


def test_nesting_up_to_the_limit_is_fine():
    depth = MAX_NESTING
    (form,) = read("(" * depth + "x" + ")" * depth)
    for _ in range(depth - 1):
        form = form.items[0]
    assert form.items[0].value == "x"


# ---------------------------------------------------------------------------
# Failures


def test_missing_close_points_at_the_unclosed_opener():
    err = read_error("(a b")
    assert (err.line, err.column) == (1, 1)
    assert "unclosed" in err.message and ")" in err.message


def test_missing_close_on_a_later_line():
    err = read_error("(define x 1)\n(a\n  (b c)")
    assert (err.line, err.column) == (2, 1)


def test_missing_close_reports_the_innermost_unclosed_bracket():
    err = read_error("(a\n  [b c")
    assert (err.line, err.column) == (2, 3)
    assert "]" in err.message


def test_extra_close():
    err = read_error("(a b))")
    assert (err.line, err.column) == (1, 6)
    assert ")" in err.message


def test_close_with_nothing_open_on_later_line():
    err = read_error("x\n  ]")
    assert (err.line, err.column) == (2, 3)


@pytest.mark.parametrize(
    "text,col,closer",
    [("(a]", 3, "]"), ("[a)", 3, ")"), ("(f [1 2) 3]", 8, ")")],
)
def test_mismatched_brackets(text, col, closer):
    err = read_error(text)
    assert (err.line, err.column) == (1, col)
    assert closer in err.message
    assert "match" in err.message


def test_mismatch_message_names_the_opener_position():
    err = read_error("(a\n  (b]")
    assert (err.line, err.column) == (2, 5)
    assert "line 2" in err.message and "column 3" in err.message


@pytest.mark.parametrize("text,col", [('"abc', 1), ('"abc"', 1), ('(f "x")', 4), ('a"b"', 2)])
def test_strings_are_rejected(text, col):
    err = read_error(text)
    assert (err.line, err.column) == (1, col)
    assert "string" in err.message


@pytest.mark.parametrize(
    "text,col",
    [("#x", 1), ("(f #x)", 4), ("1.2.3", 1), ("(+ 1 1.2.3)", 6), ("a\\b", 1), ("#", 1), ("#T", 1),
     ("1/2", 1), ("1_000", 1), ("1e", 1), ("a|b", 1), ("{a}", 1), ("`a", 1), (",a", 1), ("#t#f", 1)],
)
def test_bad_tokens(text, col):
    err = read_error(text)
    assert (err.line, err.column) == (1, col)


def test_bad_token_messages_are_specific():
    assert "#t" in read_error("#x").message and "#f" in read_error("#x").message
    assert "1.2.3" in read_error("1.2.3").message
    assert "\\" in read_error("a\\b").message


def test_bad_token_on_a_later_line():
    err = read_error("(define x 1)\n  (f #q)")
    assert (err.line, err.column) == (2, 6)


def test_datum_comment_is_rejected():
    err = read_error("(a #;(b) c)")
    assert (err.line, err.column) == (1, 4)
    assert "#;" in err.message


def test_quote_is_rejected():
    err = read_error("(f 'x)")
    assert (err.line, err.column) == (1, 4)
    assert "quote" in err.message


def test_nesting_deeper_than_the_limit():
    depth = MAX_NESTING + 1
    err = read_error("(" * depth + "x" + ")" * depth)
    assert (err.line, err.column) == (1, MAX_NESTING + 1)
    assert str(MAX_NESTING) in err.message


def test_very_deep_nesting_is_a_located_error_not_a_crash():
    err = read_error("[" * 100000)
    assert err.line == 1


@pytest.mark.parametrize("text", ["9223372036854775808", "-9223372036854775809", "100000000000000000000000"])
def test_integer_outside_int64(text):
    err = read_error("(+ 1 " + text + ")")
    assert (err.line, err.column) == (1, 6)
    assert "64" in err.message


def test_unprintable_character():
    err = read_error("(a b\x01c)")
    assert (err.line, err.column) == (1, 4)


def test_error_report_has_caret_under_culprit():
    err = read_error("(f 1.2.3)")
    lines = str(err).split("\n")
    assert lines[0].startswith("<test>:1:4: error: ")
    assert lines[1].strip() == "(f 1.2.3)"
    caret = lines[2]
    assert caret.index("^") == lines[1].index("1.2.3")


@pytest.mark.parametrize(
    "text, incomplete",
    [
        ("(+ 1", True),
        ("[1 (2\n 3", True),
        ("(+ 1 ; a comment )\n", True),  # the comment's bracket does not close anything
        ("(+ 1 2)", False),
        ("", False),
        ("(+ 1 2))", False),  # too many closers: an error now, whatever follows
        ("(+ 1 ]", False),  # a mismatch cannot be mended either
        ('(+ 1 "x"', False),  # nor a string, though a bracket is still open
        ("(+ 1 #;", False),
    ],
)
def test_is_incomplete_says_whether_more_input_could_complete_the_text(text, incomplete):
    """The REPL's question, answered by the reader itself (not by the wording of an error)."""
    assert is_incomplete(text) is incomplete



# ---------------------------------------------------------------------------
# The token rules are sexpdata's (decisions.md D42): sexpdata reads every text the reader reads
# into the same tree.  (It is the reference here; the reader no longer runs it.)

from pathlib import Path  # noqa: E402

import sexpdata  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from remora.front.reader import classify_atom  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


class _Reference(sexpdata.Parser):
    def atom(self, token):  # noqa: D102 - sexpdata hook
        value = classify_atom(token)
        return sexpdata.Symbol(value) if isinstance(value, str) else value


def _as_sexpdata(node):
    """A reader node in sexpdata's terms: a list, ``Brackets``, a ``Symbol`` or a number."""
    if isinstance(node, SAtom):
        return sexpdata.Symbol(node.value) if node.is_symbol else node.value
    items = [_as_sexpdata(i) for i in node.items]
    return items if node.bracket == "(" else sexpdata.Brackets(items)


def _same(a, b) -> bool:
    if isinstance(a, sexpdata.Brackets) or isinstance(b, sexpdata.Brackets):
        return type(a) is type(b) and _same(a.I, b.I)
    if isinstance(a, list) or isinstance(b, list):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def assert_reads_like_sexpdata(text: str) -> None:
    mine = [_as_sexpdata(n) for n in read(text, "<test>")]
    reference = _Reference(text, nil=None, true=None, false=None).parse()
    assert _same(mine, reference), (text, mine, reference)


def corpus() -> list[Path]:
    paths = sorted((ROOT / "examples").glob("*.rem")) + sorted((ROOT / "prelude").glob("*.rem"))
    return paths + sorted((ROOT / "tests" / "bad_input").glob("*.rem"))


def test_every_program_of_the_repository_reads_as_sexpdata_reads_it():
    read_some = 0
    for path in corpus():
        text = path.read_text(encoding="utf-8")
        try:
            read(text, str(path))
        except RemoraSyntaxError:
            continue  # (a reading error is the reader's to report; sexpdata has none of those rules)
        assert_reads_like_sexpdata(text)
        read_some += 1
    assert read_some > 100


_TOKENS = st.sampled_from(
    ["(", ")", "[", "]", " ", "\n", "\t", "\r\n", "x", "+", "-", "1", "-2", "2.5", ".5", "1e3", "#t", "#f", "t", "nil",
     "inf", "λ", "; c\n", "iota/v", "a-b", "é", "\x0b", "\x0c"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_TOKENS, max_size=40))
def test_random_token_soup_reads_as_sexpdata_reads_it(tokens):
    text = "".join(tokens)
    try:
        read(text, "<test>")
    except RemoraSyntaxError:
        return
    assert_reads_like_sexpdata(text)
