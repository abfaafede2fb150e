"""Scratchpad pieces that need no process: names, requirements, time budgets and how cells read as text."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from anton_tui.scratchpad.cell import Cell
from anton_tui.scratchpad.formatting import (
    COMPACTED_CODE,
    compact_old_cells,
    dump_cells,
    format_cell_result,
    view_cells,
)
from anton_tui.scratchpad.limits import ScratchpadLimits
from anton_tui.scratchpad.names import validate_pad_name
from anton_tui.scratchpad.venv import InvalidRequirementError, validate_requirements


@pytest.mark.parametrize("name", ["main", "analysis-2", "my pad", "données", "a.b", ".hidden"])
def test_good_pad_names_pass(name: str) -> None:
    assert validate_pad_name(name) == name


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("", "non-empty"),
        ("a\x00b", "NUL"),
        ("a:b", "':'"),
        ("a/b", "'/'"),
        ("/etc", "'/'"),
        ("a\\b", "'\\\\'"),
        ("..", "'..'"),
        ("x..y", "'..'"),
        ("...", "'..'"),
        (".", "only of dots"),
        ("pad.", "ends with a dot or a space"),
        ("pad ", "ends with a dot or a space"),
        ("a\nb", "control character"),
    ],
)
def test_bad_pad_names_are_rejected_with_the_reason(name: str, reason: str) -> None:
    with pytest.raises(ValueError) as info:
        validate_pad_name(name)
    assert reason in str(info.value)


def test_requirements_are_normalised() -> None:
    assert validate_requirements(["tomli_w", " pandas>=2,<3 ", "httpx[http2]"]) == [
        "tomli_w",
        "pandas<3,>=2",
        "httpx[http2]",
    ]


@pytest.mark.parametrize(
    "bad",
    [
        "-r requirements.txt",
        "--index-url=http://example.com/simple",
        "pkg @ https://example.com/pkg.whl",
        "git+https://github.com/a/b",
        "./local/dir",
        "/abs/path/pkg.whl",
        "foo; rm -rf /",
        "two words",
        "pkg\n--extra-index-url x",
    ],
)
def test_requirements_with_flags_urls_or_paths_are_rejected(bad: str) -> None:
    with pytest.raises(InvalidRequirementError) as info:
        validate_requirements(["requests", bad])
    assert repr(bad) in str(info.value)
    assert "requests" not in str(info.value).split("Give names")[0]


def test_an_empty_install_list_is_rejected() -> None:
    with pytest.raises(InvalidRequirementError, match="No packages"):
        validate_requirements(["  "])


def test_budget_without_estimate_uses_the_defaults() -> None:
    budget = ScratchpadLimits().budget(None)
    assert (budget.total, budget.inactivity) == (120, 30)


@pytest.mark.parametrize(("estimate", "total", "inactivity"), [(10, 40, 30), (100, 200, 50), (3000, 3600, 1500)])
def test_budget_follows_the_estimate_and_is_capped(estimate: int, total: float, inactivity: float) -> None:
    budget = ScratchpadLimits().budget(estimate)
    assert (budget.total, budget.inactivity) == (total, inactivity)


def test_limits_are_read_from_settings_by_field_name() -> None:
    settings = SimpleNamespace(
        cell_timeout_default=50,
        cell_inactivity_timeout=7,
        cell_inactivity_after_progress=20,
        cell_total_max=600,
        cell_memory_limit_mb=0,
        cell_keep_recent=3,
    )
    limits = ScratchpadLimits.from_settings(settings, heartbeat_interval=2)
    assert limits.timeout_default == 50 and limits.inactivity_timeout == 7
    assert limits.inactivity_after_progress == 20 and limits.total_max == 600
    assert limits.memory_limit_mb is None  # 0 means "no limit"
    assert limits.keep_recent == 3 and limits.heartbeat_interval == 2


def test_result_of_a_quiet_cell() -> None:
    assert format_cell_result(Cell(code="x = 1", status="ok")) == "Code executed successfully (no output)."


def test_result_sections_come_in_order() -> None:
    cell = Cell(code="...", stdout="out\n", logs="lib: hello", stderr="warn\n", error="Traceback ...\nValueError: x")
    assert format_cell_result(cell) == (
        "[output]\nout\n\n[logs]\nlib: hello\n[stderr]\nwarn\n\n[error]\nTraceback ...\nValueError: x"
    )


def test_long_output_is_capped_and_says_how_long_it_was() -> None:
    cell = Cell(code="...", stdout="y" * 1_000_000, stdout_total_chars=50_000_000, truncated=True)
    text = format_cell_result(cell)
    assert text.startswith("[output]\n" + "y" * 10_000 + "\n\n... (truncated, 50000000 chars total)")
    assert len(text) < 10_200


def test_long_logs_are_capped() -> None:
    text = format_cell_result(Cell(code="...", logs="l" * 5000))
    assert text == "[logs]\n" + "l" * 3000 + "\n... (logs truncated)"


def test_a_notice_comes_first() -> None:
    cell = Cell(code="...", notice="The process restarted.")
    assert format_cell_result(cell) == "[note]\nThe process restarted.\nCode executed successfully (no output)."


def _cells(n: int) -> list[Cell]:
    return [
        Cell(code=f"value_{i} = {i}\nprint(value_{i})", description=f"step {i}", index=i, stdout=f"{i}\n" * 400,
             status="ok", started_at=100.0, finished_at=100.5)
        for i in range(1, n + 1)
    ]


def test_old_cells_are_compacted_recent_ones_kept() -> None:
    cells = _cells(8)
    compact_old_cells(cells, keep_recent=5)
    assert [c.code == COMPACTED_CODE for c in cells] == [True] * 3 + [False] * 5
    assert all(len(c.stdout) <= 300 for c in cells[:3])
    assert cells[-1].stdout == "8\n" * 400
    view = view_cells("main", cells)
    assert "--- Cell 1: step 1 ---\nsummary: ok in 0.5s; output: 1\n" + COMPACTED_CODE in view
    assert "--- Cell 8: step 8 ---\nvalue_8 = 8\nprint(value_8)" in view


def test_dump_is_a_markdown_notebook() -> None:
    cells = _cells(2)
    cells[1].code = "print('```')"
    cells[1].error = "boom"
    dump = dump_cells("main", cells)
    assert dump.startswith("## Scratchpad: main (2 cells)\n\n### Cell 1: step 1\n\n```python\nvalue_1 = 1")
    assert "````python\nprint('```')\n````" in dump
    assert "Error:\n```\nboom\n```" in dump


def test_view_of_an_empty_pad() -> None:
    assert view_cells("main", []) == "Scratchpad 'main' has no cells yet."
