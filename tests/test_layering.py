"""The two layers stay apart: the engine never imports Textual, importing it loads no SDK or file watcher, and the UI
reaches the engine only through the Runtime: it imports the Runtime, its result types and the engine's event and data
types, a few constants, and nothing else (no store, no helper), and it never touches the memory stores."""

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


# ---- what the UI may import of the engine ------------------------------------------------------------------------

UI_MAY_IMPORT: dict[str, frozenset[str] | None] = {
    # the program's version, and the process's garbage-collection policy (the app settles it after its first frame)
    "anton_tui": frozenset({"__version__", "gc_policy"}),
    # the Runtime, its starter and the result types it hands out (None: any name the module defines)
    "anton_tui.runtime": None,
    "anton_tui.runtime.editor": frozenset({"EditorError", "edit_text", "editor_command"}),  # `$EDITOR` on a prompt
    # events the session emits, and the engine's own event types inside them
    "anton_tui.agent.events": None,
    "anton_tui.agent.goal": frozenset({"GoalFinished", "GoalTurnStarted", "GoalUsageError"}),
    "anton_tui.agent.mentions": frozenset({"MentionRefused"}),
    "anton_tui.agent.shell": frozenset({"ShellFinished", "ShellOutput"}),
    "anton_tui.scratchpad.events": None,
    "anton_tui.memory.learners.acc": frozenset({"Event", "Lesson"}),
    "anton_tui.memory.review.proposal": frozenset({"HeldChange"}),  # a change held for review, in the question
    # data types the Runtime's snapshots carry, and the errors its operations raise
    "anton_tui.memory.engrams.engram": frozenset({"Engram", "MemoryFileError", "MemoryProblem"}),
    "anton_tui.memory.engrams.rule_figures": frozenset({"RuleFigures", "NO_FIGURES"}),  # the Rules tab's figures
    "anton_tui.memory.episodes.store": frozenset({"Episode"}),
    "anton_tui.memory.skills.model": frozenset({"Skill", "BrokenSkill", "LegacyLayoutError", "ReadOnlySkillError"}),
    "anton_tui.memory.skills.install": frozenset({"Offer"}),
    "anton_tui.memory.sync.syncer": frozenset({"SyncOutcome"}),
    "anton_tui.scratchpad.cell": frozenset({"Cell"}),
    "anton_tui.llm.errors": frozenset({"LLMError"}),
    "anton_tui.paths": frozenset({"AntonPaths"}),
    # constants
    "anton_tui.memory.skills.sources": frozenset({"SOURCE_ORDER", "SOURCE_TITLES"}),
    "anton_tui.memory.skills.format": frozenset({"STAGES"}),
    "anton_tui.memory.episodes.record": frozenset({"DOCUMENT_KINDS"}),  # the roles of recalled summaries, reflections
    "anton_tui.agent.transcript": frozenset({"CANCELLED_TURN"}),  # what a cancelled turn reads as, live and resumed
    # the settings as the first frame and the setup screen read them, and the setup form's rules (its checks, the
    # variable names it writes, where each value in use comes from), made for the setup screen
    "anton_tui.settings_sources": frozenset(
        {"FirstFrame", "EnvLayers", "SettingsError", "SETTINGS_ERROR_EXIT", "ENVIRONMENT", "setting_choices"}
    ),
    "anton_tui.config": frozenset({"Settings", "SettingsError"}),
    "anton_tui.settings_form": None,
    # whether the app runs in a browser tab, and whether that tab has a clipboard (`anton-tui serve` sets them)
    "anton_tui.serve": frozenset({"SERVED_ENV", "WITHOUT_CLIPBOARD"}),
}
"""Engine module -> the names `anton_tui/tui/` may import from it."""

def _engine_imports(tree: ast.AST) -> list[tuple[int, str, str | None]]:
    """Every (line, engine module, name) a UI module imports; name is None for `import module`."""
    found: list[tuple[int, str, str | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found += [(node.lineno, node.module, alias.name) for alias in node.names]
    return [(line, module, name) for line, module, name in found
            if module.split(".")[0] == "anton_tui" and not module.startswith("anton_tui.tui")]  # fmt: skip


def _not_allowed(module: str, name: str | None) -> bool:
    allowed = UI_MAY_IMPORT.get(module, frozenset())
    if name is None:
        return True  # `import anton_tui.memory…` would reach everything in it
    return not (allowed is None or name in allowed)


def _ui_files() -> list[Path]:
    return sorted(TUI.rglob("*.py"))


def test_the_ui_imports_only_the_runtime_and_the_engines_event_and_data_types() -> None:
    offences = []
    for path in _ui_files():
        for line, module, name in _engine_imports(ast.parse(path.read_text(), str(path))):
            if _not_allowed(module, name):
                offences.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {module}.{name or ''}")
    assert offences == []


def test_the_ui_never_touches_the_memory_stores() -> None:
    offences = []
    for path in _ui_files():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Attribute) and node.attr in ("stores", "_stores"):
                offences.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} reads .{node.attr}")
    assert offences == []


def test_the_allowed_names_exist_and_the_scan_catches_stores_and_helpers() -> None:
    import importlib
    import importlib.util

    for module, names in UI_MAY_IMPORT.items():
        loaded = importlib.import_module(module)
        missing = [name for name in names or () if not hasattr(loaded, name)]
        assert [name for name in missing if importlib.util.find_spec(f"{module}.{name}") is None] == [], module
    samples = {
        "from anton_tui.memory.stores import MemoryStores": True,
        "from anton_tui.memory.engrams.hippocampus import Hippocampus": True,
        "from anton_tui.memory.skills.store import SkillStore": True,
        "from anton_tui.memory.learners.compaction import file_sizes": True,
        "import anton_tui.memory.engrams.engram": True,
        "from anton_tui.memory.engrams.engram import MemoryFileError": False,
        "from anton_tui.runtime import Runtime, SkillListing": False,
        "from anton_tui.agent.events import TurnFinished": False,
        "from anton_tui.tui.commands import run": False,
    }
    for source, refused in samples.items():
        assert any(_not_allowed(m, n) for _, m, n in _engine_imports(ast.parse(source))) == refused, source
    reads = [node.attr for node in ast.walk(ast.parse("ctx.runtime.stores.skills")) if isinstance(node, ast.Attribute)]
    assert "stores" in reads


def test_every_name_the_runtime_package_offers_loads_when_asked_for() -> None:
    """`anton_tui.runtime` loads its names lazily: each one it lists is found, and is the same object as in its
    module (a name left out of its table would fail only where the UI first asks for it)."""
    import importlib

    import anton_tui.runtime as runtime

    for name in runtime.__all__:
        value = getattr(runtime, name)
        assert value is getattr(importlib.import_module(value.__module__), name), name
