"""The scratchpad pane: live cell output, one tab per pad, status and duration, and the pad actions."""

from __future__ import annotations

from textual.widgets import TabbedContent

from anton_tui.agent.events import ScratchpadActivity, ToolCallFinished, ToolCallStarted, TurnFinished
from anton_tui.scratchpad.cell import Cell
from anton_tui.scratchpad.events import CellFinished, CellHeartbeat, CellOutput, CellProgress, CellStarted
from anton_tui.tui.app import AntonApp
from anton_tui.tui.widgets.cell_view import OUTPUT_MAX_CHARS, CellView
from anton_tui.tui.widgets.scratchpad_pane import ScratchpadPane

from .app_support import Pause, ScriptedSession, scripted_app, make_settings, notifications, screen_text, send, wait_until

SIZE = (120, 40)
CODE = "import time\nfor i in range(3):\n    print('step', i)"


def cell_run(pad: str, index: int, *, pause: Pause | None = None, status: str = "ok", error: str | None = None,
             output: str = "step 0\n", code: str = CODE) -> list:
    cell = Cell(code=code, description=f"count on {pad}", index=index, stdout=output, status=status, error=error,
                started_at=100.0, finished_at=102.25)
    tool_input = {"action": "exec", "name": pad, "code": code}
    steps: list = [
        ToolCallStarted(f"{pad}{index}", "scratchpad", tool_input),
        ScratchpadActivity(CellStarted(pad, index, f"count on {pad}", code)),
        ScratchpadActivity(CellOutput(pad, index, "stdout", output)),
        ScratchpadActivity(CellProgress(pad, index, "one third done")),
        ScratchpadActivity(CellHeartbeat(pad, index, 1.5)),
    ]
    if pause is not None:
        steps.append(pause)
    steps += [
        ScratchpadActivity(CellFinished(pad, index, cell)),
        ToolCallFinished(f"{pad}{index}", "scratchpad", tool_input, output, status == "ok", 2.25),
    ]
    return steps



async def test_cell_output_shows_while_the_cell_is_still_running() -> None:
    pause = Pause()
    session = ScriptedSession([*cell_run("main", 1, pause=pause), TurnFinished(1, "end_turn", "")])
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "count")
        await wait_until(pilot, pause.reached.is_set)
        await wait_until(pilot, lambda: "step 0" in screen_text(app))
        cell = app.screen.query_one(CellView)
        assert cell.status == "running"
        text = screen_text(app)
        assert "● running Cell 1 count on main 1.5s" in text
        assert "one third done" in text
        assert "for i in range(3):" in text

        pause.gate.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert cell.status == "ok"
        assert "✓ ok Cell 1 count on main 2.2s" in screen_text(app)
        assert cell.output_text == "step 0", "streamed output is not repeated when the cell finishes"


async def test_each_pad_gets_its_own_tab_and_errors_are_shown() -> None:
    session = ScriptedSession([
        *cell_run("main", 1),
        *cell_run("scratch-2", 1, status="error", error="Traceback ...\nZeroDivisionError: division by zero"),
        *cell_run("main", 2, output="step 1\n"),
        TurnFinished(1, "end_turn", ""),
    ])
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "go")
        await app.workers.wait_for_complete()
        await pilot.pause()
        pane = app.screen.query_one(ScratchpadPane)
        assert pane.pad_names == ["main", "scratch-2"]
        assert pane.active_pad == "main", "the tab of the latest cell is shown"
        assert [c.index for c in pane.pad_view("main").cells] == [1, 2]
        failed = pane.cell("scratch-2", 1)
        assert failed is not None and failed.status == "error"
        assert failed.has_class("-failed")
        pane.query_one("#pads", TabbedContent).active = "pad-2"
        await pilot.pause()
        assert "ZeroDivisionError: division by zero" in screen_text(app)


async def test_output_shown_for_one_cell_is_capped() -> None:
    huge = "x" * 120 + "\n"
    pause = Pause()
    steps = cell_run("main", 1, pause=pause, output="start\n")
    extra = [ScratchpadActivity(CellOutput("main", 1, "stdout", huge * 200)) for _ in range(10)]
    session = ScriptedSession([*steps[:3], *extra, *steps[3:]])
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "flood")
        await wait_until(pilot, pause.reached.is_set)
        await pilot.pause()
        cell = app.screen.query_one(CellView)
        assert cell.shown_chars <= OUTPUT_MAX_CHARS + 100
        assert "further output is not shown here" in cell.output_text
        pause.gate.set()
        await app.workers.wait_for_complete()


async def test_copy_code_puts_the_cell_code_on_the_clipboard() -> None:
    session = ScriptedSession([*cell_run("main", 1), TurnFinished(1, "end_turn", "")])
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "go")
        await app.workers.wait_for_complete()
        await pilot.pause()
        app.screen.query_one(CellView).focus()
        await pilot.press("c")
        assert app.clipboard == CODE
        assert any("Copied the code of cell 1" in message for message in notifications(app))


async def test_pad_actions_reach_the_engine_and_update_the_pane() -> None:
    pause = Pause()
    session = ScriptedSession([*cell_run("main", 1, pause=pause), TurnFinished(1, "end_turn", "")])
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "go")
        await wait_until(pilot, pause.reached.is_set)
        await wait_until(pilot, lambda: bool(app.screen.query(CellView)))
        pane = app.screen.query_one(ScratchpadPane)
        pane.pad_view("main").focus()
        await pilot.press("k")
        await pilot.pause()
        await wait_until(pilot, lambda: session.pad_actions == [("cancel_cell", "main")])
        pause.gate.set()
        await wait_until(pilot, lambda: not app.screen.busy)

        await pilot.press("r")
        await wait_until(pilot, lambda: ("reset_pad", "main") in session.pad_actions)
        await wait_until(pilot, lambda: not pane.pad_view("main").cells)

        await pilot.press("delete")
        await pilot.pause()
        assert ("remove_pad", "main") not in session.pad_actions, "the first Delete only asks for confirmation"
        await pilot.press("delete")
        await wait_until(pilot, lambda: ("remove_pad", "main") in session.pad_actions)
        await wait_until(pilot, lambda: pane.pad_names == [])
        assert "No scratchpad yet" in screen_text(app)


async def test_cancelling_the_turn_marks_the_running_cell() -> None:
    pause = Pause()
    session = ScriptedSession([*cell_run("main", 1, pause=pause)])
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "go")
        await wait_until(pilot, pause.reached.is_set)
        await wait_until(pilot, lambda: bool(app.screen.query(CellView)))
        await pilot.press("escape")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.screen.query_one(CellView).status == "cancelled"


async def test_pad_actions_without_engine_support_are_explained() -> None:
    session = ScriptedSession([*cell_run("main", 1), TurnFinished(1, "end_turn", "")])
    app = scripted_app(make_settings(), session, controls_pads=False)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "go")
        await app.workers.wait_for_complete()
        await pilot.pause()
        app.screen.query_one(CellView).focus()
        await pilot.press("r")
        await pilot.pause()
        assert any("cannot control its scratchpads" in message for message in notifications(app))


async def test_a_cell_whose_secrets_were_hidden_from_the_model_is_marked_raw_and_the_chat_says_so() -> None:
    from anton_tui.agent.events import SecretsRemoved
    from anton_tui.tui.widgets.chat import ChatView, Notice

    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    run = cell_run("main", 1, output=f"token {token}\n")
    hidden = SecretsRemoved(("GitHub Token",), "scratchpad main, cell 1", "scratchpad", pad="main", cell=1)
    saved = SecretsRemoved(("GitHub Token", "GitHub Token"), "project lessons.md", "memorize")
    session = ScriptedSession([*run[:-1], hidden, run[-1], saved, TurnFinished(1, "end_turn", "")])
    app = scripted_app(make_settings(), session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "show the token")
        await app.workers.wait_for_complete()
        await pilot.pause()
        cell = app.screen.query_one(CellView)
        assert token in cell.output_text, "the pane shows what the cell printed"
        header = str(cell.query_one(".cell-header").render())
        assert header.endswith("raw output: 1 secret hidden from the model"), header
        notices = [str(n.render()) for n in app.screen.query_one(ChatView).query(Notice) if n.kind == "secrets"]
        assert notices == [
            "Secrets Hidden from the model in scratchpad main, cell 1: GitHub Token "
            "(scratchpad) (the scratchpad pane shows the raw output)",
            "Secrets Removed before saving to project lessons.md: 2 × GitHub Token (memorize)",
        ]
