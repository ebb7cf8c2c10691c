"""From S-expressions to the syntax tree (:mod:`remora.front.syntax`).

Checks the *form* of every construct of Fig. 1 and of the surface sugar, and
reports a malformed one as a located syntax error saying what was expected.
Whether the pieces fit together (sorts, kinds, types, atom counts) is the
typechecker's business.
"""

from __future__ import annotations

from typing import Callable, Sequence

from . import syntax as S
from ..errors import RemoraSyntaxError, Span
from .reader import SAtom, SList, SNode, read, show

LAMBDA = {"λ": "λ", "lambda": "λ"}
TLAMBDA = {"Tλ": "Tλ", "t-lambda": "Tλ"}
ILAMBDA = {"Iλ": "Iλ", "i-lambda": "Iλ"}
EXPR_KEYWORDS = {"array", "frame", "t-app", "i-app", "unbox", "box", "define", "let", "if", "for"} | set(LAMBDA) | set(TLAMBDA) | set(ILAMBDA)
TYPE_KEYWORDS = {"Arr", "->", "Forall", "Pi", "Sigma"}
BASE_TYPE_NAMES = {"Int": "Int", "Float": "Float", "Int32": "Int32", "Float32": "Float32", "Bool": "Bool", "Num": "Int"}
INDEX_KEYWORDS = {"Shp", "++"}
KIND_NAMES = ("Atom", "Array", "Numeric", "Floating")
SORT_NAMES = ("Dim", "Shape")
RESERVED = EXPR_KEYWORDS | TYPE_KEYWORDS | set(BASE_TYPE_NAMES) | INDEX_KEYWORDS | set(KIND_NAMES) | set(SORT_NAMES)


def parse_program(text: str, name: str = "<expr>") -> S.Program:
    """Read and parse a whole program (a sequence of top-level forms)."""
    return S.Program([parse_top(node) for node in read(text, name)])


def parse_top(node: SNode) -> S.TopForm:
    if _head(node) == "define":
        return _parse_define(node)  # type: ignore[arg-type]
    return S.ExprForm(parse_expr(node), node.span)


def _primitive_names() -> Callable[[str], bool]:
    from ..primitives import is_primitive

    return is_primitive


# ---------------------------------------------------------------------------
# Helpers


def _err(message: str, node: SNode | Span) -> RemoraSyntaxError:
    return RemoraSyntaxError(message, node if isinstance(node, Span) else node.span)


def _head(node: SNode) -> str | None:
    if isinstance(node, SList) and node.bracket == "(" and node.items:
        first = node.items[0]
        if isinstance(first, SAtom) and first.is_symbol:
            return first.value  # type: ignore[return-value]
    return None


def _symbol(node: SNode, what: str) -> str:
    if isinstance(node, SAtom) and node.is_symbol:
        name = node.value
        assert isinstance(name, str)
        if name in RESERVED:
            raise _err(f"`{name}` is reserved and cannot be used as {what}", node)
        return name
    raise _err(f"expected {what}, got `{show(node)}`", node)


def _plist(node: SNode, what: str) -> tuple[SNode, ...]:
    """The items of a parenthesised list, or a syntax error naming what was expected."""
    if isinstance(node, SList) and node.bracket == "(":
        return node.items
    raise _err(f"expected {what}, got `{show(node)}`", node)


def _arity(node: SList, n: int, usage: str) -> None:
    if len(node.items) != n:
        raise _err(f"malformed `{_head(node)}`: expected {usage}", node)


def _dims(node: SNode, form: str) -> tuple[int, ...]:
    items = _plist(node, f"the dimensions of the {form} as (n ...)")
    out = []
    for item in items:
        if not (isinstance(item, SAtom) and type(item.value) is int and item.value >= 0):
            raise _err(f"a dimension of {'an' if form[0] in 'aeiou' else 'a'} {form} must be a natural number, got `{show(item)}`", item)
        out.append(item.value)
    return tuple(out)


def _unique(names: Sequence[tuple[str, Span]], what: str) -> None:
    seen: set[str] = set()
    for name, span in names:
        if name in seen:
            raise _err(f"{what} `{name}` is bound twice", span)
        seen.add(name)


# ---------------------------------------------------------------------------
# Top level


def _parse_define(node: SList) -> S.Define:
    usage = "(define x e), (define (f (x τ) ...) e), (define x : τ e) or (define (f (x τ) ...) : τ_r e)"
    declared_node = None
    if len(node.items) == 5 and _is_colon(node.items[2]):
        declared_node = node.items[3]
        items = (node.items[0], node.items[1], node.items[4])
    else:
        if len(node.items) != 3:
            raise _err(f"malformed `define`: expected {usage}", node)
        items = node.items
    target, body = items[1], items[2]
    if isinstance(target, SList) and target.bracket == "(":
        if not target.items:
            raise _err(f"malformed `define`: expected {usage}", target)
        fname = _symbol(target.items[0], "a function name")
        params = _params(target.items[1:], target)
        lam = S.Lam(params, parse_expr(body), node.span)
        declared = None
        if declared_node is not None:  # the function's type, from its parameters and result type
            declared = S.STArr(
                S.STFun(tuple(p.type for p in params), parse_type(declared_node), declared_node.span),
                S.IShp((), declared_node.span), declared_node.span,
            )
        value = S.ArrayLit((), (lam,), node.span, sugar=True)
        return S.Define(fname, value, node.span, target.items[0].span, declared)
    name = _symbol(target, "the name being defined")
    declared = parse_type(declared_node) if declared_node is not None else None
    return S.Define(name, parse_expr(body), node.span, target.span, declared)


def _is_colon(node: SNode) -> bool:
    return isinstance(node, SAtom) and node.is_symbol and node.value == ":"


# ---------------------------------------------------------------------------
# Expressions


def parse_expr(node: SNode) -> S.Expr:
    if isinstance(node, SAtom):
        if node.is_symbol:
            name = node.value
            assert isinstance(name, str)
            if name in EXPR_KEYWORDS:
                raise _err(f"`{name}` is a keyword and must start a form: ({name} ...)", node)
            if name in TYPE_KEYWORDS or name in INDEX_KEYWORDS or name in KIND_NAMES or name in SORT_NAMES:
                raise _err(f"`{name}` belongs to types and indices, not to expressions", node)
            return S.Ref(name, node.span)
        return _scalar(S.Lit(node.value, node.span))  # type: ignore[arg-type]
    if node.bracket == "[":
        return _bracket_frame(node)
    if not node.items:
        raise _err("empty application `()`: expected (function argument ...)", node)
    head = _head(node)
    parser = _EXPR_FORMS.get(head or "")
    if parser is not None:
        return parser(node)
    return S.App(parse_expr(node.items[0]), tuple(parse_expr(a) for a in node.items[1:]), node.span)


def _scalar(atom: S.Atom) -> S.ArrayLit:
    """Sugar: an atom in expression position is the scalar array holding it."""
    return S.ArrayLit((), (atom,), atom.span, sugar=True)


def _parse_array(node: SList) -> S.Expr:
    if len(node.items) < 2:
        raise _err("malformed `array`: expected (array (n ...) atom ...) or (array (n ...) τ)", node)
    dims = _dims(node.items[1], "array")
    rest = node.items[2:]
    if 0 in dims:
        if len(rest) != 1 or not _looks_like_type(rest[0]):
            raise _err(
                f"an empty array (dimensions ({' '.join(map(str, dims))}) contain a 0) is written "
                "with its atom type and no atoms: (array (n ...) τ), e.g. (array (0) Int)",
                node,
            )
        return S.EmptyArray(dims, parse_type(rest[0]), node.span)
    if len(rest) == 1 and _definitely_type(rest[0]):
        raise _err(
            f"`{show(rest[0])}` is a type, but dimensions ({' '.join(map(str, dims))}) have no 0: "
            "only an empty array is written with its atom type",
            rest[0],
        )
    return S.ArrayLit(dims, tuple(parse_atom(a) for a in rest), node.span)


def _parse_frame(node: SList) -> S.Expr:
    if len(node.items) < 2:
        raise _err("malformed `frame`: expected (frame (n ...) e ...) or (frame (n ...) τ)", node)
    dims = _dims(node.items[1], "frame")
    rest = node.items[2:]
    if 0 in dims:
        if len(rest) != 1 or not _looks_like_type(rest[0]):
            raise _err(
                f"an empty frame (dimensions ({' '.join(map(str, dims))}) contain a 0) is written "
                "with its cell type and no cells: (frame (n ...) τ), e.g. (frame (0) (Arr Int (Shp 3)))",
                node,
            )
        return S.EmptyFrame(dims, parse_type(rest[0]), node.span)
    if len(rest) == 1 and _definitely_type(rest[0]):
        raise _err(
            f"`{show(rest[0])}` is a type, but dimensions ({' '.join(map(str, dims))}) have no 0: "
            "only an empty frame is written with its cell type",
            rest[0],
        )
    return S.Frame(dims, tuple(parse_expr(e) for e in rest), node.span)


def _definitely_type(node: SNode) -> bool:
    """Whether ``node`` can only be a type (a base type name or a type constructor form)."""
    if isinstance(node, SAtom):
        return node.value in BASE_TYPE_NAMES
    return node.bracket == "[" and _looks_like_type(node) or _head(node) in TYPE_KEYWORDS


def _looks_like_type(node: SNode) -> bool:
    """Whether ``node`` reads as a type rather than an atom or expression (for the empty forms)."""
    if isinstance(node, SAtom):
        return node.is_symbol and not _primitive_names()(str(node.value)) and node.value not in EXPR_KEYWORDS
    if node.bracket == "[":
        return bool(node.items) and _looks_like_type(node.items[0])
    return _head(node) in TYPE_KEYWORDS


def _bracket_frame(node: SList) -> S.Expr:
    """``[e ...]``: one array literal if every element is a literal (nested alike), else a frame."""
    if not node.items:
        raise _err("`[]` is an empty frame with no type: write (array (0) Int) or (frame (0) τ)", node)
    literal = _literal_block(node)
    if literal is not None:
        dims, atoms = literal
        return S.ArrayLit(dims, tuple(atoms), node.span, sugar=True)
    return S.Frame((len(node.items),), tuple(parse_expr(e) for e in node.items), node.span, sugar=True)


def _literal_block(node: SNode) -> tuple[tuple[int, ...], list[S.Atom]] | None:
    """Dimensions and atoms of nested brackets of atoms that form one rectangular block.

    Literals and λ/Tλ/Iλ/box forms are atoms; a name is a variable reference (even
    a primitive's name, which a definition may shadow), so it makes a frame.
    """
    if isinstance(node, SAtom):
        return ((), [S.Lit(node.value, node.span)]) if not node.is_symbol else None  # type: ignore[arg-type]
    if node.bracket == "(":
        head = _head(node)
        if head in LAMBDA or head in TLAMBDA or head in ILAMBDA or head == "box":
            return ((), [parse_atom(node)])
        return None
    if not node.items:
        return None
    parts = [_literal_block(item) for item in node.items]
    if any(p is None for p in parts) or len({p[0] for p in parts}) != 1:  # type: ignore[index]
        return None
    atoms = [a for p in parts for a in p[1]]  # type: ignore[index]
    return (len(parts),) + parts[0][0], atoms  # type: ignore[index]


def _parse_tapp(node: SList) -> S.Expr:
    if len(node.items) < 2:
        raise _err("malformed `t-app`: expected (t-app e τ ...)", node)
    return S.TApp(parse_expr(node.items[1]), tuple(parse_type(t) for t in node.items[2:]), node.span)


def _parse_iapp(node: SList) -> S.Expr:
    if len(node.items) < 2:
        raise _err("malformed `i-app`: expected (i-app e ι ...)", node)
    return S.IApp(parse_expr(node.items[1]), tuple(parse_index(i) for i in node.items[2:]), node.span)


def _parse_unbox(node: SList) -> S.Expr:
    usage = "(unbox (x_i ... x_e e_box) e_body)"
    _arity(node, 3, usage)
    spec = _plist(node.items[1], f"the unbox bindings, as in {usage}")
    if len(spec) < 2:
        raise _err(f"malformed `unbox` bindings: expected {usage}", node.items[1])
    names = [(_symbol(n, "a variable name"), n.span) for n in spec[:-1]]
    _unique(names, "variable")
    index_names = tuple(S.IName(n, sp) for n, sp in names[:-1])
    value_name, value_span = names[-1]
    return S.Unbox(index_names, value_name, parse_expr(spec[-1]), parse_expr(node.items[2]), node.span, value_span)


def _parse_let(node: SList) -> S.Expr:
    usage = "(let ((x e) ...) body)"
    _arity(node, 3, usage)
    bindings = []
    spec = _plist(node.items[1], f"the let bindings, as in {usage}")
    if len(spec) == 2 and isinstance(spec[0], SAtom) and spec[0].is_symbol:
        raise _err(f"the let bindings are a list of (x e) pairs: write (let (({' '.join(show(i) for i in spec)})) …)", node.items[1])
    for b in spec:
        items = _plist(b, "a binding (x e)")
        if len(items) != 2:
            raise _err("a let binding is written (x e)", b)
        bindings.append((_symbol(items[0], "a variable name"), parse_expr(items[1]), b.span))
    return S.Let(tuple(bindings), parse_expr(node.items[2]), node.span)


def _parse_if(node: SList) -> S.Expr:
    _arity(node, 4, "(if c e_then e_else)")
    cond, then, orelse = (parse_expr(n) for n in node.items[1:])
    return S.If(cond, then, orelse, node.span)


def _parse_for(node: SList) -> S.Expr:
    usage = "(for ((i n) ...) e)"
    _arity(node, 3, usage)
    spec = _plist(node.items[1], f"the for bindings, as in {usage}")
    if not spec:
        raise _err(f"a for binds at least one index: {usage}", node.items[1])
    if len(spec) == 2 and isinstance(spec[0], SAtom) and spec[0].is_symbol:
        raise _err(f"the for bindings are a list of (i n) pairs: write (for (({' '.join(show(i) for i in spec)})) …)", node.items[1])
    bindings = []
    for b in spec:
        items = _plist(b, "a for binding (i n), n a Dim")
        if len(items) != 2:
            raise _err("a for binding is written (i n): an index name and its range, a Dim", b)
        bindings.append(S.ForBinding(_symbol(items[0], "an index name"), parse_index(items[1]), b.span))
    _unique([(b.name, b.span) for b in bindings], "index")
    return S.For(tuple(bindings), parse_expr(node.items[2]), node.span)


def _atom_form(node: SList) -> S.Expr:
    return _scalar(parse_atom(node))


def _define_elsewhere(node: SList) -> S.Expr:
    raise _err("`define` is only allowed at the top level of a program", node)


_EXPR_FORMS: dict[str, Callable[[SList], S.Expr]] = {
    "array": _parse_array,
    "frame": _parse_frame,
    "t-app": _parse_tapp,
    "i-app": _parse_iapp,
    "unbox": _parse_unbox,
    "let": _parse_let,
    "if": _parse_if,
    "for": _parse_for,
    "box": _atom_form,
    "define": _define_elsewhere,
    **{k: _atom_form for k in LAMBDA},
    **{k: _atom_form for k in TLAMBDA},
    **{k: _atom_form for k in ILAMBDA},
}

# ---------------------------------------------------------------------------
# Atoms


def parse_atom(node: SNode) -> S.Atom:
    if isinstance(node, SAtom):
        if not node.is_symbol:
            return S.Lit(node.value, node.span)  # type: ignore[arg-type]
        name = str(node.value)
        if _primitive_names()(name):
            return S.Prim(name, node.span)
        raise _err(
            f"`{name}` is not an atom: an array literal holds literals, primitives and λ/Tλ/Iλ/box "
            "forms; to build an array from variables write (frame (n ...) e ...) or [e ...]",
            node,
        )
    head = _head(node)
    if head in LAMBDA:
        return _parse_lambda(node)  # type: ignore[arg-type]
    if head in TLAMBDA or head in ILAMBDA:
        return _parse_index_or_type_lambda(node)  # type: ignore[arg-type]
    if head == "box":
        return _parse_box(node)  # type: ignore[arg-type]
    raise _err(f"expected an atom (a literal, a primitive, λ, Tλ, Iλ or box), got `{show(node)}`", node)


def _params(items: Sequence[SNode], where: SNode) -> tuple[S.Param, ...]:
    params = []
    for p in items:
        if isinstance(p, SAtom):
            raise _err(f"parameter `{show(p)}` needs a type: write ({show(p)} τ)", p)
        pitems = _plist(p, "a parameter (x τ)")
        if len(pitems) == 1:
            raise _err(f"parameter `{show(pitems[0])}` needs a type: write ({show(pitems[0])} τ)", p)
        if len(pitems) != 2:
            raise _err("a parameter is written (x τ)", p)
        params.append(S.Param(_symbol(pitems[0], "a parameter name"), parse_type(pitems[1]), p.span))
    _unique([(p.name, p.span) for p in params], "parameter")
    return tuple(params)


def _parse_lambda(node: SList) -> S.Lam:
    _arity(node, 3, "(λ ((x τ) ...) e)")
    params = _params(_plist(node.items[1], "the parameter list ((x τ) ...)"), node)
    return S.Lam(params, parse_expr(node.items[2]), node.span)


def _parse_index_or_type_lambda(node: SList):
    is_type = _head(node) in TLAMBDA
    keyword = "Tλ" if is_type else "Iλ"
    _arity(node, 3, f"({keyword} ((x {'k' if is_type else 'γ'}) ...) v)")
    binders = parse_binders(node.items[1], KIND_NAMES if is_type else SORT_NAMES)
    body = parse_expr(node.items[2])
    cls = S.TLam if is_type else S.ILam
    return cls(binders, body, node.span)


def _parse_box(node: SList) -> S.Box:
    if len(node.items) < 3:
        raise _err("malformed `box`: expected (box ι ... e τ)", node)
    indices = tuple(parse_index(i) for i in node.items[1:-2])
    return S.Box(indices, parse_expr(node.items[-2]), parse_type(node.items[-1]), node.span)


def parse_binders(node: SNode, allowed: tuple[str, ...]) -> tuple[S.Binder, ...]:
    what = "kind (Atom, Array, Numeric or Floating)" if allowed == KIND_NAMES else "sort (Dim or Shape)"
    out = []
    spec = _plist(node, f"a binder list ((x {'k' if allowed == KIND_NAMES else 'γ'}) ...)")
    if len(spec) == 2 and all(isinstance(i, SAtom) for i in spec) and spec[1].value in allowed:
        raise _err(f"binders are a list of (x {what.split()[0]}) pairs: write (({' '.join(show(i) for i in spec)}))", node)
    for b in spec:
        items = _plist(b, f"a binder (x {what.split()[0]})")
        if len(items) != 2:
            raise _err(f"a binder is written (x {'k' if allowed == KIND_NAMES else 'γ'}), with a {what}", b)
        name = _symbol(items[0], "a variable name")
        sort = items[1]
        if not (isinstance(sort, SAtom) and sort.value in allowed):
            raise _err(f"expected a {what}, got `{show(sort)}`", sort)
        out.append(S.Binder(name, str(sort.value), b.span))
    _unique([(b.name, b.span) for b in out], "variable")
    return tuple(out)


# ---------------------------------------------------------------------------
# Types


def parse_type(node: SNode) -> S.SType:
    if isinstance(node, SAtom):
        if node.is_symbol:
            name = str(node.value)
            if name in BASE_TYPE_NAMES:
                return S.STBase(BASE_TYPE_NAMES[name], node.span)
            if name in RESERVED:
                raise _err(f"expected a type, got the keyword `{name}`", node)
            return S.STName(name, node.span)
        raise _err(f"expected a type, got `{show(node)}`", node)
    if node.bracket == "[":
        if not node.items:
            raise _err("`[]` is not a type: write [τ ι ...], e.g. [Int 3]", node)
        atom = parse_type(node.items[0])
        shape = S.ISplice(tuple(parse_index(i) for i in node.items[1:]), node.span)
        return S.STArr(atom, shape, node.span)
    head = _head(node)
    if head == "Arr":
        _arity(node, 3, "(Arr τ ι)")
        return S.STArr(parse_type(node.items[1]), parse_index(node.items[2]), node.span)
    if head == "->":
        _arity(node, 3, "(-> (τ ...) τ)")
        params = _plist(node.items[1], "the parameter types (τ ...)")
        return S.STFun(tuple(parse_type(p) for p in params), parse_type(node.items[2]), node.span)
    if head in ("Forall", "Pi", "Sigma"):
        letter = "k" if head == "Forall" else "γ"
        _arity(node, 3, f"({head} ((x {letter}) ...) τ)")
        binders = parse_binders(node.items[1], KIND_NAMES if head == "Forall" else SORT_NAMES)
        return S.STQuant(head, binders, parse_type(node.items[2]), node.span)  # type: ignore[arg-type]
    raise _err(
        f"expected a type (Int, Float, Bool, a type variable, (Arr τ ι), (-> (τ ...) τ), "
        f"Forall, Pi, Sigma or [τ ι ...]), got `{show(node)}`",
        node,
    )


# ---------------------------------------------------------------------------
# Indices


def parse_index(node: SNode) -> S.SIndex:
    if isinstance(node, SAtom):
        if type(node.value) is int:
            if node.value < 0:
                raise _err(f"a dimension is a natural number, got {node.value}", node)
            return S.INat(node.value, node.span)
        if node.is_symbol and node.value not in RESERVED:
            return S.IName(str(node.value), node.span)
        raise _err(f"expected an index, got `{show(node)}`", node)
    head = _head(node)
    if node.bracket == "(" and head in ("Shp", "+", "++"):
        args = tuple(parse_index(i) for i in node.items[1:])
        cls = {"Shp": S.IShp, "+": S.IPlus, "++": S.IAppend}[head]
        return cls(args, node.span)
    raise _err(
        f"expected an index (a natural, an index variable, (Shp ι ...), (+ ι ...) or (++ ι ...)), got `{show(node)}`",
        node,
    )
