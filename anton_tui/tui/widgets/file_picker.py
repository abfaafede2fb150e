"""The `@` file picker: the workspace files matching what follows the `@`, listed above the prompt.

The prompt keeps the focus while it is open (as with the slash-command list): typing filters, Up/Down move, Enter or
Tab inserts the highlighted path, Escape closes it. The files come from the runtime (`Runtime.match_files`), asked by
the prompt bar when the prompt reports a new query.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from anton_tui.tui.css import stylesheet


class FilePicker(OptionList, can_focus=False):
    """Workspace files for an `@` mention; the highlighted one is inserted on Enter or Tab."""

    DEFAULT_CSS = stylesheet(__file__, "file_picker.tcss")

    mention: str | None = None
    """What follows the `@` the picker was opened for (None while it is closed)."""

    def show_files(self, query: str, paths: list[str], *, capped: bool = False) -> None:
        """List `paths` for `query`; `capped` says the workspace listing stopped at its cap (a file may be missing)."""
        self.mention = query
        self.clear_options()
        if paths:
            self.add_options(Option(self._label(path, query), id=path) for path in paths)
        else:
            self.add_option(Option(Content.from_markup("[$text-muted]No file matches @$q[/]", q=query), disabled=True))
        self.highlighted = 0 if paths else None
        self.border_title = f"@{query}" if query else "@ files in the workspace"
        keys = "Enter/Tab insert · Esc close" if paths else "Esc close"
        self.border_subtitle = f"too many files: some are not listed · {keys}" if capped else keys
        self.display = True

    @staticmethod
    def _label(path: str, query: str) -> Content:
        folder, _, name = path.rpartition("/")
        if folder:
            return Content.from_markup("[b]$name[/b]  [$text-muted]$folder/[/]", name=name, folder=folder)
        return Content.from_markup("[b]$name[/b]", name=name)

    def hide(self) -> None:
        self.display = False
        self.mention = None

    def choose(self, step: int) -> None:
        if step < 0:
            self.action_cursor_up()
        else:
            self.action_cursor_down()

    @property
    def highlighted_path(self) -> str | None:
        if not self.display or self.highlighted is None:
            return None
        option = self.get_option_at_index(self.highlighted)
        return None if option.disabled else option.id
