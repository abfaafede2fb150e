"""Finished answer parts keep their rendered lines as one widget each: they must look exactly as the live Markdown
did, above the view too, and follow the terminal's width and the theme."""

from __future__ import annotations

import asyncio

from textual.geometry import Offset
from textual.selection import Selection

from anton_tui.agent.events import AssistantMessageDone, AssistantTextDelta, TurnFinished, TurnStarted
from anton_tui.tui.app import AntonApp
from anton_tui.tui.widgets.answer import AssistantMessage
from anton_tui.tui.widgets.chat import ChatView

from .app_support import ScriptedSession, scripted_app, make_settings, screen_text, send, wait_until

SECTION = "## Part {n}\n\nParagraph {n} says something about the monthly totals of region {n}.\n\n- first point\n- second point\n\n"
ANSWER = "".join(SECTION.format(n=n) for n in range(60))  # about 550 lines: below the pruning budget


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


async def answered(app: AntonApp, pilot) -> AssistantMessage:
    """Send a message and wait for its one-part answer to be finished and kept."""
    await send(pilot, "q")
    await app.workers.wait_for_complete()
    await wait_until(pilot, lambda: len(parts(app)) == 1 and parts(app)[0].frozen)
    return parts(app)[0]


def kept_text(part: AssistantMessage) -> str:
    return "\n".join(strip.text.rstrip() for strip in part._lines or [])


async def test_every_finished_part_becomes_one_widget_showing_all_its_text_even_above_the_view() -> None:
    app = scripted_app(make_settings(), ScriptedSession(streamed(ANSWER)))
    async with app.run_test(size=(100, 24)) as pilot:
        await send(pilot, "write a long report")
        await app.workers.wait_for_complete()
        await wait_until(pilot, lambda: len(parts(app)) >= 3 and all(part.frozen for part in parts(app)), timeout=15)
        assert all(part.markdown is None and not part.children for part in parts(app))
        kept = "\n".join(kept_text(part) for part in parts(app))
        for n in range(60):
            assert f"Paragraph {n} says something" in kept, f"section {n} is missing from the kept lines"
        assert "".join(part.source for part in parts(app)) == ANSWER
        chat = app.screen.query_one(ChatView)
        chat.scroll_home(animate=False)
        await wait_until(pilot, lambda: "Paragraph 0 says something" in screen_text(app))
        assert "Part 0" in screen_text(app)


async def test_a_finished_part_looks_exactly_as_its_live_markdown_did() -> None:
    text = "# Heading\n\nSome **bold** and `code` text.\n\n1. one\n2. two\n\n> a quote\n\n```python\nx = 1\n```\n\nEnd."
    app = scripted_app(make_settings(), ScriptedSession([]), cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.screen.query_one(ChatView)
        part = AssistantMessage(text)
        await chat.add_block(part)
        await wait_until(pilot, lambda: "End." in screen_text(app))
        part._trim_last_margin()  # what finishing does first: no blank line under the last block
        await pilot.pause()
        live = screen_text(app)
        part.finish()
        chat.stream.keep_lines(part)
        await wait_until(pilot, lambda: part.frozen)
        await pilot.pause()
        assert screen_text(app) == live


async def test_resizing_the_terminal_rewraps_finished_answers() -> None:
    long_paragraph = " ".join(f"word{n}" for n in range(120))
    app = scripted_app(make_settings(), ScriptedSession(streamed(long_paragraph + "\n\nDone.")))
    async with app.run_test(size=(160, 40)) as pilot:
        part = await answered(app, pilot)
        wide_lines = len(part._lines)
        await pilot.resize_terminal(90, 40)
        await wait_until(pilot, lambda: part.frozen and len(part._lines) > wide_lines)
        assert max(len(line.rstrip()) for line in kept_text(part).splitlines()) < 90
        assert "word119" in kept_text(part)


async def test_changing_the_theme_repaints_finished_answers() -> None:
    app = scripted_app(make_settings(), ScriptedSession(streamed("Plain words in the answer.")))
    async with app.run_test(size=(100, 30)) as pilot:
        part = await answered(app, pilot)

        def text_colour() -> object:
            return next(segment.style.color for segment in part._lines[0] if segment.text.strip())

        dark = text_colour()
        app.theme = "anton-light"
        await wait_until(pilot, lambda: part.frozen and text_colour() != dark)
        assert "Plain words in the answer." in screen_text(app)


async def test_text_of_a_finished_answer_can_still_be_selected_and_copied() -> None:
    app = scripted_app(make_settings(), ScriptedSession(streamed("Select these words please.")))
    async with app.run_test(size=(100, 30)) as pilot:
        part = await answered(app, pilot)
        selected, _end = part.get_selection(Selection.from_offsets(Offset(0, 0), Offset(12, 0)))
        assert selected == "Select these"


async def test_an_answer_ending_exactly_where_a_part_was_cut_has_no_blank_line_under_it() -> None:
    app = scripted_app(make_settings(), ScriptedSession([]))
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.screen.query_one(ChatView)
        await chat.append_answer("word " * 420 + "\n\n")  # past the split length, ending on a paragraph break
        await wait_until(pilot, lambda: parts(app) and parts(app)[-1].frozen)
        assert not parts(app)[-1]._lines[-1].text.strip(), "a part that is continued keeps its blank line"
        await chat.end_answer()
        await wait_until(pilot, lambda: parts(app)[-1].frozen and parts(app)[-1]._lines[-1].text.strip())
        assert len(parts(app)) == 1


async def test_an_answer_opening_with_a_heading_starts_under_the_message_and_reads_the_same_split_in_parts(
    monkeypatch,
) -> None:
    from anton_tui.tui import streaming

    text = "## Title\n\nFirst paragraph.\n\n## Second heading\n\nMore text.\n\n```python\nx = 1\n```\n\n> quoted\n\nEnd."

    async def rendered(split_at: int) -> tuple[list[str], int]:
        monkeypatch.setattr(streaming, "SPLIT_ANSWER_AT", split_at)
        app = scripted_app(make_settings(), ScriptedSession(streamed(text, 7)), cursor_blink=False)
        async with app.run_test(size=(80, 34)) as pilot:
            await send(pilot, "q")
            await app.workers.wait_for_complete()
            await wait_until(pilot, lambda: parts(app) and all(part.frozen for part in parts(app)))
            await pilot.pause()
            return screen_text(app).splitlines(), len(parts(app))

    whole, one = await rendered(10_000)
    split, several = await rendered(10)
    assert (one, several > 3) == (1, True)
    assert split == whole, "an answer split into parts must read exactly as one"
    question = next(n for n, line in enumerate(whole) if line.startswith(" ▌ q "))
    assert "Title" in whole[question + 2], "one blank line between the message and the answer's heading"


async def test_a_part_that_finishes_out_of_view_is_kept_only_once_drawn_with_all_its_text() -> None:
    # The screen sizes only the widgets in view; one below it has its place in the layout but no size yet.
    app = scripted_app(make_settings(), ScriptedSession([]), cursor_blink=False)
    async with app.run_test(size=(100, 24)) as pilot:
        chat = app.screen.query_one(ChatView)
        await chat.append_answer("An earlier answer.\n\n" * 30)
        await chat.end_answer()
        await wait_until(pilot, lambda: parts(app)[0].frozen)
        chat.scroll_home(animate=False)  # the user reads from the top
        await pilot.pause()
        table = "| Region | Revenue |\n|---|---|\n| South | 67,028.14 |\n| West | 63,514.39 |\n\n"
        await chat.append_answer(table + "Show money with thousands separators and two decimals, everywhere.")
        await chat.end_answer()
        await pilot.pause(0.3)
        below = parts(app)[1]
        assert chat.scroll_y == 0, "still reading the top"
        assert not below.frozen or "63,514.39" in kept_text(below)
        chat.scroll_end(animate=False)
        await wait_until(pilot, lambda: below.frozen)
        kept = kept_text(below)
        assert "63,514.39" in kept and "two decimals," in kept and "everywhere." in kept
        assert kept.count("├") == 2, "the table's inner lines too"


async def test_an_answer_that_ends_while_its_text_is_being_handed_over_still_reads_as_one(monkeypatch) -> None:
    # The turn can end while a hand-off is cutting the answer into parts: the rest must continue the answer, not
    # start a new one (which drew a gap outside the answer's border, and was left unfinished).
    from anton_tui.tui import streaming

    monkeypatch.setattr(streaming, "SPLIT_ANSWER_AT", 10)
    app = scripted_app(make_settings(), ScriptedSession([]), cursor_blink=False)
    async with app.run_test(size=(80, 24)) as pilot:
        chat = app.screen.query_one(ChatView)
        chat.stream.pending = "More text here.\n\n```python\nx = 1\n```"  # streamed, its hand-off due
        handing_over = asyncio.ensure_future(chat.stream.hand_off())
        await asyncio.sleep(0)  # the hand-off has taken the waiting text and is writing it
        await chat.end_answer()
        await handing_over
        await wait_until(pilot, lambda: len(parts(app)) == 2 and all(part.frozen for part in parts(app)))
        first, rest = parts(app)
        assert rest.has_class("-continued"), "the rest continues the answer"
        lines = screen_text(app).splitlines()
        start = next(n for n, line in enumerate(lines) if "More text here." in line)
        code = next(n for n, line in enumerate(lines) if "x = 1" in line)
        assert all(line.startswith(" ▌") for line in lines[start:code + 1]), "no gap outside the answer's border"


async def test_a_finished_answer_never_goes_blank_while_it_becomes_kept_lines() -> None:
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
        await wait_until(pilot, lambda: parts(app) and parts(app)[0].frozen)
        await pilot.pause(0.1)
        sampler.stop()
        shown = [frame for frame in frames if "Done." in frame]
        assert shown, "the whole answer was seen"
        first = frames.index(shown[0])
        blank = [frame for frame in frames[first:] if "Here is the summary." not in frame or "63,514.39" not in frame]
        assert not blank, f"{len(blank)} of {len(frames) - first} frames after the answer ended showed it blank"
