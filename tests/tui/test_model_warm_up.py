"""The model SDK (the largest import) is not loaded while the app is only being looked at: it is imported as soon
as the user starts typing, or a little after the start at the latest, and only once."""

from __future__ import annotations

import asyncio

from anton_tui.runtime import model_warm_up

from .app_support import ScriptedSession, make_settings, scripted_app
from .e2e_support import started


class CountingSession(ScriptedSession):
    def __init__(self) -> None:
        super().__init__([])
        self.model_warm_ups = 0

    async def warm_up_model(self) -> None:
        self.model_warm_ups += 1


async def test_typing_a_message_warms_the_model_up_once(monkeypatch):
    monkeypatch.setattr(model_warm_up, "MODEL_WARM_UP_AFTER_S", 60.0)
    session = CountingSession()
    app = scripted_app(make_settings(), session)
    async with app.run_test() as pilot:
        await started(pilot)
        await app.runtime.warm_up()
        await pilot.pause(0.2)
        assert session.model_warm_ups == 0, "not while the app is only being looked at"
        await pilot.press("h", "e", "l", "l", "o")
        await pilot.pause(0.1)
        assert session.model_warm_ups == 1


async def test_the_model_is_warmed_up_a_little_after_the_start_without_typing(monkeypatch):
    monkeypatch.setattr(model_warm_up, "MODEL_WARM_UP_AFTER_S", 0.2)
    session = CountingSession()
    app = scripted_app(make_settings(), session)
    async with app.run_test() as pilot:
        await started(pilot)
        await app.runtime.warm_up()
        assert session.model_warm_ups == 0
        for _ in range(50):
            if session.model_warm_ups:
                break
            await asyncio.sleep(0.05)
        assert session.model_warm_ups == 1
        await pilot.press("x")
        await pilot.pause(0.1)
        assert session.model_warm_ups == 1, "once only"
