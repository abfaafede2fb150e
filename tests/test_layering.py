"""The two layers stay apart: the engine never imports Textual, and importing it loads no SDK or file watcher."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import anton_tui

PACKAGE = Path(anton_tui.__file__).parent
TUI = PACKAGE / "tui"
HEAVY = ("textual", "anthropic", "openai", "watchdog", "inotify_simple")
ENGINE_PACKAGES = ("anton_tui.memory", "anton_tui.llm", "anton_tui.scratchpad", "anton_tui.agent", "anton_tui.runtime")
ENGINE_MODULES = ("anton_tui.config", "anton_tui.paths")


def _engine_files() -> list[Path]:
    return [p for p in sorted(PACKAGE.rglob("*.py")) if TUI not in p.parents]


def _imported_names(tree: ast.AST, package: str) -> list[tuple[int, str]]:
    """Every (line, dotted name) imported, relative imports resolved against ``package``."""
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = parts[: len(parts) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names.append((node.lineno, target))
            names += [(node.lineno, f"{target}.{alias.name}") for alias in node.names]
    return names


def _package_of(path: Path) -> str:
    return ".".join(path.parent.relative_to(PACKAGE.parent).parts)


def test_engine_never_imports_textual_or_the_tui() -> None:
    offences = []
    for path in _engine_files():
        for line, name in _imported_names(ast.parse(path.read_text(), str(path)), _package_of(path)):
            top = name.split(".")[0]
            into_tui = name == "anton_tui.tui" or name.startswith("anton_tui.tui.")
            if top == "textual" or (into_tui and path.name != "cli.py"):
                offences.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {name}")
    assert offences == []


def test_scan_catches_textual_imports() -> None:
    samples = {"import textual": True, "from textual.app import App": True, "import textualize": False}
    for source, expected in samples.items():
        found = [n for _, n in _imported_names(ast.parse(source), "anton_tui.memory") if n.split(".")[0] == "textual"]
        assert bool(found) == expected, source
    relative = _imported_names(ast.parse("from ..tui.app import run_app"), "anton_tui.memory")
    assert (1, "anton_tui.tui.app") in relative


_IMPORT_ENGINE = """
import importlib, json, pkgutil, sys, traceback
heavy = {heavy!r}
failures, culprits, imported = {{}}, {{}}, []

def note(name):
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in heavy)
    for m in loaded:
        culprits.setdefault(m.split(".")[0], name)

def load(name):
    try:
        importlib.import_module(name)
        imported.append(name)
    except BaseException:
        failures[name] = traceback.format_exc().strip().splitlines()[-1]
    note(name)

for name in {modules!r}:
    load(name)
for package in {packages!r}:
    load(package)
    if package in sys.modules:
        for info in pkgutil.walk_packages(sys.modules[package].__path__, package + ".", onerror=lambda n: None):
            load(info.name)
print(json.dumps({{"failures": failures, "culprits": culprits, "imported": imported}}))
"""


def test_importing_every_engine_module_loads_no_ui_sdk_or_watcher() -> None:
    script = _IMPORT_ENGINE.format(heavy=HEAVY, modules=ENGINE_MODULES, packages=ENGINE_PACKAGES)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)

    assert report["failures"] == {}, "engine modules that fail to import"
    assert report["culprits"] == {}, "heavy package -> first engine module after which it was loaded"
    assert set(ENGINE_MODULES) | set(ENGINE_PACKAGES) <= set(report["imported"])


def test_version_flag_imports_no_ui_sdk_or_watcher() -> None:
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "anton_tui", "--version"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0
    assert result.stdout.startswith("anton-tui ")
    imported = {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}
    assert "anton_tui.cli" in imported
    assert sorted(m for m in imported if m.split(".")[0] in HEAVY) == []


def test_the_app_reaches_the_engine_only_through_the_runtime() -> None:
    """`tui/app.py` wires screens to a `Runtime` (and `tui/conversations.py` acts on the conversation through it); they
    import nothing of memory, models or scratchpads."""
    engine = ("anton_tui.memory", "anton_tui.llm", "anton_tui.scratchpad", "anton_tui.agent")
    for module in ("app.py", "conversations.py"):
        path = TUI / module
        names = [name for _, name in _imported_names(ast.parse(path.read_text()), "anton_tui.tui")]
        assert [name for name in names if name.startswith(engine)] == [], module


# What opens, renames or deletes files: the built-in open(), the os and shutil file functions, and Path's own I/O
# methods. Screens and widgets ask the Runtime instead.
_OS_CALLS = {"open", "rename", "replace", "remove", "unlink", "rmdir", "makedirs", "mkdir", "rmtree", "move", "copy",
             "copyfile", "copytree", "listdir", "scandir"}  # fmt: skip
_PATH_CALLS = {"write_text", "write_bytes", "read_text", "read_bytes", "unlink", "mkdir", "touch", "rmdir", "rename",
               "iterdir", "rglob", "glob", "is_file", "is_dir", "exists", "stat"}  # fmt: skip


def _file_call(node: ast.Call) -> str | None:
    func = node.func
    if isinstance(func, ast.Name) and func.id == "open":
        return "open"
    if not isinstance(func, ast.Attribute):
        return None
    owner = func.value.id if isinstance(func.value, ast.Name) else ""
    if owner in ("os", "shutil") and func.attr in _OS_CALLS:
        return f"{owner}.{func.attr}"
    if func.attr in _PATH_CALLS:
        return func.attr
    return None


def test_no_screen_or_widget_opens_renames_or_deletes_a_file() -> None:
    offences = []
    for folder in (TUI / "screens", TUI / "widgets"):
        for path in sorted(folder.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Call) and (call := _file_call(node)):
                    offences.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} calls {call}()")
    assert offences == []


def test_the_file_call_scan_finds_what_it_should() -> None:
    found = {source: _file_call(ast.parse(source).body[0].value) for source in
             ("open(p)", "os.rename(a, b)", "shutil.rmtree(p)", "p.write_text(t)", "text.replace('a', 'b')",
              "widget.remove()", "self.open(ref)")}  # fmt: skip
    assert found == {"open(p)": "open", "os.rename(a, b)": "os.rename", "shutil.rmtree(p)": "shutil.rmtree",
                     "p.write_text(t)": "write_text", "text.replace('a', 'b')": None, "widget.remove()": None,
                     "self.open(ref)": None}  # fmt: skip
