"""The message box: multi-line input with history and slash-command completion.

Enter sends; Ctrl+J (or Shift+Enter where the terminal reports it) starts a new line. Up on the first line and Down
on the last line walk through earlier messages. Every key the prompt is given is handled in the order it was typed,
its own bindings included (see `Prompt.on_key`), so keys sent back to back land as typed. Typing `/` lists the matching commands above the box (with the
skills the user can run, read through the runtime); typing `@` opens the file picker there (`FilePicker`): as the
prompt reports what follows the `@` (`Prompt.MentionTyped`), the prompt bar asks the runtime for the matching
workspace files in a worker and fills the picker.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from typing import Protocol

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList, TextArea
from textual.widgets.option_list import Option
from textual.worker import Worker

from anton_tui.tui.command_registry import SlashCommand, matching_commands
from anton_tui.tui.css import stylesheet
from anton_tui.tui.messages import WorkerFailed
from anton_tui.tui.widgets.file_picker import FilePicker

HISTORY_LIMIT = 500
TYPING_PAUSE = 2.0  # seconds without a key after which a prompt the user emptied counts as left alone
MENTION_AT_CURSOR = re.compile(r"(?:^|(?<=\s))@([^\s@]*)$")


class PromptSource(Protocol):
    """What the prompt reads through the runtime: the skills `/` lists, and the workspace files an `@` names."""

    async def skill_commands(self) -> list[tuple[str, str]]: ...

    async def match_files(self, query: str) -> list[str]: ...

    @property
    def workspace_capped(self) -> bool: ...


class CommandMenu(OptionList, can_focus=False):
    """The list of slash commands matching what is typed; the prompt keeps the focus while it is open."""

    def show_commands(self, commands: list[SlashCommand]) -> None:
        self.clear_options()
        self.add_options(
            Option(
                Content.from_markup(
                    "[b]$label[/b]  [$text-muted]$about[/]", label=command.label, about=command.description
                ),
                id=command.name,
            )
            for command in commands
        )
        self.highlighted = 0 if commands else None
        self.display = bool(commands)
        self.chosen = False

    chosen = False
    """True once the user moved the highlight with Up/Down: only then does Enter take the highlighted entry."""

    def choose(self, step: int) -> None:
        if step < 0:
            self.action_cursor_up()
        else:
            self.action_cursor_down()
        self.chosen = True

    def hide(self) -> None:
        self.display = False

    @property
    def highlighted_name(self) -> str | None:
        if not self.display or self.highlighted is None:
            return None
        return self.get_option_at_index(self.highlighted).id


class Prompt(TextArea):
    """The text box itself; posts `Prompt.Submitted` and leaves it to the screen to accept the message."""

    DEFAULT_CSS = stylesheet(__file__, "prompt.tcss")

    HELP = """\
## Prompt

Type a message and press **Enter** to send it. **Ctrl+J** (or **Shift+Enter**, where your terminal reports it)
starts a new line. **Up** on the first line and **Down** on the last line recall earlier messages. **Ctrl+G** opens
the message in your editor (`$VISUAL`, else `$EDITOR`) and brings the text back when you close it.

Type **@** to pick a file of the workspace: typing filters the list, **Enter** or **Tab** puts `@path` in the
message (Anton is asked to read it), **Escape** closes the list. A message starting with **!** runs the rest as a
shell command in the workspace folder; Anton sees the command and its output with your next message.

Type **/** to see the commands; **Enter** runs what you typed, **Tab** completes the highlighted command,
**Up**/**Down** pick another (then **Enter** completes it), **Escape** closes the list.
While Anton is working, or a **!** command runs, **Escape** stops it.
"""

    BINDINGS = [
        Binding("enter", "submit", "Send", id="prompt.submit"),
        Binding("ctrl+j,shift+enter", "newline", "New line", id="prompt.newline", show=False),
        Binding("ctrl+g", "external_editor", "Edit in $EDITOR", id="prompt.editor", show=False),
        Binding("ctrl+c", "interrupt", "Cancel", id="prompt.interrupt", show=False),
    ]

    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class Interrupted(Message):
        """Ctrl+C with nothing selected: the screen stops what runs, or else empties the prompt of `text`."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class MentionTyped(Message):
        """The text after an `@` at the cursor changed (`query`), or the cursor left the mention (None)."""

        def __init__(self, query: str | None) -> None:
            super().__init__()
            self.query = query

    def __init__(
        self,
        commands: Sequence[SlashCommand],
        menu: CommandMenu,
        *,
        picker: FilePicker | None = None,
        cursor_blink: bool = True,
        id: str | None = None,
    ) -> None:
        super().__init__(
            id=id,
            soft_wrap=True,
            show_line_numbers=False,
            highlight_cursor_line=False,
            placeholder="Ask Anton…  (/ for commands, F1 for help)",
        )
        self.cursor_blink = cursor_blink
        self.commands = commands
        self.menu = menu
        self.picker = picker
        self._mention: str | None = None  # the query last reported with MentionTyped
        self.past_messages: list[str] = []
        self._history_index: int | None = None  # position while browsing; None when editing a fresh message
        self._draft = ""
        self.edits = 0  # changes to the text so far (the screen notes when one is on screen)
        self.skill_commands: list[SlashCommand] = []  # `/label` of user-invocable skills, read when `/` is typed
        self.source: PromptSource | None = None  # the runtime, once it is built
        self._typed_at: float | None = None  # when the user last pressed a key here; None once a message went

    def on_resize(self) -> None:
        # TextArea re-wraps its text on a resize but repaints only if its height changed: a row drawn just before at
        # the old width would stay on screen, cut off, until the next key.
        self.refresh()

    @property
    def composing(self) -> bool:
        """Whether the user is writing here: they typed what the box holds, or pressed a key in the last moments."""
        if self._typed_at is None:
            return False
        return bool(self.text.strip()) or time.monotonic() - self._typed_at < TYPING_PAUSE

    def commit(self, text: str | None = None) -> None:
        """The screen accepted the message `text` (by default all of the box): remember it and take it out of the
        box. What was typed after it, while the screen decided, stays."""
        if text is None:
            text = self.text
        if text.strip() and (not self.past_messages or self.past_messages[-1] != text):
            self.past_messages.append(text)
            del self.past_messages[:-HISTORY_LIMIT]
        self._history_index = None
        self._draft = ""
        rest = self.text[len(text) :] if self.text.startswith(text) else ""
        if rest:
            self.load_text(rest)
            self.move_cursor(self.document.end)
        else:
            self.clear()
            self._typed_at = None

    def action_submit(self) -> None:
        if self.picker is not None and self.picker.display:
            if path := self.picker.highlighted_path:
                self.complete_mention(path)
                return
            self.picker.hide()
        # Enter sends what is typed; only an entry the user picked from the list with Up/Down is completed first.
        completion = self.menu.highlighted_name if self.menu.chosen else None
        if completion is not None and self.text.strip() != f"/{completion}":
            self.complete_command(completion)
            return
        self.menu.hide()
        if self.text.strip():
            self._typed_at = None
            self.post_message(self.Submitted(self.text))

    def action_interrupt(self) -> None:
        """Ctrl+C: copy the selected text if there is any (as in any text box); otherwise the screen decides."""
        if self.selected_text:
            self.action_copy()
            return
        self.post_message(self.Interrupted(self.text))

    def action_external_editor(self) -> None:
        """Hand the terminal to the user's editor with the message in it; the edited text comes back here."""
        from textual.app import SuspendNotSupported

        from anton_tui.runtime.editor import EditorError, edit_text, editor_command

        command = editor_command()
        if command is None:
            self.notify("Set $VISUAL or $EDITOR to edit the message in your editor.", severity="warning")
            return
        try:
            try:
                with self.app.suspend():
                    edited = edit_text(self.text, command)
            except SuspendNotSupported:  # no terminal to hand over (a test, a web driver): run it as it is
                edited = edit_text(self.text, command)
        except EditorError as exc:
            self.notify(f"Editor: {exc}.", severity="error")
            return
        if edited.changed:
            self.load_text(edited.text)
            self.move_cursor(self.document.end)
        self.focus()

    def action_newline(self) -> None:
        start, end = self.selection
        self.replace("\n", start, end)

    def complete_command(self, name: str) -> None:
        self.load_text(f"/{name} ")
        self.move_cursor(self.document.end)
        self.menu.hide()

    async def on_key(self, event: events.Key) -> None:
        """Runs before TextArea's own key handling, which `prevent_default` skips.

        A key the prompt does not insert (Enter, Backspace, Ctrl+J, the arrows…) runs the prompt's binding for it here,
        in turn with the keys typed before and after it. Left to Textual, a binding runs once the key has travelled up
        to the app, by which time keys sent right after it may already be in the box: `line one`, Ctrl+J, `line two`
        sent back to back became `line oneline two` and a new line, and an Enter right after a word sent what had
        been inserted so far."""
        self._typed_at = time.monotonic()
        if self.picker is not None and self.picker.display:
            handled = self._picker_key(event.key)
        else:
            handled = self._menu_key(event.key) if self.menu.display else False
        if not handled and event.key == "up" and self.cursor_at_first_line:
            handled = self._recall(-1)
        elif not handled and event.key == "down" and self.cursor_at_last_line:
            handled = self._recall(+1)
        if not handled and not event.is_printable:
            handled = await self._run_own_binding(event.key)
        if handled:
            event.stop()
            event.prevent_default()

    def on_paste(self) -> None:
        self._typed_at = time.monotonic()

    async def _run_own_binding(self, key: str) -> bool:
        """Run this prompt's binding of `key` now (its own or TextArea's, as the keymap has them); False if the key
        is bound to something else (a screen's or the app's binding), which then gets it as usual."""
        active = self.screen.active_bindings.get(key)
        if active is None or active.node is not self or not active.enabled:
            return False
        await self.run_action(active.binding.action)
        return True

    def _menu_key(self, key: str) -> bool:
        if key in ("up", "down"):
            self.menu.choose(-1 if key == "up" else 1)
            return True
        if key == "tab" and (name := self.menu.highlighted_name):
            self.complete_command(name)
            return True
        if key == "escape":
            self.menu.hide()
            return True
        return False

    def _picker_key(self, key: str) -> bool:
        assert self.picker is not None
        if key in ("up", "down"):
            self.picker.choose(-1 if key == "up" else 1)
            return True
        if key == "tab":
            if path := self.picker.highlighted_path:
                self.complete_mention(path)
            return True
        if key == "escape":
            self.picker.hide()
            return True
        return False

    def mention_at_cursor(self) -> tuple[int, str] | None:
        """(column of the `@`, the text after it) when the cursor ends an `@` mention; not in commands (`/`, `!`)."""
        if self.text.lstrip().startswith(("/", "!")):
            return None
        row, column = self.cursor_location
        before = self.document.get_line(row)[:column]
        match = MENTION_AT_CURSOR.search(before)
        return (match.start(), match.group(1)) if match else None

    def complete_mention(self, path: str) -> None:
        """Replace the `@…` being typed with `@path ` (the space ends the mention)."""
        found = self.mention_at_cursor()
        if self.picker is not None:
            self.picker.hide()
        if found is None:
            return
        row, column = self.cursor_location
        self.replace(f"@{path} ", (row, found[0]), (row, column))
        self._mention = None

    def _recall(self, step: int) -> bool:
        if not self.past_messages:
            return False
        if self._history_index is None:
            if step > 0:
                return False
            self._draft = self.text
            index = len(self.past_messages) - 1
        else:
            index = self._history_index + step
        if index < 0:
            return True  # already at the oldest message
        if index >= len(self.past_messages):
            self._history_index = None
            self.load_text(self._draft)
            self.move_cursor(self.document.end)
            return True
        self._history_index = index
        self.load_text(self.past_messages[index])
        # Keep walking with repeated presses: Up leaves the cursor on the first line, Down on the last.
        self.move_cursor((0, 0) if step < 0 else self.document.end)
        return True

    @on(TextArea.Changed)
    def _count_edit(self) -> None:
        self.edits += 1

    @on(TextArea.Changed)
    @on(TextArea.SelectionChanged)
    def _update_mention(self) -> None:
        if self.picker is None:
            return
        found = self.mention_at_cursor()
        query = found[1] if found is not None else None
        if query == self._mention:
            return
        self._mention = query
        if query is None:
            self.picker.hide()
        self.post_message(self.MentionTyped(query))

    @on(TextArea.Changed)
    def _update_menu(self) -> None:
        if self.text == "/":
            self._read_skill_commands()
        matches = matching_commands([*self.commands, *self.skill_commands], self.text)
        if matches and not (len(matches) == 1 and self.text.strip() == matches[0].label):
            self.menu.show_commands(matches)
        else:
            self.menu.hide()

    async def _skill_commands(self) -> list[SlashCommand]:
        """The `/label` entries of the skills marked `user-invocable: true` (read through the runtime, in a thread)."""
        if self.source is None:
            return []
        try:
            found = await self.source.skill_commands()
        except (OSError, ValueError):
            return []
        taken = {command.name for command in self.commands}
        return [
            SlashCommand(label, f"Skill: {description}" if description else "Skill (runs a turn that recalls it)")
            for label, description in found
            if label not in taken
        ]

    @work(group="skill-commands", exclusive=True, exit_on_error=False)
    async def _read_skill_commands(self) -> None:
        found = await self._skill_commands()
        if found != self.skill_commands:
            self.skill_commands = found
            if self.menu.display:  # still open (Escape closes it): show the skills in it too
                self._update_menu()

    async def names_skill_command(self, text: str) -> bool:
        """Whether `text` (`/label …`) runs a skill marked `user-invocable: true` (read afresh)."""
        name = text.strip()[1:].partition(" ")[0]
        self.skill_commands = await self._skill_commands()
        return any(command.name == name for command in self.skill_commands)


class PromptBar(Vertical):
    """The command menu and the prompt, stacked at the bottom of the conversation."""

    DEFAULT_CSS = stylesheet(__file__, "prompt_bar.tcss")
    SCOPED_CSS = False  # the rules style the widgets inside it too, as written

    def __init__(self, commands: Sequence[SlashCommand], *, cursor_blink: bool = True, id: str | None = None) -> None:
        super().__init__(id=id)
        self.menu = CommandMenu(id="command-menu")
        self.picker = FilePicker(id="file-picker")
        self.prompt = Prompt(commands, self.menu, picker=self.picker, cursor_blink=cursor_blink, id="prompt")

    def compose(self) -> ComposeResult:
        yield self.menu
        yield self.picker
        yield self.prompt

    def on_mount(self) -> None:
        self.menu.hide()
        self.picker.hide()

    def attach(self, source: PromptSource) -> None:
        """The runtime is built: skills and workspace files can be read from now on."""
        self.prompt.source = source

    @on(Prompt.MentionTyped)
    def _mention_typed(self, message: Prompt.MentionTyped) -> None:
        message.stop()
        if message.query is not None and self.prompt.source is not None:
            self.find_files(self.prompt.source, message.query)

    @work(group="file-picker", exclusive=True, exit_on_error=False)
    async def find_files(self, source: PromptSource, query: str) -> None:
        paths = await source.match_files(query)
        found = self.prompt.mention_at_cursor()
        if found is not None and found[1] == query:  # still what is typed
            self.picker.show_files(query, paths, capped=source.workspace_capped)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if (failed := WorkerFailed.of(event)) is not None:
            self.post_message(failed)

    @on(OptionList.OptionSelected, "#file-picker")
    def _file_clicked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self.prompt.complete_mention(event.option.id)
            self.prompt.focus()

    @on(OptionList.OptionSelected, "#command-menu")
    def _clicked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self.prompt.complete_command(event.option.id)
            self.prompt.focus()
