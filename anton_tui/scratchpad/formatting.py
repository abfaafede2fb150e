"""How a scratchpad's cells read as text: the tool result of one cell, the `view` list, the `dump` notebook, and the
compaction that shortens old cells so a long session's history stays small."""

from __future__ import annotations

from collections.abc import Iterable

from anton_tui.scratchpad.cell import Cell

OUTPUT_CAP = 10_000
LOGS_CAP = 3_000
PREVIEW_CAP = 2_000
COMPACTED_CODE = "# (compacted — see summary above)"
COMPACT_KEEP_CHARS = 300
NO_OUTPUT = "Code executed successfully (no output)."


def format_cell_result(cell: Cell) -> str:
    """The text the model reads after a cell: [note], [output], [logs], [stderr], [error] sections."""
    sections: list[str] = []
    if cell.stdout:
        total = max(cell.stdout_total_chars, len(cell.stdout))
        sections.append("[output]\n" + _cap(cell.stdout, OUTPUT_CAP, total))
    if cell.logs:
        logs = cell.logs if len(cell.logs) <= LOGS_CAP else cell.logs[:LOGS_CAP] + "\n... (logs truncated)"
        sections.append("[logs]\n" + logs)
    if cell.stderr:
        sections.append("[stderr]\n" + _cap(cell.stderr, OUTPUT_CAP, len(cell.stderr)))
    if cell.error:
        sections.append("[error]\n" + cell.error)
    body = "\n".join(sections) if sections else NO_OUTPUT
    return f"[note]\n{cell.notice}\n{body}" if cell.notice else body


def _cap(text: str, cap: int, total: int) -> str:
    if len(text) <= cap and total <= len(text):
        return text
    return text[:cap] + f"\n\n... (truncated, {total} chars total)"


def is_compacted(cell: Cell) -> bool:
    return cell.code == COMPACTED_CODE


def compact_cell(cell: Cell) -> None:
    """Replace the code by a note and keep only the start of the outputs (the summary is built from them)."""
    if is_compacted(cell):
        return
    cell.code = COMPACTED_CODE
    if len(cell.stdout) > COMPACT_KEEP_CHARS:
        cell.stdout = cell.stdout[:COMPACT_KEEP_CHARS]
        cell.truncated = True
    cell.stderr = cell.stderr[:COMPACT_KEEP_CHARS]
    cell.logs = cell.logs[:COMPACT_KEEP_CHARS]
    if cell.error and len(cell.error) > COMPACT_KEEP_CHARS:
        cell.error = "..." + cell.error[-COMPACT_KEEP_CHARS:]


def compact_old_cells(cells: list[Cell], keep_recent: int) -> None:
    for cell in cells[: max(len(cells) - max(keep_recent, 0), 0)]:
        compact_cell(cell)


def cell_summary(cell: Cell) -> str:
    """One line: how the cell ended, how long it took, and its first line of output or last line of error."""
    outcome: str = cell.status
    if cell.duration is not None:
        outcome += f" in {cell.duration:.1f}s"
    if cell.error:
        detail = "error: " + _last_line(cell.error)
    elif cell.stdout.strip():
        detail = "output: " + _first_line(cell.stdout)
    elif cell.stderr.strip():
        detail = "stderr: " + _first_line(cell.stderr)
    else:
        detail = "no output"
    return f"summary: {outcome}; {detail}"


def _first_line(text: str) -> str:
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    return line[:160]


def _last_line(text: str) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return lines[-1][:160] if lines else ""


def view_cells(name: str, cells: Iterable[Cell]) -> str:
    """Every cell of a pad as `--- Cell {i}: {description} ---` blocks with its code and a short outcome."""
    blocks: list[str] = []
    for cell in cells:
        lines = [f"--- Cell {cell.index}: {cell.description or '(no description)'} ---"]
        if is_compacted(cell):
            lines += [cell_summary(cell), cell.code]
        else:
            lines.append(cell.code.rstrip())
            if cell.stdout:
                lines.append("[output]\n" + _preview(cell))
            if cell.stderr:
                lines.append("[stderr]\n" + _cap(cell.stderr, PREVIEW_CAP, len(cell.stderr)))
            if cell.error:
                lines.append("[error]\n" + cell.error)
        blocks.append("\n".join(lines))
    if not blocks:
        return f"Scratchpad '{name}' has no cells yet."
    return "\n\n".join(blocks)


def dump_cells(name: str, cells: list[Cell]) -> str:
    """The pad as a markdown notebook: one section per cell with its code and what it produced."""
    parts = [f"## Scratchpad: {name} ({len(cells)} cells)"]
    for cell in cells:
        parts.append(f"### Cell {cell.index}: {cell.description or '(no description)'}")
        if is_compacted(cell):
            parts.append(cell_summary(cell))
        parts.append(_fence(cell.code.rstrip(), "python"))
        if cell.stdout:
            parts.append("Output:\n" + _fence(_preview(cell)))
        if cell.stderr:
            parts.append("Stderr:\n" + _fence(_cap(cell.stderr, PREVIEW_CAP, len(cell.stderr))))
        if cell.error:
            parts.append("Error:\n" + _fence(cell.error))
    return "\n\n".join(parts) + "\n"


def _preview(cell: Cell) -> str:
    return _cap(cell.stdout, PREVIEW_CAP, max(cell.stdout_total_chars, len(cell.stdout)))


def _fence(text: str, language: str = "") -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}{language}\n{text}\n{fence}"
