"""Lists that grow in place: an answer streamed in pieces of any size draws exactly what Textual's Markdown draws
for the whole text at once, and a growing list keeps the widgets of its finished items."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Markdown

from anton_tui.tui.widgets.answer import AnswerMarkdown, rendered_lines
from anton_tui.tui.widgets.markdown_lists import ItemRow

SAMPLES = {
    "nested bullets": "Intro.\n\n- first\n- second with **bold** text\n  - nested one\n  - nested two\n- third\n\nAfter.\n",
    "numbers past nine": "".join(f"{n}. step {n}\n" for n in range(1, 13)) + "\nDone.\n",
    "numbers from three": "3. three\n4. four\n5. five\n",
    "loose items": "- first paragraph\n\n  second paragraph of the same item\n\n- next item\n",
    "code in an item": "- run this:\n\n  ```python\n  print('hi')\n  ```\n\n- then this\n",
    "two lists and a heading": "- a\n- b\n\n## Heading\n\n* c\n* d\n\n1. e\n2. f\n",
    "inline styles": "- a `code` span and *emphasis*\n- a [link](https://example.com) here\n",
}


class TwoMarkdowns(App[None]):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        yield AnswerMarkdown(id="streamed")
        yield Markdown(self.text, id="whole")


def drawn(widget: Markdown) -> list[list[tuple[str, object]]]:
    return [[(segment.text, segment.style) for segment in strip] for strip in rendered_lines(widget)]


@pytest.mark.parametrize("piece", [1, 4, 17])
@pytest.mark.parametrize("name", list(SAMPLES))
async def test_a_streamed_answer_draws_what_the_whole_text_draws(name: str, piece: int) -> None:
    text = SAMPLES[name]
    app = TwoMarkdowns(text)
    async with app.run_test(size=(70, 80)) as pilot:
        streamed = app.query_one("#streamed", AnswerMarkdown)
        for start in range(0, len(text), piece):
            await streamed.append(text[start : start + piece])
        await pilot.pause()
        await pilot.pause()
        assert drawn(streamed) == drawn(app.query_one("#whole", Markdown))


async def test_a_growing_list_keeps_the_widgets_of_its_finished_items() -> None:
    app = TwoMarkdowns("")
    async with app.run_test(size=(70, 40)) as pilot:
        streamed = app.query_one("#streamed", AnswerMarkdown)
        await streamed.append("- alpha\n- beta\n- gam")
        await pilot.pause()
        first_rows = list(streamed.query(ItemRow))
        await streamed.append("ma\n- delta\n")
        await pilot.pause()
        rows = list(streamed.query(ItemRow))
        assert rows[:3] == first_rows, "the same widgets: nothing was mounted again"
        assert [str(row.body.children[0].render()) for row in rows] == ["alpha", "beta", "gamma", "delta"]
