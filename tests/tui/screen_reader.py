"""What the app shows, read through Textual's public API: the SVG screenshot (`App.export_screenshot()`, what the
snapshot plugin compares) turned back into rows of text, and into runs of text with their colour.

Rich writes each run of same-styled text as `<text class="…-rN" x="…" clip-path="url(#…-line-ROW)">`, at `x` =
column × the width of a cell, and leaves out runs of spaces (the columns in between are spaces again here); the
newline that ends each row comes as a run of its own.
"""

from __future__ import annotations

import html
import re
from typing import Any, NamedTuple

from rich.cells import cell_len

_TEXT = re.compile(
    r'<text class="[^"]*?-(?P<style>r\d+)" x="(?P<x>[\d.]+)" y="[\d.]+" textLength="[\d.]+" '
    r'clip-path="url\(#[^)]*-line-(?P<row>\d+)\)">(?P<text>[^<]*)</text>'
)
_STYLE = re.compile(r"\.[\w-]+?-(?P<style>r\d+) \{ (?P<rules>[^}]*) \}")
_CELL_WIDTH = 20 * 0.61  # Rich's SVG: font size 20, a cell is 0.61 of it wide


class Run(NamedTuple):
    row: int
    column: int
    text: str
    colour: str | None  # "#rrggbb"


def screen_runs(app: Any) -> list[Run]:
    """The runs of text on screen, in reading order, each with its row, column and colour."""
    svg = app.export_screenshot()
    colours = {}
    for match in _STYLE.finditer(svg):
        fill = re.search(r"fill: (#[0-9a-fA-F]{6})", match["rules"])
        colours[match["style"]] = fill[1].lower() if fill else None
    runs = []
    for match in _TEXT.finditer(svg):
        text = html.unescape(match["text"]).replace("\xa0", " ").replace("\n", "")  # each row ends with a newline
        if text:
            runs.append(Run(int(match["row"]), round(float(match["x"]) / _CELL_WIDTH), text, colours.get(match["style"])))
    return runs


def screen_text(app: Any) -> str:
    """The characters on the terminal, one line per row, each as wide as the terminal."""
    width, height = app.size
    rows: list[list[str]] = [[] for _ in range(height)]
    used = [0] * height  # cells filled so far in each row
    for run in screen_runs(app):
        if run.row >= height:
            continue
        rows[run.row].append(" " * max(run.column - used[run.row], 0) + run.text)
        used[run.row] = max(used[run.row], run.column) + cell_len(run.text)
    return "\n".join("".join(parts) + " " * max(width - cells, 0) for parts, cells in zip(rows, used))
