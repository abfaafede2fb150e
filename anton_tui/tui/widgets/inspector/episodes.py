"""The Episodes tab: search past conversations of this project and read any line of them in full.

The search runs through the Runtime, which reads the log off the event loop, so a large log never blocks typing.
"""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.events import Resize
from textual.message import Message
from textual.widgets import DataTable, Input, Static
from textual.worker import get_current_worker

from anton_tui.memory.episodes.record import DOCUMENT_KINDS
from anton_tui.memory.episodes.store import Episode
from anton_tui.runtime import EpisodeSearch
from anton_tui.tui.widgets.inspector.base import (
    ColumnSpec,
    FixedColumnsTable,
    InspectorTab,
    pick,
    set_columns,
    table_width,
)

MAX_TURNS = 20
COLUMNS = (
    ColumnSpec("time", "Time", 19, drop=1),
    ColumnSpec("role", "Role", 11),
    ColumnSpec("content", "Content", None),
)


def first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def when(episode: Episode) -> str:
    """The episode's time as written (UTC), to the second."""
    return episode.ts[:19].replace("T", " ")


class EpisodesTab(InspectorTab):
    """Full-text search over the project's episode log (.anton/episodes)."""

    TITLE = "Episodes"
    BINDINGS = [
        Binding("slash,ctrl+f", "search", "Search", id="inspector.search"),
        Binding("r", "reload", "Search again", id="inspector.reload"),
    ]
    HELP = """\
## Episodes

Every conversation in this project is logged in `.anton/episodes` (one file per session). Type words to look for
and press `Enter`: matching exchanges are listed with their time (UTC), who spoke and the first line. The summaries
of finished conversations and the reflections that match come first, marked **summary** and **reflection**, with
their date. Move through the list to read a line in full below it.

- `/` or `Ctrl+F`: go to the search box; `Escape` or `Down` returns to the results
- `r`: run the search again
"""

    class Found(Message):
        def __init__(self, result: EpisodeSearch) -> None:
            super().__init__()
            self.result = result

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.query_text = ""
        self.result = EpisodeSearch("")
        self._fitted_width = 0

    def compose(self) -> ComposeResult:
        yield Input(placeholder="Search past conversations, then press Enter…", classes="search")
        yield Static(classes="status")
        yield FixedColumnsTable(cursor_type="row", zebra_stripes=True, classes="results")
        with VerticalScroll(classes="episode"):
            yield Static(classes="episode-text")

    def on_mount(self) -> None:
        self._set_status(self._idle_status() if self.has_runtime else "")
        self.fill_table()

    def runtime_attached(self) -> None:
        if self.query_text:  # asked for before the memory was ready
            self._recall(self.query_text)
        else:
            self._set_status(self._idle_status())

    @property
    def table(self) -> DataTable:
        return self.query_one(DataTable)

    def _idle_status(self) -> str:
        if not self.runtime.memory.episodic_enabled:
            return "Episodic memory is off (ANTON_EPISODIC_MEMORY=false): nothing is logged or searched."
        return "Search this project's past conversations."

    def _set_status(self, text: str) -> None:
        self.query_one(".status", Static).update(Content(text))

    # ---- searching -------------------------------------------------------------------------------------------

    def search(self, query: str) -> None:
        """Look for `query` in the episode log; the results replace the list when the search finishes."""
        query = query.strip()
        if not query:
            return
        self.query_text = query
        search_box = self.query_one(Input)
        if search_box.value.strip() != query:
            search_box.value = query
        self._set_status(f"Searching for “{query}”…")
        if self.has_runtime:  # (else the search starts once the runtime is built)
            self._recall(query)

    def refresh_data(self) -> None:
        if self.query_text:
            self._recall(self.query_text)

    @work(exclusive=True, exit_on_error=False, group="inspector-load")
    async def _recall(self, query: str) -> None:
        result = await self.runtime.memory.search_episodes(query, MAX_TURNS)
        if not get_current_worker().is_cancelled:
            self.post_message(self.Found(result))

    @on(Found)
    def _found(self, message: Found) -> None:
        message.stop()
        self.result = message.result
        result = message.result
        if result.error:
            self._set_status(result.error)
        elif not self.runtime.memory.episodic_enabled:
            self._set_status(self._idle_status())
        elif not result.episodes:
            self._set_status(f"No episodes found matching “{result.query}”.")
        else:
            turns = len({(episode.session, episode.turn) for episode in result.episodes})
            noun = "exchange" if turns == 1 else "exchanges"
            self._set_status(f"{len(result.episodes)} lines from {turns} {noun} matching “{result.query}”.")
        self.fill_table()

    @on(Input.Submitted, ".search")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.search(event.value)
        self.table.focus()

    def action_search(self) -> None:
        self.query_one(Input).focus()

    def action_reload(self) -> None:
        self.refresh_data()

    def on_key(self, event) -> None:
        if event.key in ("escape", "down") and self.query_one(Input).has_focus:
            event.stop()
            self.table.focus()

    # ---- the list and the full text --------------------------------------------------------------------------

    def fill_table(self) -> None:
        table = self.table
        index = table.cursor_row
        shown = set_columns(table, COLUMNS)
        for number, episode in enumerate(self.result.episodes):
            values = (when(episode), episode.role, first_line(episode.content))
            table.add_row(*pick(values, shown), key=str(number))
        self._fitted_width = table_width(table)
        if self.result.episodes:
            table.move_cursor(row=min(index, len(self.result.episodes) - 1), animate=False)
        self._show_episode(table.cursor_row if self.result.episodes else None)

    def on_resize(self, event: Resize) -> None:
        self.call_after_refresh(self._refit)

    def _refit(self) -> None:
        if self.is_mounted and table_width(self.table) != self._fitted_width:
            self.fill_table()

    @on(DataTable.RowHighlighted)
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_episode(event.cursor_row)

    def _show_episode(self, index: int | None) -> None:
        text = self.query_one(".episode-text", Static)
        if index is None or not 0 <= index < len(self.result.episodes):
            text.update(Content(""))
            return
        episode = self.result.episodes[index]
        if episode.role in DOCUMENT_KINDS:  # a conversation summary or a reflection: a file, not a line of the log
            header = f"{episode.role} · {episode.session} · {episode.ts}"
        else:
            header = f"{when(episode)} UTC · session {episode.session} · turn {episode.turn} · {episode.role}"
        text.update(Content.assemble((header, "dim"), "\n", episode.content))
        self.query_one(".episode", VerticalScroll).scroll_home(animate=False)
