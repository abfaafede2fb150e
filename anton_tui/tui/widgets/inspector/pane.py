"""The inspector: Anton's memory at a glance, one tab each for rules, lessons, profile, skills, ACC and episodes.

Give it the session's `MemoryStores`. It reloads a tab when that tab's files change (`FilesChanged` from the file
watcher, batched for a tenth of a second), follows the session's events through `apply_event`, and reports failed
reloads once as a notification.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import TabbedContent, TabPane
from textual.worker import Worker, WorkerState

from anton_tui.agent.events import AccEventObserved, AccNudge, MemoryWritten
from anton_tui.tui.stores import MemoryStores
from anton_tui.tui.watchers import ChangeBatcher, FilesChanged
from anton_tui.tui.widgets.inspector.acc_feed import AccFeedTab
from anton_tui.tui.widgets.inspector.base import InspectorTab
from anton_tui.tui.widgets.inspector.episodes import EpisodesTab
from anton_tui.tui.widgets.inspector.lessons import LessonsTab
from anton_tui.tui.widgets.inspector.profile import ProfileTab
from anton_tui.tui.widgets.inspector.rules import RulesTab
from anton_tui.tui.widgets.inspector.skills_tab import SkillsTab

TABS: dict[str, type[InspectorTab]] = {
    "rules": RulesTab,
    "lessons": LessonsTab,
    "profile": ProfileTab,
    "skills": SkillsTab,
    "acc": AccFeedTab,
    "episodes": EpisodesTab,
}
AREA_TABS: dict[str, tuple[str, ...]] = {
    "memory": ("rules", "lessons", "profile"),
    "skills": ("skills",),
    "episodes": ("episodes",),
}


class InspectorPane(Vertical):
    """Tabs over the memory stores; see the module docstring."""

    DEFAULT_CSS = (Path(__file__).parent / "inspector.tcss").read_text(encoding="utf-8")
    ALLOW_MAXIMIZE = True
    HELP = """\
## Inspector

Anton's memory at a glance. Each tab reloads by itself when its files change on disk, whoever changed them.

- **Rules**, **Lessons**, **Profile**: what Anton remembers, global and for this project; edit with `e`, delete
  with `d`
- **Skills**: saved procedures and how often they were used; `s` sorts
- **ACC**: failure patterns the error monitor noticed in this session
- **Episodes**: search past conversations of this project

Use the arrow keys on the tab row to switch tabs. Lines that cannot be read are shown as warnings and never
rewritten.
"""

    def __init__(
        self, stores: MemoryStores, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.stores = stores
        self._batcher = ChangeBatcher(self, self.refresh_areas)
        self._reported_failures: set[str] = set()

    def compose(self) -> ComposeResult:
        with TabbedContent(id="inspector-tabs"):
            for tab_id, tab_class in TABS.items():
                with TabPane(tab_class.TITLE, id=f"inspector-{tab_id}"):
                    yield tab_class(self.stores, id=f"inspector-{tab_id}-tab")

    # ---- the tabs ----------------------------------------------------------------------------------------------

    def tab(self, tab_id: str) -> InspectorTab:
        """The widget of one tab: rules, lessons, profile, skills, acc or episodes."""
        return self.query_one(f"#inspector-{tab_id}-tab", TABS[tab_id])

    @property
    def acc_feed(self) -> AccFeedTab:
        return self.query_one(AccFeedTab)

    def show_tab(self, tab_id: str) -> None:
        """Bring a tab to the front and focus its list."""
        self.query_one(TabbedContent).active = f"inspector-{tab_id}"
        self.tab(tab_id).focus_main()

    @property
    def active_tab(self) -> str:
        return self.query_one(TabbedContent).active.removeprefix("inspector-")

    # ---- reloading ---------------------------------------------------------------------------------------------

    def refresh_data(self) -> None:
        """Reload every tab from disk."""
        for tab_id in TABS:
            self.tab(tab_id).refresh_data()

    def refresh_areas(self, areas: Iterable[str]) -> None:
        """Reload only the tabs showing these areas ("memory", "skills", "episodes"; others are ignored)."""
        tab_ids = {tab_id for area in areas for tab_id in AREA_TABS.get(area, ())}
        for tab_id in TABS:
            if tab_id in tab_ids:
                self.tab(tab_id).refresh_data()

    @on(FilesChanged)
    def _files_changed(self, message: FilesChanged) -> None:
        self._batcher.add(message.areas)

    # ---- session events ----------------------------------------------------------------------------------------

    def apply_event(self, event: object) -> None:
        """Follow the session: ACC events go to the feed; memory writes reload the memory tabs."""
        if isinstance(event, (AccEventObserved, AccNudge)):
            self.acc_feed.add(event)
        elif isinstance(event, MemoryWritten):
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
        error = event.worker.error
        text = f"{type(error).__name__}: {error}"
        if text not in self._reported_failures:  # a failing reload repeats on every change; say it once
            self._reported_failures.add(text)
            self.notify(text, title="The inspector could not read the memory files", severity="error", timeout=10)
