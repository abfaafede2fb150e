"""No two modules of anton_tui import each other, directly or around a longer circle.

Imports under `if TYPE_CHECKING:` never run and do not count. A circle of module-level imports breaks as soon as
the wrong module is imported first; one that goes through an import inside a function runs later, when that
function is called, and still ties the modules together: neither is allowed (save the known exception below).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anton_tui

PACKAGE = Path(anton_tui.__file__).parent

# Circles allowed for now (none): a circle found here is cut where it belongs, not listed.
KNOWN_CIRCLES: set[frozenset[str]] = set()


@dataclass(frozen=True)
class Imports:
    """Each module's imports of other modules of the package: those at module level, and all that run."""

    at_load: dict[str, set[str]]
    running: dict[str, set[str]]


def _module_name(path: Path, package: Path) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_only(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(body: list[ast.stmt], in_function: bool = False) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement that runs, with whether it runs only when a function is called."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, in_function
        elif isinstance(node, ast.If) and _type_checking_only(node.test):
            yield from _imports(node.orelse, in_function)
        else:
            inside = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    yield from _imports([child], inside)
                elif isinstance(child, ast.excepthandler | ast.match_case):
                    yield from _imports(child.body, inside)


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool, known: set[str]) -> set[str]:
    """The package's modules this statement loads (packages on the way included, but not the importer's own)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = module if is_package else module.rpartition(".")[0]
        if node.level:
            base = ".".join(base.split(".")[: len(base.split(".")) - node.level + 1])
            origin = f"{base}.{node.module}" if node.module else base
        else:
            origin = node.module or ""
        names = [origin] + [f"{origin}.{alias.name}" for alias in node.names]
    found = set()
    for name in names:
        parts = name.split(".")
        for end in range(1, len(parts) + 1):
            candidate = ".".join(parts[:end])
            if candidate in known and candidate != module and not module.startswith(candidate + "."):
                found.add(candidate)
    return found


def scan(package: Path) -> Imports:
    files = {_module_name(path, package): path for path in sorted(package.rglob("*.py"))}
    at_load: dict[str, set[str]] = {name: set() for name in files}
    running: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node, in_function in _imports(tree.body):
            targets = _targets(node, name, path.name == "__init__.py", set(files))
            running[name] |= targets
            if not in_function:
                at_load[name] |= targets
    return Imports(at_load, running)


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of two or more modules (Tarjan), each as one circle through all of them."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = set()
            while True:
                member = stack.pop()
                group.add(member)
                if member == module:
                    break
            if len(group) > 1:
                groups.append(group)

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return [_circle_through(group, graph) for group in groups]


def _circle_through(group: set[str], graph: dict[str, set[str]]) -> list[str]:
    """One circle within `group`, from its first module back to it, to show where to cut."""
    start = min(group)
    paths = {start: [start]}
    queue = [start]
    while queue:
        module = queue.pop(0)
        for target in sorted(graph[module] & group):
            if target == start:
                return paths[module] + [start]
            if target not in paths:
                paths[target] = paths[module] + [target]
                queue.append(target)
    raise AssertionError(f"no circle in {sorted(group)}")


def _unexpected(found: list[list[str]]) -> list[str]:
    return [" -> ".join(circle) for circle in found if frozenset(circle) not in KNOWN_CIRCLES]


def test_no_import_circle_at_module_level() -> None:
    assert _unexpected(circles(scan(PACKAGE).at_load)) == []


def test_no_import_circle_through_imports_inside_functions_either() -> None:
    assert _unexpected(circles(scan(PACKAGE).running)) == []


def test_the_scan_finds_circles_and_leaves_type_checking_imports_out(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    sources = {
        "__init__.py": "",
        "a.py": "from pkg import b\n",
        "b.py": "import pkg.a\n",
        "c.py": "def later():\n    from .sub import d\n",
        "sub/__init__.py": "",
        "sub/d.py": "from ..c import later\n",
        "e.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import f\n",
        "f.py": "from pkg import e\n",
        "g.py": "try:\n    from pkg import h\nexcept ImportError:\n    h = None\n",
        "h.py": "class H:\n    from pkg import g\n",
    }
    for name, source in sources.items():
        (package / name).write_text(source)
    imports = scan(package)
    at_load = {frozenset(circle) for circle in circles(imports.at_load)}
    assert at_load == {frozenset({"pkg.a", "pkg.b"}), frozenset({"pkg.g", "pkg.h"})}
    running = {frozenset(circle) for circle in circles(imports.running)}
    assert running == at_load | {frozenset({"pkg.c", "pkg.sub.d"})}
    assert ["pkg.c", "pkg.sub.d", "pkg.c"] in circles(imports.running)
    assert imports.running["pkg.sub.d"] == {"pkg.c"}  # its own package is not an import of its own
    assert "pkg.f" not in imports.running["pkg.e"]
