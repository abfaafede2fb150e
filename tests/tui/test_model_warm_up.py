"""What only a turn needs (the model SDK, the largest import, and the episode search index) is not loaded while the app
is only being looked at: it is loaded as soon as the user starts typing, and only once."""

from __future__ import annotations

import asyncio

from .app_support import ScriptedSession, make_settings, scripted_app
from .e2e_support import started


class CountingSession(ScriptedSession):
    def __init__(self) -> None:
        super().__init__([])
        self.model_warm_ups = 0
        self.recall_warm_ups = 0

    async def warm_up_model(self) -> None:
        self.model_warm_ups += 1

    async def warm_up_recall(self) -> None:
        self.recall_warm_ups += 1


async def test_typing_a_message_warms_the_model_up_once() -> None:
    session = CountingSession()
    app = scripted_app(make_settings(), session)
    async with app.run_test() as pilot:
        await started(pilot)
        await app.runtime.warm_up()
        await pilot.pause(0.2)
        assert session.model_warm_ups == session.recall_warm_ups == 0, "not while the app is only being looked at"
        await pilot.press("h", "e", "l", "l", "o")
        await pilot.pause(0.1)
        assert session.model_warm_ups == session.recall_warm_ups == 1
        await pilot.press("x")
        await pilot.pause(0.1)
        assert session.model_warm_ups == session.recall_warm_ups == 1, "once only"


async def test_an_app_only_looked_at_never_loads_the_model() -> None:
    """Nothing on the screen needs the SDK: an app left open without typing keeps its memory for what it shows."""
    session = CountingSession()
    app = scripted_app(make_settings(), session)
    async with app.run_test() as pilot:
        await started(pilot)
        await app.runtime.warm_up()
        await asyncio.sleep(1.0)
        assert session.model_warm_ups == session.recall_warm_ups == 0
