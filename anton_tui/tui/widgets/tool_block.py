"""One tool call in the chat as a collapsed block: the title says which tool, what for, and how it went.

Expanding it shows the details: the code a scratchpad cell ran, the entries `memorize` stored, what `recall` or
`recall_skill` returned. The code is highlighted when the block is first opened: the highlighter costs a noticeable
while the first time (a resumed conversation draws several tool calls before its first frame).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from typing import Any

from textual.content import Content
from textual.widget import Widget
from textual.widgets import Collapsible, Static

from anton_tui.tui.widgets.code import highlighted_python

RESULT_PREVIEW_CHARS = 4_000
SUMMARY_CHARS = 60

_TOOL_ICONS = {"scratchpad": "⚙", "memorize": "✎", "recall": "⌕", "recall_skill": "★"}


def _shorten(text: str, limit: int = SUMMARY_CHARS) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def summarize_call(name: str, tool_input: dict[str, Any]) -> str:
    """A few words saying what the call is for, taken from its input."""
    if name == "scratchpad":
        action = str(tool_input.get("action") or "exec")
        pad = str(tool_input.get("name") or "")
        if action == "exec":
            code = str(tool_input.get("code") or "")
            what = tool_input.get("one_line_description") or next(
                (line for line in code.splitlines() if line.strip()), "(no code)"
            )
            return _shorten(f"{pad}: {what}")
        if action == "install":
            return _shorten(f"{pad}: install {', '.join(map(str, tool_input.get('packages') or []))}")
        return _shorten(f"{action} {pad}")
    if name == "memorize":
        entries = [entry for entry in tool_input.get("entries") or [] if isinstance(entry, dict)]
        if not entries:
            return "no entries"
        first = str(entries[0].get("text", ""))
        more = f" (+{len(entries) - 1} more)" if len(entries) > 1 else ""
        return _shorten(first, SUMMARY_CHARS - len(more)) + more
    if name == "recall":
        return _shorten(f"“{tool_input.get('query', '')}”")
    if name == "recall_skill":
        return _shorten(str(tool_input.get("label", "")))
    return _shorten(json.dumps(tool_input, ensure_ascii=False, default=str))


def _details(name: str, tool_input: dict[str, Any]) -> list[Static]:
    if name == "scratchpad" and tool_input.get("code"):
        return [Static(Content(str(tool_input["code"])), classes="tool-code")]  # highlighted once opened
    if name == "memorize":
        lines = [
            Content.from_markup(
                "[$text-muted]$where[/] $text",
                where=f"{entry.get('scope', 'project')}·{entry.get('kind', 'lesson')}",
                text=str(entry.get("text", "")),
            )
            for entry in tool_input.get("entries") or []
            if isinstance(entry, dict)
        ]
        return [Static(Content("\n").join(lines), classes="tool-input")] if lines else []
    if name in ("recall", "recall_skill"):
        return []
    return [Static(Content(json.dumps(tool_input, indent=2, ensure_ascii=False, default=str)), classes="tool-input")]


class ToolCallBlock(Collapsible):
    """A tool call; collapsed by default, its title updated when the call finishes."""

    def __init__(self, call_id: str, name: str, tool_input: dict[str, Any], *, collapsed: bool = True) -> None:
        self.call_id = call_id
        self.tool_name = name
        self.tool_input = tool_input
        self.summary = summarize_call(name, tool_input)
        self.state = "running"
        self.duration = 0.0
        self.result = ""
        self._result = Static(Content("running…"), classes="tool-result -running")
        details = _details(name, tool_input)
        self._code = str(tool_input["code"]) if name == "scratchpad" and tool_input.get("code") else None
        self._code_static = details[0] if self._code is not None else None
        super().__init__(
            *details,
            self._result,
            title=self._title_content("…", "$text-muted", ""),  # type: ignore[arg-type]  # Content is accepted
            collapsed=collapsed,
            classes="tool-call",
        )

    def watch_collapsed(self, collapsed: bool) -> None:
        """Opened: the code is highlighted now, before the frame that shows it."""
        if not collapsed and self._code is not None and self._code_static is not None:
            code, self._code = self._code, None
            self._code_static.update(highlighted_python(code))

    @property
    def words(self) -> str:
        return f"{self.tool_name} {self.summary}"

    def recipe(self) -> Callable[[], Widget]:
        """Makes the block again as it is now (finished, or cancelled; open or not)."""
        return partial(remade_tool_call, self.call_id, self.tool_name, self.tool_input, self.state, self.duration,
                       self.result, self.collapsed)  # fmt: skip

    def _title_content(self, mark: str, mark_style: str, suffix: str) -> Content:
        icon = _TOOL_ICONS.get(self.tool_name, "▪")
        return Content.from_markup(
            f"$icon [b]$tool[/b] [$text-muted]·[/] $summary [{mark_style}]$mark[/] [$text-muted]$suffix[/]",
            icon=icon,
            tool=self.tool_name,
            summary=self.summary,
            mark=mark,
            suffix=suffix,
        )

    def finish(self, *, success: bool, duration: float, result: str) -> None:
        self.state = "ok" if success else "failed"
        self.duration, self.result = duration, result
        self.set_class(not success, "-failed")
        mark, style = ("✓", "$text-success") if success else ("✗ failed", "$text-error")
        self.title = self._title_content(mark, style, f"{duration:.1f}s")  # type: ignore[assignment]  # Content is accepted
        shown = (
            result
            if len(result) <= RESULT_PREVIEW_CHARS
            else (result[:RESULT_PREVIEW_CHARS] + f"\n… ({len(result):,} characters in all)")
        )
        self._result.update(Content(shown or "(no result)"))
        self._result.remove_class("-running")

    def cancel(self) -> None:
        if self.state == "running":
            self.state = "cancelled"
            self.title = self._title_content("cancelled", "$text-warning", "")  # type: ignore[assignment]  # Content is accepted
            self._result.update(Content("cancelled"))
            self._result.remove_class("-running")


def remade_tool_call(
    call_id: str, name: str, tool_input: dict[str, Any], state: str, duration: float, result: str, collapsed: bool
) -> ToolCallBlock:
    """A tool call's block made again, in the state it had when it left the chat."""
    block = ToolCallBlock(call_id, name, tool_input, collapsed=collapsed)
    if state in ("ok", "failed"):
        block.finish(success=state == "ok", duration=duration, result=result)
    elif state == "cancelled":
        block.cancel()
    return block
