"""The left-hand column of the main screen: the chat, the find bar under it and the prompt at the bottom, maximised as
one (F5). It shows a saved conversation in the chat and puts text in the prompt; the line of memories waiting for a
review and a `/goal` run's counter are above the prompt."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content

from anton_tui.tui.command_registry import SlashCommand
from anton_tui.tui.widgets.chat import MAX_BLOCKS, ChatView
from anton_tui.tui.widgets.find_bar import FindBar
from anton_tui.tui.widgets.prompt import Prompt, PromptBar
from anton_tui.tui.widgets.review_bar import ReviewBar


class Conversation(Vertical):
    """The chat with its prompt underneath."""

    ALLOW_MAXIMIZE = True

    def __init__(
        self,
        commands: Sequence[SlashCommand],
        *,
        max_blocks: int | None,
        cursor_blink: bool,
        review_key: str = "Ctrl+Y",
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.commands = commands
        self.review_key = review_key
        self.max_blocks = max_blocks or MAX_BLOCKS
        self.cursor_blink = cursor_blink

    def compose(self) -> ComposeResult:
        chat = ChatView(id="chat", max_blocks=self.max_blocks)
        yield chat
        yield FindBar(chat, cursor_blink=self.cursor_blink, id="find-bar")
        yield ReviewBar(review_key=self.review_key, id="review-bar")
        yield PromptBar(self.commands, cursor_blink=self.cursor_blink, id="prompt-bar")

    @property
    def chat(self) -> ChatView:
        return self.query_one(ChatView)

    @property
    def prompt(self) -> Prompt:
        return self.query_one(Prompt)

    @property
    def prompt_bar(self) -> PromptBar:
        return self.query_one(PromptBar)

    @property
    def review_bar(self) -> ReviewBar:
        return self.query_one(ReviewBar)

    async def show_entries(self, entries: list[Any], heading: str) -> None:
        """A resumed or rewound conversation in the chat: `heading` on top, then its entries (typed messages, answers,
        tool calls, a summary) drawn as they were when it ran; the chat mounts the last ones, and the earlier ones as
        the view reaches them. One frame shows all of it: the layout and paint of a frame in between would cost as
        much again."""
        chat = self.chat
        with self.app.batch_update():
            await chat.clear()
            await chat.show_entries(heading, entries)

    def retitle(self, heading: str) -> None:
        """A new heading for the conversation in the chat (the one shown early, now resumed)."""
        shown = self.chat.heading
        if shown is not None and shown.is_attached:
            shown.update(Content(heading))

    def fill_prompt(self, text: str) -> None:
        """Put `text` in the prompt to edit and send, the cursor at its end."""
        prompt = self.prompt
        prompt.load_text(text)
        prompt.move_cursor(prompt.document.end)
        prompt.focus()

    def offer_prompt(self, suggestion: str | None) -> None:
        """Put `suggestion` in an empty prompt, all of it selected: Enter sends it, typing replaces it."""
        prompt = self.prompt
        if suggestion and not prompt.text:
            prompt.load_text(suggestion)
            prompt.select_all()
