"""The inspector: Anton's memory at a glance, one tab each for rules, lessons, profile, skills, ACC and episodes.

Give it the `Runtime`, or first the first rows of the memory listings (`RuntimeStarter.first_look`, read cheaply
from the start of the files before the first frame) and the runtime once it is built (`attach_runtime`). Made before
the runtime, the first frame has the Rules tab alone, with its first rows; once that frame is painted
(`FirstRowsPainted`) the other tabs are made, the lessons and profile tabs with their first rows, and the runtime is
built. Once the runtime is there, the pane reads the tab in view through it, then the other tabs one after another,
and posts `InspectorPane.Loaded` (the app starts its file watcher then); a tab shown before its turn loads at once.
It reloads a loaded tab when that tab's files change (`FilesChanged` from the file watcher, batched for a tenth of a
second), follows the session's events through `apply_event`, and reports failed reloads once as a notification.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING, cast

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.geometry import Region
from textual.message import Message
from textual.strip import Strip
from textual.widgets import TabbedContent, TabPane
from textual.worker import Worker, WorkerState

from anton_tui.agent.events import (
    AccEventObserved,
    AccNudge,
    MemorySynced,
    MemoryWritten,
    OutsideAccess,
    TurnFinished,
)  # fmt: skip
from anton_tui.tui.css import stylesheet
from anton_tui.tui.watchers import ChangeBatcher, FilesChanged, FollowInside

if TYPE_CHECKING:
    from anton_tui.runtime import FirstLook, Runtime
    from anton_tui.tui.widgets.inspector.acc_feed import AccFeedTab
    from anton_tui.tui.widgets.inspector.history_tab import HistoryTab
from anton_tui.tui.widgets.inspector.base import FileTab, InspectorTab
from anton_tui.tui.widgets.inspector.entries import EntryTab
from anton_tui.tui.widgets.inspector.lessons import LessonsTab
from anton_tui.tui.widgets.inspector.profile import ProfileTab
from anton_tui.tui.widgets.inspector.rules import RulesTab

TITLES = {"rules": "Rules", "lessons": "Lessons", "profile": "Profile", "skills": "Skills", "acc": "ACC",
          "episodes": "Episodes", "history": "History", "context": "Context"}  # fmt: skip
"""Every tab, in order, with its title (the same as its class's `TITLE`)."""
ENTRY_TABS: dict[str, type[EntryTab]] = {"rules": RulesTab, "lessons": LessonsTab, "profile": ProfileTab}
FIRST_FRAME_TABS = ("rules",)
"""The tabs a first frame before the runtime is built is made with (the tab in view; the others come right after)."""
FIRST_PAINT_WAIT = 0.5  # seconds the pane made before the runtime waits at most for the frame that shows it


@cache
def tab_classes() -> dict[str, type[InspectorTab]]:
    """Every tab's class (importing the modules of the tabs a first frame does without)."""
    from anton_tui.tui.widgets.inspector.acc_feed import AccFeedTab
    from anton_tui.tui.widgets.inspector.context_tab import ContextTab
    from anton_tui.tui.widgets.inspector.episodes import EpisodesTab
    from anton_tui.tui.widgets.inspector.history_tab import HistoryTab
    from anton_tui.tui.widgets.inspector.skills_tab import SkillsTab

    later = {"skills": SkillsTab, "acc": AccFeedTab, "episodes": EpisodesTab, "history": HistoryTab,
             "context": ContextTab}  # fmt: skip
    return {tab_id: ENTRY_TABS[tab_id] if tab_id in ENTRY_TABS else later[tab_id] for tab_id in TITLES}


def history_class() -> type[HistoryTab]:
    return cast("type[HistoryTab]", tab_classes()["history"])


AREA_TABS: dict[str, tuple[str, ...]] = {
    "memory": ("rules", "lessons", "profile", "history", "context"),
    "skills": ("skills",),
    "episodes": ("episodes",),
}


class InspectorPane(Vertical):
    """Tabs over the memory stores; see the module docstring."""

    DEFAULT_CSS = stylesheet(__file__, "inspector.tcss")
    ALLOW_MAXIMIZE = True
    HELP = """\
## Inspector

Anton's memory at a glance. Each tab reloads by itself when its files change on disk, whoever changed them.

- **Rules**, **Lessons**, **Profile**: what Anton remembers, global and for this project; edit with `e`, delete
  with `d`
- **Skills**: saved procedures and how often they were used; `s` sorts
- **ACC**: failure patterns the error monitor noticed in this session
- **Episodes**: search past conversations of this project
- **History**: every change to memory, who made it and its diff; `u` undoes one
- **Context**: the memory and skills the latest request carried, line by line, with sizes

Use the arrow keys on the tab row to switch tabs. Lines that cannot be read are shown as warnings and never
rewritten.
"""

    class FirstRowsPainted(Message):
        """The pane made before the runtime, with the first rows of the memory files, is painted (or is not shown,
        or did not get painted within `FIRST_PAINT_WAIT`)."""

    class Loaded(Message):
        """Every tab has read its files once, but those too big to read before they are shown (`_big`) and not shown
        yet (posted once, after the frame that shows the last of them)."""

    def __init__(
        self,
        runtime: Runtime | None,
        *,
        first_look: FirstLook | None = None,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        """`runtime` may come later (`attach_runtime`); until then the rules, lessons and profile tabs show the first
        rows `first_look` holds, if any."""
        super().__init__(name=name, id=id, classes=classes)
        self.runtime = runtime
        self._first_look = first_look
        self._batcher = ChangeBatcher(self, self.refresh_areas)
        self._reported_failures: set[str] = set()
        self._loading_begun = False
        self._all_tabs = asyncio.Event()
        self._early_events: list[object] = []
        self._waiting_first_paint = self._first_rows_reported = False

    def compose(self) -> ComposeResult:
        # Before the runtime, only the tab in view is made for the first frame; the others (and their modules) come
        # once that frame is painted (`_add_later_tabs`).
        made_now = TITLES if self.runtime is not None else FIRST_FRAME_TABS
        with TabbedContent(id="inspector-tabs"):
            for tab_id, title in TITLES.items():
                with TabPane(title, id=f"inspector-{tab_id}"):
                    if tab_id in made_now:
                        tab_class = ENTRY_TABS[tab_id] if self.runtime is None else tab_classes()[tab_id]
                        yield tab_class(self.runtime, id=f"inspector-{tab_id}-tab")

    def on_mount(self) -> None:
        if self.runtime is not None:  # through the app: its callbacks run after its first frame (a widget's own may
            self._all_tabs.set()  # run before that frame)
            self._show_first_rows()  # (in the tabs left until they are shown)
            self.app.call_after_refresh(self.load_tabs)
            return
        self._show_first_rows()
        if all(node.display for node in self.ancestors_with_self):
            self._waiting_first_paint = True
            self.set_timer(FIRST_PAINT_WAIT, self._first_rows_painted)  # (covered by another screen, say)
        else:
            self.app.call_after_refresh(self._first_rows_painted)  # hidden: nothing to wait for

    def render_lines(self, crop: Region) -> list[Strip]:
        lines = super().render_lines(crop)
        if self._waiting_first_paint:
            # The compositor renders the whole frame and writes it in one go: what comes next runs after that write.
            self.call_next(self._first_rows_painted)
        return lines

    def _first_rows_painted(self) -> None:
        """The frame with the first rows is written: the tabs it did without come now (they took that frame about
        40 ms longer when made before it), and the column is told, which builds the runtime."""
        if self._first_rows_reported:
            return
        self._first_rows_reported, self._waiting_first_paint = True, False
        self.post_message(self.FirstRowsPainted())
        self.call_later(self._add_later_tabs)

    def _show_first_rows(self) -> None:
        """The first rows the first look read, in each list not read yet: until the runtime comes, and in a tab left
        until it is shown (`_big`) even once it has come (the tabs after the first frame's may come after it)."""
        if self._first_look is None:
            return
        for tab in self.query(EntryTab):
            waiting = self.runtime is None or self._big(tab)
            if waiting and not tab.load_started and not tab.first_rows_shown:
                tab.show_first_rows(self._first_look.of(tab.KIND_FILE))

    async def _add_later_tabs(self) -> None:
        """The tabs the first frame did without, once it is painted (with the runtime if it has come meanwhile)."""
        for tab_id, tab_class in tab_classes().items():
            if tab_id in FIRST_FRAME_TABS:
                continue
            pane = self.query_one(f"#inspector-{tab_id}", TabPane)
            if not pane.is_attached:
                return  # the app is closing
            await pane.mount(tab_class(self.runtime, id=f"inspector-{tab_id}-tab"))
        self._show_first_rows()
        self._all_tabs.set()
        for event in self._early_events:
            self.apply_event(event)
        self._early_events.clear()

    def attach_runtime(self, runtime: Runtime) -> None:
        """The runtime is built: the tabs read through it from now on, the tab in view first."""
        if self.runtime is not None:
            return
        self.runtime = runtime
        for tab in self.query(InspectorTab):  # (tabs added later are made with it)
            tab.attach_runtime(runtime)
        self.call_after_refresh(self.load_tabs)

    def tab(self, tab_id: str) -> InspectorTab:
        """The widget of one tab: rules, lessons, profile, skills, acc, episodes, history or context."""
        return self.query_one(f"#inspector-{tab_id}-tab", InspectorTab)

    @property
    def acc_feed(self) -> AccFeedTab:
        return self.query_one("#inspector-acc-tab", cast("type[AccFeedTab]", tab_classes()["acc"]))

    def show_tab(self, tab_id: str) -> None:
        """Bring a tab to the front and focus its list."""
        self.query_one(TabbedContent).active = f"inspector-{tab_id}"
        self.tab(tab_id).focus_main()

    @property
    def active_tab(self) -> str:
        return self.query_one(TabbedContent).active.removeprefix("inspector-")

    # ---- loading and reloading ---------------------------------------------------------------------------------

    @work(group="inspector-first-load", exit_on_error=False)
    async def load_tabs(self) -> None:
        """Load the tab in view, then the others one by one, each shown before the next is read; a tab whose files
        are big (`_big`: 50,000 lessons) is left until it is shown.

        One at a time, because reading files in a thread while the app's loop fills a table slows both down.
        """
        await self._all_tabs.wait()
        self._loading_begun = True
        in_view = f"inspector-{self.active_tab}"
        placed = [(tab, tab.parent.id) for tab in self.query(FileTab) if tab.parent is not None]
        for tab, pane_id in sorted(placed, key=lambda found: found[1] != in_view):
            if not tab.load_started and (pane_id == in_view or not self._big(tab)):
                try:
                    await tab.load_now()
                except Exception as error:  # the other tabs still load
                    tab.load_failed(error)
                    self._report_failure(error)
        self.call_after_refresh(self.post_message, self.Loaded())

    def _big(self, tab: FileTab) -> bool:
        """Whether `tab`'s files are too big to read before it is shown (`EntryTab.READ_WHEN_SHOWN_FROM`), as the
        first look (their sizes, read before the runtime) says; without one, nothing is."""
        if not isinstance(tab, EntryTab) or tab.READ_WHEN_SHOWN_FROM is None or self._first_look is None:
            return False
        return self._first_look.of(tab.KIND_FILE).size >= tab.READ_WHEN_SHOWN_FROM

    @on(TabbedContent.TabActivated)
    def _tab_shown(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "inspector-skills":
            self.post_message(FollowInside("skills"))  # each skill's row shows what its folder holds
        if not self._loading_begun or event.pane is None:
            return  # the first tab is shown while the pane mounts; `load_tabs` reads it after the first frame
        for file_tab in event.pane.query_children(FileTab):
            file_tab.ensure_loaded()
        for history_tab in event.pane.query_children(history_class()):
            history_tab.ensure_loaded()

    def refresh_data(self) -> None:
        """Reload every tab from disk."""
        for tab in self.query(InspectorTab):
            tab.refresh_data()

    def refresh_areas(self, areas: Iterable[str]) -> None:
        """Reload the tabs showing these areas ("memory", "skills", "episodes"; others are ignored).

        A tab that has not been read yet is left alone: its first read will see the change.
        """
        tab_ids = {tab_id for area in areas for tab_id in AREA_TABS.get(area, ())}
        for tab_id in TITLES:
            tab = self.tab(tab_id)
            unread = isinstance(tab, (FileTab, history_class())) and not tab.load_started
            if tab_id in tab_ids and not unread:
                tab.refresh_data()

    @on(FilesChanged)
    def _files_changed(self, message: FilesChanged) -> None:
        self._batcher.add(message.areas)

    # ---- session events ----------------------------------------------------------------------------------------

    def apply_event(self, event: object) -> None:
        """Follow the session: ACC events go to the feed; memory writes reload the memory tabs."""
        if not self._all_tabs.is_set():
            self._early_events.append(event)  # (the ACC and Context tabs come right after the first frame)
        elif isinstance(event, (AccEventObserved, AccNudge, OutsideAccess)):
            self.acc_feed.add(event)
        elif isinstance(event, MemoryWritten):
            self._batcher.add({"memory"})
        elif isinstance(event, TurnFinished):
            self.tab("context").refresh_data()
        elif isinstance(event, MemorySynced):  # a sync may have merged changes or left parts to resolve
            self._batcher.add({"memory"})

    # ---- titles and failures -----------------------------------------------------------------------------------

    @on(InspectorTab.Summary)
    def _summary(self, message: InspectorTab.Summary) -> None:
        message.stop()
        pane_id = message.tab.parent.id if message.tab.parent is not None else None
        if not pane_id:
            return
        title = f"{message.tab.TITLE} {message.count}" if message.count else message.tab.TITLE
        if message.warnings:
            title += " ⚠"
        self.query_one(TabbedContent).get_tab(pane_id).label = title

    @on(Worker.StateChanged)
    def _worker_failed(self, event: Worker.StateChanged) -> None:
        if event.state != WorkerState.ERROR or not event.worker.group.startswith("inspector"):
            return
        event.stop()
        if isinstance(event.worker.node, FileTab):
            event.worker.node.load_failed(event.worker.error)
        self._report_failure(event.worker.error)

    def _report_failure(self, error: BaseException | None) -> None:
        text = f"{type(error).__name__}: {error}"
        if text not in self._reported_failures:  # a failing reload repeats on every change; say it once
            self._reported_failures.add(text)
            self.notify(text, title="The inspector could not read the memory files", severity="error", timeout=10)
