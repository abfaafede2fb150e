"""Setup in the full app: /setup writes the project .env and the new settings apply at once; a first run without a
key opens the setup by itself and "Try the demo" leaves for the demo."""

from __future__ import annotations

import stat

import pytest
from textual.widgets import Input, Select

from anton_tui.config import load_settings
from anton_tui.tui.screens.setup import SetupScreen

from tests.fakellm import Reply
from tests.tui.e2e_support import (
    PLANNER,
    SIZE,
    answers,
    build_app,
    header_field,
    notifications,
    project_dir,
    save_global_env,
    send_and_wait,
    started,
    turn_running,
    type_in_prompt,
    wait_for,
    wait_turn_done,
)


async def test_setup_saves_the_env_privately_and_the_next_prompt_uses_the_new_model(fake_llm) -> None:
    save_global_env(fake_llm)  # the key and server are saved globally; the project file gets the new choices
    fake_llm.queue(Reply.text("Answered by the first model."), model=PLANNER)
    fake_llm.queue(Reply.text("Answered by the new model."), model="planner-2")
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await send_and_wait(pilot, "Hello")
        assert header_field(app, "model") == PLANNER

        await type_in_prompt(pilot, "/setup")
        await wait_for(pilot, lambda: isinstance(app.screen, SetupScreen), what="the setup screen")
        setup = app.screen
        assert setup.query_one("#api-key", Input).value == "", "a saved key is never shown"
        await pilot.click("#planning-model")
        await pilot.press("end", *"-2")
        assert setup.query_one("#planning-model", Input).value == "planner-2"
        setup.query_one("#memory-mode", Select).value = "copilot"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: not isinstance(app.screen, SetupScreen), what="the setup screen to close")

        assert header_field(app, "model") == "planner-2"
        assert header_field(app, "memory-mode") == "memory copilot"
        assert app.runtime.session.cortex.mode == "copilot"
        await send_and_wait(pilot, "Who answers now?")
        assert answers(app)[-1] == "Answered by the new model."
    env_path = project_dir() / ".anton" / ".env"
    assert stat.S_IMODE(env_path.stat().st_mode) == 0o600
    lines = env_path.read_text(encoding="utf-8").splitlines()
    assert "ANTON_PLANNING_MODEL=planner-2" in lines and "ANTON_MEMORY_MODE=copilot" in lines
    assert not any(line.startswith("ANTON_ANTHROPIC_API_KEY=") for line in lines), "the global key stays global"
    [first] = fake_llm.requests_for(PLANNER)
    [second] = fake_llm.requests_for("planner-2")
    assert first.messages[-1]["content"] == "Hello"
    assert second.messages[0]["content"] == "Hello", "the conversation carried over to the new model"
    assert second.messages[-1]["content"] == "Who answers now?"
    assert load_settings().planning_model == "planner-2"


async def test_first_run_without_a_key_opens_setup_and_try_the_demo_exits_for_the_demo() -> None:
    settings = load_settings()
    assert not settings.has_api_key("planning")
    app = build_app(watch_files=True)
    app.cursor_blink = False
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await wait_for(pilot, lambda: isinstance(app.screen, SetupScreen) and app.screen.query("#api-key"),
                       what="the setup screen by itself")  # fmt: skip
        assert app.screen.first_run
        await wait_for(pilot, lambda: app.focused is app.screen.query_one("#api-key"), what="the key field focused")
        assert not app.switch_to_demo
        await pilot.click("#setup-demo")
        await wait_for(pilot, lambda: not app.is_running, what="the app to exit")
    assert app.switch_to_demo is True
    assert app.return_code == 0
    assert not (project_dir() / ".anton" / ".env").read_text(encoding="utf-8").count("API_KEY"), "nothing saved"


def http_client(app):
    """The SDK client the planning model is called through (created on the first call)."""
    return app.runtime.session.llm.planning.provider._client


async def test_the_model_connection_is_closed_when_the_app_exits(fake_llm) -> None:
    save_global_env(fake_llm)
    fake_llm.queue(Reply.text("Hi."), model=PLANNER)
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await send_and_wait(pilot, "Hello")
        client = http_client(app)
        assert client is not None and not client.is_closed()
    assert client.is_closed()


async def test_setup_closes_the_connection_of_the_model_it_replaces(fake_llm) -> None:
    save_global_env(fake_llm)
    fake_llm.queue(Reply.text("Hi."), model=PLANNER)
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await send_and_wait(pilot, "Hello")
        old_client = http_client(app)
        app.apply_settings(load_settings())  # what saving the setup screen does
        await pilot.pause()
        assert http_client(app) is None, "a new client is made for the new settings"
        await wait_for(pilot, old_client.is_closed, timeout=2, what="the replaced client to be closed")


async def test_settings_saved_during_a_turn_apply_when_it_ends(fake_llm) -> None:
    save_global_env(fake_llm)
    fake_llm.queue(Reply.text("A slow answer that takes a while to arrive.", chunk_size=4, chunk_delay=0.8),
                   model=PLANNER)  # fmt: skip
    fake_llm.queue(Reply.text("Answered by the new model."), model="planner-2")
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await type_in_prompt(pilot, "Take your time.")
        await type_in_prompt(pilot, "/setup")
        await wait_for(pilot, lambda: isinstance(app.screen, SetupScreen) and app.screen.query("#planning-model"),
                       what="the setup screen")  # fmt: skip
        await pilot.click("#planning-model")
        await pilot.press("end", *"-2")
        assert turn_running(app), "the answer is still streaming"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: any("when the running turn ends" in note for note in notifications(app)),
                       what="the promise to apply later")  # fmt: skip
        await wait_turn_done(pilot)
        await wait_for(pilot, lambda: header_field(app, "model") == "planner-2", timeout=2,
                       what="the new model in the header once the turn ended")  # fmt: skip
        await send_and_wait(pilot, "Who answers now?")
    assert [r.messages[-1]["content"] for r in fake_llm.requests_for("planner-2")] == ["Who answers now?"]


async def test_setup_does_not_claim_to_apply_what_the_environment_overrides(fake_llm, monkeypatch) -> None:
    save_global_env(fake_llm)
    monkeypatch.setenv("ANTON_MEMORY_MODE", "off")
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await type_in_prompt(pilot, "/setup")
        await wait_for(pilot, lambda: isinstance(app.screen, SetupScreen), what="the setup screen")
        app.screen.query_one("#memory-mode", Select).value = "copilot"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: not isinstance(app.screen, SetupScreen), what="the setup screen to close")
        await wait_for(pilot, lambda: any("applied" in m for m in notifications(app)), what="the applied note")
        said = notifications(app)
        assert "Settings saved and applied." not in said
        assert any("ANTON_MEMORY_MODE" in m and "environment" in m and "applied" in m for m in said)
        assert header_field(app, "memory-mode") == "memory off"
