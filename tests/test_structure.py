"""The package's shape (issue 12): folders are the pipeline, and the imports between modules say so.

Every module under ``remora/`` is parsed with ``ast``; every ``import`` and ``from … import`` counts,
at module level or inside a function (only ``if TYPE_CHECKING:`` blocks, which never run, are left
out), with relative imports resolved.  Importing ``a.b.c`` also runs the packages ``a`` and ``a.b``,
so those count too, except the importing module's own enclosing packages (always already running).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "remora"
MAX_LINES = 600
#: where NumPy may be imported: the backends, and the two front doors whose users hand in and get
#: back NumPy arrays — the Python API and the notebook magics (the namespace's arrays, displays)
NUMPY_HOMES = ("remora.backends", "remora.interfaces.api", "remora.interfaces.notebook",
               "remora.interfaces.datafiles")  # (data files on the command line: .npy, .csv, .txt)


def module_name(path: Path) -> str:
    parts = ("remora",) + path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES: dict[str, Path] = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def is_package(name: str) -> bool:
    return MODULES.get(name, Path()).name == "__init__.py"


def _type_checking_only(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def _import_nodes(tree: ast.AST):
    """Every import statement in ``tree``, at any depth, except under ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        children = list(ast.iter_child_nodes(node))
        if _type_checking_only(node):
            children = [c for c in children if c not in node.body]
        stack.extend(children)


def _resolve(module: str, node: ast.ImportFrom) -> str:
    """The absolute name ``from …X import`` names, relative levels resolved against ``module``."""
    if not node.level:
        return node.module or ""
    package = module.split(".") if is_package(module) else module.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imported_modules(module: str) -> set[str]:
    """The modules of ``remora`` that importing ``module`` runs, directly."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    targets: set[str] = set()
    for node in _import_nodes(tree):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        else:
            base = _resolve(module, node)
            targets.add(base)
            targets.update(f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in MODULES)
    ancestors = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)}
    found = set()
    for target in targets:
        parts = target.split(".")
        for i in range(1, len(parts) + 1):
            name = ".".join(parts[:i])
            if name in MODULES and name not in ancestors and name != module:
                found.add(name)
    return found


GRAPH = {m: imported_modules(m) for m in MODULES}


def components(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module: each is one knot of cycles."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(v: str) -> None:  # Tarjan; the graph has ~50 nodes, so recursion is fine
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return components


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (as a path a → … → a) through each knot."""
    return [_a_cycle(graph, c) for c in components(graph)]


def _a_cycle(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """A shortest path from the component's first module back to itself, inside the component."""
    start = min(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & component):
                if w == start:
                    return paths[v] + [start]
                if w not in paths:
                    paths[w] = paths[v] + [w]
                    nxt.append(w)
        frontier = nxt
    raise AssertionError("a strongly connected component without a cycle")


def test_the_walk_sees_the_package():
    """The walk finds the pipeline's folders and resolves relative imports (a sanity check on it)."""
    assert {"remora.front.reader", "remora.statics.typecheck", "remora.dynamics.engine"} <= set(MODULES)
    assert "remora.front.reader" in GRAPH["remora.front.parse"]
    assert "remora.errors" in GRAPH["remora.front.reader"]


def test_cycle_finder_reports_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    knots = components(GRAPH)
    report = [
        f"{' → '.join(_a_cycle(GRAPH, k))}   (the knot: {', '.join(sorted(k))})" for k in knots
    ]
    assert not knots, "import cycles:\n" + "\n".join(report)


def test_no_module_is_over_600_lines():
    long = {m: n for m, p in MODULES.items() if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


#: What the package defines once (issue 12, "one of each"): a second definition is a copy that
#: can drift from the first.
ONCE = ("MAX_RANK", "MAX_ATOMS", "shape_problem", "spread", "function_name", "principal_frame", "prefix_ordered")


def top_level_definitions(name: str) -> list[str]:
    """The modules that define ``name`` at top level (a function, a class or an assignment)."""
    out = []
    for module, path in MODULES.items():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
                out.append(module)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(x, ast.Name) and x.id == name for x in targets):
                    out.append(module)
    return out


@pytest.mark.parametrize("name", ONCE)
def test_defined_once(name):
    assert len(top_level_definitions(name)) == 1, f"{name} is defined in {top_level_definitions(name)}"


def test_every_syntax_class_has_its_typing_rule():
    """The checker dispatches through one table from syntax class to the method of its rule
    (named after the paper's: ``t_var``, ``t_app``, ``t_unbox``, …): every expression and atom
    class of the syntax has a row, and nothing else does."""
    import typing

    from remora.front import syntax as S
    from remora.statics.typecheck import RULES, Checker

    classes = set(typing.get_args(S.Expr)) | set(typing.get_args(S.Atom))
    assert set(RULES) == classes
    for cls, rule in RULES.items():
        assert rule.__name__.startswith("t_") and getattr(Checker, rule.__name__) is rule, cls


#: where each other array library may be imported: only its backend
#: the optional array libraries: imported by their backend modules alone (contract §8)
JAX_HOMES = ("remora.backends.jax_backend", "remora.backends.jax_ops", "remora.backends.jax_compiled",
             "remora.backends.jax_width", "remora.backends.jax_transforms", "remora.backends.jax_lower")
DASK_HOMES = ("remora.backends.dask_backend", "remora.backends.dask_operands", "remora.backends.dask_failures",
              "remora.backends.dask_blocks", "remora.backends.dask_positions")
LIBRARY_HOMES = {"jax": JAX_HOMES, "jaxlib": JAX_HOMES, "dask": DASK_HOMES, "distributed": DASK_HOMES}


def numpy_importers(library: str = "numpy", homes: tuple = NUMPY_HOMES) -> list[str]:
    out = []
    for module, path in MODULES.items():
        if module.startswith(homes):
            continue
        for node in _import_nodes(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if any(n == library or n.startswith(library + ".") for n in names) and not getattr(node, "level", 0):
                out.append(module)
                break
    return sorted(out)


@pytest.mark.parametrize("library", sorted(LIBRARY_HOMES))
def test_other_array_libraries_only_in_their_backend(library):
    offenders = numpy_importers(library, LIBRARY_HOMES[library])
    assert not offenders, f"{library} imported outside {', '.join(LIBRARY_HOMES[library])}: {offenders}"


def test_numpy_only_in_the_backends_and_the_api():
    offenders = numpy_importers()
    assert not offenders, f"numpy imported outside {', '.join(NUMPY_HOMES)}: {offenders}"
