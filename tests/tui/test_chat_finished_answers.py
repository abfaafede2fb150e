"""Finished answers in the chat: each part shows all its text, above the view too; an answer split into parts reads
exactly as one; nothing is left blank under an answer's last line; and finished answers follow the terminal's width
and the theme, and can be selected."""

from __future__ import annotations

import asyncio

from textual.content import Content

from anton_tui.agent.events import AssistantMessageDone, AssistantTextDelta, TurnFinished, TurnStarted
from anton_tui.tui.app import AntonApp
from anton_tui.tui.widgets.answer import AssistantMessage
from anton_tui.tui.widgets.chat import ChatView

from .app_support import ScriptedSession, scripted_app, make_settings, screen_text, send, wait_until
from .screen_reader import screen_runs

SECTION = "## Part {n}\n\nParagraph {n} says something about the monthly totals of region {n}.\n\n- first point\n- second point\n\n"
ANSWER = "".join(SECTION.format(n=n) for n in range(30))  # three parts, under the budget of lines


def streamed(text: str, size: int = 40) -> list:
    chunks = [text[i : i + size] for i in range(0, len(text), size)]
    return [
        TurnStarted(1, "q"),
        *(AssistantTextDelta(chunk) for chunk in chunks),
        AssistantMessageDone(text),
        TurnFinished(1, "end_turn", text),
    ]


def parts(app: AntonApp) -> list[AssistantMessage]:
    return list(app.screen.query(AssistantMessage))


def written(app: AntonApp) -> bool:
    """The turn is over and its answer written to the end."""
    return not app.screen.busy and app.screen.chat.stream.part is None


def rendered(part: AssistantMessage) -> bool:
    markdown = part.markdown
    return markdown is not None and markdown.is_mounted and bool(markdown.children)


async def answered(app: AntonApp, pilot) -> AssistantMessage:
    """Send a message and wait for its one-part answer to be finished and rendered."""
    await send(pilot, "q")
    await app.workers.wait_for_complete()
    await wait_until(pilot, lambda: written(app) and len(parts(app)) == 1 and rendered(parts(app)[0]))
    return parts(app)[0]


def lines_of(app: AntonApp) -> list[str]:
    return screen_text(app).splitlines()


async def test_every_part_of_a_long_answer_shows_all_its_text_even_above_the_view() -> None:
    app = scripted_app(make_settings(), ScriptedSession(streamed(ANSWER)))
    async with app.run_test(size=(100, 24)) as pilot:
        await send(pilot, "write a long report")
        await app.workers.wait_for_complete()
        await wait_until(pilot, lambda: "".join(part.source for part in parts(app)) == ANSWER)
        assert len(parts(app)) >= 2
        chat = app.screen.query_one(ChatView)
        await wait_until(pilot, lambda: chat.scroll_y == chat.max_scroll_y)  # it followed the answer to its end
        chat.scroll_home(animate=False)
        await wait_until(pilot, lambda: "Paragraph 0 says something" in screen_text(app))
        assert "Part 0" in screen_text(app)
        seen = set()
        for _ in range(60):  # page down through the whole answer
            seen |= {n for n in range(30) if f"Paragraph {n} says something" in screen_text(app)}
            if chat.scroll_y >= chat.max_scroll_y:
                break
            chat.scroll_page_down(animate=False)
            await pilot.pause()
        assert seen == set(range(30)), f"sections {set(range(30)) - seen} were never drawn"


async def test_no_blank_line_under_an_answer_only_the_gap_before_the_next_block() -> None:
    app = scripted_app(make_settings(), ScriptedSession(streamed("First paragraph.\n\nLast words of it.")), cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await answered(app, pilot)
        chat = app.screen.query_one(ChatView)
        await chat.add_notice(Content("A notice after it."), "info")
        await wait_until(pilot, lambda: "A notice after it." in screen_text(app))
        lines = lines_of(app)
        last = next(n for n, line in enumerate(lines) if "Last words of it." in line)
        notice = next(n for n, line in enumerate(lines) if "A notice after it." in line)
        assert notice - last == 2, "one blank line between the answer and the notice, as between any two blocks"


async def test_resizing_the_terminal_rewraps_finished_answers() -> None:
    long_paragraph = " ".join(f"word{n}" for n in range(120))
    app = scripted_app(make_settings(), ScriptedSession(streamed(long_paragraph + "\n\nDone.")))
    async with app.run_test(size=(160, 40)) as pilot:
        await answered(app, pilot)
        wide = sum("word" in line for line in lines_of(app))
        await pilot.resize_terminal(90, 40)
        await wait_until(pilot, lambda: sum("word" in line for line in lines_of(app)) > wide)
        assert "word119" in screen_text(app)


async def test_changing_the_theme_repaints_finished_answers() -> None:
    app = scripted_app(make_settings(), ScriptedSession(streamed("Plain words in the answer.")))
    async with app.run_test(size=(100, 30)) as pilot:
        await answered(app, pilot)

        def text_colour() -> str:
            return next(run.colour for run in screen_runs(app) if "Plain words" in run.text)

        dark = text_colour()
        app.theme = "anton-light"
        await wait_until(pilot, lambda: text_colour() != dark)
        assert "Plain words in the answer." in screen_text(app)


async def test_text_of_a_finished_answer_can_be_selected_and_copied() -> None:
    app = scripted_app(make_settings(), ScriptedSession(streamed("Select these words please.")))
    async with app.run_test(size=(100, 30)) as pilot:
        part = await answered(app, pilot)
        assert part.markdown is not None
        part.markdown.children[0].text_select_all()
        await pilot.pause()
        assert app.screen.get_selected_text() == "Select these words please."


async def test_an_answer_ending_exactly_where_a_part_was_cut_has_no_blank_line_under_it() -> None:
    app = scripted_app(make_settings(), ScriptedSession([]), cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.screen.query_one(ChatView)
        await chat.append_answer("word " * 420 + "\n\n")  # past the split length, ending on a paragraph break
        await chat.end_answer()
        await chat.add_notice(Content("Next block."), "info")
        await wait_until(pilot, lambda: "Next block." in screen_text(app))
        assert len(parts(app)) == 1
        lines = lines_of(app)
        last = max(n for n, line in enumerate(lines) if "word" in line)
        notice = next(n for n, line in enumerate(lines) if "Next block." in line)
        assert notice - last == 2


async def test_an_answer_opening_with_a_heading_starts_under_the_message_and_reads_the_same_split_in_parts(
    monkeypatch,
) -> None:
    from anton_tui.tui import streaming

    text = "## Title\n\nFirst paragraph.\n\n## Second heading\n\nMore text.\n\n```python\nx = 1\n```\n\n> quoted\n\nEnd."

    async def drawn(split_at: int) -> tuple[list[str], int]:
        monkeypatch.setattr(streaming, "SPLIT_ANSWER_AT", split_at)
        app = scripted_app(make_settings(), ScriptedSession(streamed(text, 7)), cursor_blink=False)
        async with app.run_test(size=(80, 34)) as pilot:
            await send(pilot, "q")
            await app.workers.wait_for_complete()
            await wait_until(pilot, lambda: written(app) and parts(app) and all(map(rendered, parts(app))))
            await wait_until(pilot, lambda: "End." in screen_text(app))
            await pilot.pause()
            return lines_of(app), len(parts(app))

    whole, one = await drawn(10_000)
    split, several = await drawn(10)
    assert (one, several > 3) == (1, True)
    assert split == whole, "an answer split into parts must read exactly as one"
    question = next(n for n, line in enumerate(whole) if line.startswith(" ▌ q "))
    assert "Title" in whole[question + 2], "one blank line between the message and the answer's heading"


async def test_a_part_that_finishes_out_of_view_shows_all_its_text_once_scrolled_to() -> None:
    app = scripted_app(make_settings(), ScriptedSession([]), cursor_blink=False)
    async with app.run_test(size=(100, 24)) as pilot:
        chat = app.screen.query_one(ChatView)
        await chat.append_answer("An earlier answer.\n\n" * 30)
        await chat.end_answer()
        await pilot.pause()
        chat.scroll_home(animate=False)  # the user reads from the top
        await pilot.pause()
        table = "| Region | Revenue |\n|---|---|\n| South | 67,028.14 |\n| West | 63,514.39 |\n\n"
        await chat.append_answer(table + "Show money with thousands separators and two decimals, everywhere.")
        await chat.end_answer()
        await pilot.pause(0.3)
        assert chat.scroll_y == 0, "still reading the top"
        chat.focus()
        await pilot.press("end")
        await wait_until(pilot, lambda: "everywhere." in screen_text(app))
        shown = screen_text(app)
        assert "63,514.39" in shown and "two decimals," in shown
        assert shown.count("├") == 2, "the table's inner lines too"


async def test_an_answer_that_ends_while_its_text_is_being_written_still_reads_as_one(monkeypatch) -> None:
    # The turn can end while earlier text is being cut into parts: the rest must continue the answer, not start a new
    # one (which would draw a gap outside the answer's border).
    from anton_tui.tui import streaming

    monkeypatch.setattr(streaming, "SPLIT_ANSWER_AT", 10)
    app = scripted_app(make_settings(), ScriptedSession([]), cursor_blink=False)
    async with app.run_test(size=(80, 24)) as pilot:
        chat = app.screen.query_one(ChatView)
        writing = asyncio.ensure_future(chat.append_answer("More text here.\n\n```python\nx = 1\n```"))
        await asyncio.sleep(0)  # the text is being written
        await chat.end_answer()
        await writing
        await wait_until(pilot, lambda: len(parts(app)) == 2 and all(map(rendered, parts(app))))
        await wait_until(pilot, lambda: "x = 1" in screen_text(app))
        first, rest = parts(app)
        assert rest.has_class("-continued"), "the rest continues the answer"
        lines = lines_of(app)
        start = next(n for n, line in enumerate(lines) if "More text here." in line)
        code = next(n for n, line in enumerate(lines) if "x = 1" in line)
        assert all(line.startswith(" ▌") for line in lines[start : code + 1]), "no gap outside the answer's border"


async def test_a_finished_answer_never_goes_blank() -> None:
    text = (
        "Here is the summary.\n\n| Region | Revenue |\n|---|---|\n| South | 67,028.14 |\n| West | 63,514.39 |\n\n"
        "And **that** is all.\n\n```python\nx = 1\n```\n\nDone."
    )
    app = scripted_app(make_settings(), ScriptedSession(streamed(text, 9)), cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        frames: list[str] = []

        def sample() -> None:
            if parts(app):
                frames.append(screen_text(app))

        sampler = app.set_interval(0.004, sample)
        await send(pilot, "q")
        await app.workers.wait_for_complete()
        await wait_until(pilot, lambda: written(app) and parts(app) and rendered(parts(app)[0]))
        await pilot.pause(0.3)
        sampler.stop()
        shown = [frame for frame in frames if "Done." in frame]
        assert shown, "the whole answer was seen"
        first = frames.index(shown[0])
        blank = [frame for frame in frames[first:] if "Here is the summary." not in frame or "63,514.39" not in frame]
        assert not blank, f"{len(blank)} of {len(frames) - first} frames after the answer ended showed it blank"


async def test_parts_out_of_the_view_keep_their_place_but_leave_the_layout_until_the_view_comes_to_them() -> None:
    app = scripted_app(make_settings(), ScriptedSession(streamed(ANSWER)), cursor_blink=False)
    async with app.run_test(size=(100, 24)) as pilot:
        await send(pilot, "write a long report")
        await wait_until(pilot, lambda: written(app) and "".join(part.source for part in parts(app)) == ANSWER)
        chat = app.screen.query_one(ChatView)
        await wait_until(pilot, lambda: chat.scroll_y == chat.max_scroll_y and parts(app)[0].resting)
        height, end = chat.virtual_size.height, chat.max_scroll_y
        first = parts(app)[0]
        assert first.markdown is not None and not first.markdown.display, "far above the view, it is not laid out"
        assert not parts(app)[-1].resting, "the part in view is"
        chat.scroll_home(animate=False)
        await wait_until(pilot, lambda: "Paragraph 0 says something" in screen_text(app))
        assert not first.resting and chat.virtual_size.height == height, "woken, at the place and height it kept"
        chat.scroll_to(y=end, animate=False)
        await wait_until(pilot, lambda: "Paragraph 29 says something" in screen_text(app))
