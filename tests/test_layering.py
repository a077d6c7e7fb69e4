"""Rules of the code's layering, checked on the source (``ast``, nothing imported):

- ``api/`` imports nothing from SQLAlchemy: routes reach the database through services, and
  database errors are classified in ``elephantasm/db/errors.py``;
- no module of ``elephantasm/services`` imports the ``Runtime``: services get their dependencies
  handed in (``Runtime.packs``, ``Runtime.dreams``, a session factory), built at the edge;
- no import cycles among the modules of ``elephantasm``, ``api`` and ``dreamer``, counting every
  import: top-level, lazy ones inside functions and ``TYPE_CHECKING`` ones (a cycle that only
  type checking sees still ties two modules' designs together).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("elephantasm", "api", "dreamer")
DATABASE_LIBRARIES = ("sqlalchemy", "sqlmodel", "asyncpg")

ALLOWED_EDGES: set[tuple[str, str]] = set()
"""Edges known to close a cycle and being removed on another branch; each names its owner (none now)."""


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for package in PACKAGES for p in (ROOT / package).rglob("*.py")}


def _imported_names(module: str, path: Path) -> Iterator[str]:
    """Every dotted name ``module`` imports, anywhere in its source, relative imports resolved."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            # ``from package import name``: the module ``package.name`` if there is one, else ``package``.
            yield from (f"{base}.{alias.name}" for alias in node.names)


def import_graph() -> dict[str, set[str]]:
    """module → the project modules it imports (a ``from package import module`` counts as the module)."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        targets = set()
        for name in _imported_names(module, path):
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != module:
                targets.add(name)
        graph[module] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            nxt = next((w for w in edges if w not in index or w in on_stack), None)
            if nxt is not None and nxt not in index:
                index[nxt] = low[nxt] = len(index)
                stack.append(nxt)
                on_stack.add(nxt)
                work.append((nxt, iter(sorted(graph[nxt]))))
            elif nxt is not None:
                low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_api_imports_nothing_from_the_database_libraries() -> None:
    offenders = {
        module: name
        for module, path in _modules().items()
        if module.split(".")[0] == "api"
        for name in _imported_names(module, path)
        if name.split(".")[0] in DATABASE_LIBRARIES
    }
    assert offenders == {}, "api/ reaches the database through services and elephantasm/db/errors.py"


def test_no_service_imports_the_runtime() -> None:
    services = {m: p for m, p in _modules().items() if m.startswith("elephantasm.services.")}
    assert "elephantasm.services.dreams.runner" in services  # the package is where this test thinks it is
    offenders = {
        m for m, p in services.items() if any(n.startswith("elephantasm.runtime") for n in _imported_names(m, p))
    }
    assert offenders == set()


def test_lazy_and_type_checking_imports_count(tmp_path: Path) -> None:
    """The rules see an import inside a function and one under ``TYPE_CHECKING``, and find a cycle."""
    path = tmp_path / "m.py"
    path.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from elephantasm.runtime import Runtime\n"
        "def f():\n    from . import sibling\n"
    )
    assert {"elephantasm.runtime.Runtime", "pkg.sibling"} <= set(_imported_names("pkg.m", path))
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_no_import_cycles() -> None:
    graph = import_graph()
    assert "elephantasm.runtime" in graph["api.app"]  # the graph is the real one
    for source, target in ALLOWED_EDGES:
        graph.get(source, set()).discard(target)
    assert cycles(graph) == []
