"""Bell and desktop notifications: only while the terminal is not focused, each one can be turned off, and the
model's text cannot smuggle escape sequences into the terminal."""

from __future__ import annotations

from textual import events

from anton_tui.agent.events import AssistantMessageDone, AssistantTextDelta, ErrorOccurred, TurnFinished
from anton_tui.tui.attention import osc_sequence

from .app_support import ScriptedSession, make_settings, scripted_app

SIZE = (120, 40)
REPLY = [AssistantTextDelta("ok"), AssistantMessageDone("ok"), TurnFinished(1, "end_turn", "ok")]


async def send(app, pilot, text: str = "hi") -> None:
    await pilot.press(*text, "enter")
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_a_finished_turn_rings_and_notifies_only_while_the_terminal_is_in_the_background() -> None:
    app = scripted_app(make_settings(), ScriptedSession(REPLY))
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot)
        assert app.attention.sent == [], "focused: nothing"
        app.post_message(events.AppBlur())
        await pilot.pause()
        await send(app, pilot, "again")
        assert app.attention.sent[0] == "\a"
        assert app.attention.sent[1].startswith("\x1b]9;Anton: The answer is ready.")
        app.post_message(events.AppFocus())
        await pilot.pause()
        await send(app, pilot, "third")
        assert len(app.attention.sent) == 2


async def test_an_error_notifies_with_its_text_and_the_settings_turn_each_off() -> None:
    error = [ErrorOccurred("rate limited\x1b]52;c;evil\x07", retryable=True), TurnFinished(1, "error", "")]
    settings = make_settings()
    settings.notify_bell = False
    app = scripted_app(settings, ScriptedSession(error))
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(events.AppBlur())
        await pilot.pause()
        await send(app, pilot)
        assert "\a" not in app.attention.sent, "no bell when it is off"
        [osc] = app.attention.sent  # one for the error, none more for the turn it ended
        assert "rate limited" in osc and "evil" in osc
        assert osc.count("\x1b") == 2 and "\x07" not in osc, "nothing of the message can end or start a sequence"
        app.attention.desktop = False
        await send(app, pilot, "again")
        assert len(app.attention.sent) == 1, "no more when both are off"


def test_osc_777_for_terminals_that_speak_it() -> None:
    assert osc_sequence("Anton", "done", {"TERM": "foot"}) == "\x1b]777;notify;Anton;done\x1b\\"
    assert osc_sequence("Anton", "a;b", {"TERM": "xterm-256color"}) == "\x1b]9;Anton: a b\x1b\\"
