"""The demo replay drives the real session end to end: cells really run, memories are really written."""

from __future__ import annotations

from pathlib import Path

from anton_tui.agent import events as ev
from anton_tui.agent.demo import DEMO_MODEL, build_demo
from anton_tui.config import load_settings
from anton_tui.scratchpad.events import CellFinished, CellOutput, CellProgress


async def play(demo, text: str) -> list:
    return [event async for event in demo.session.turn(text)]


async def test_demo_replays_both_turns_for_real(anton_home: Path):
    demo = build_demo(load_settings(), chunk_delay=0)
    try:
        assert demo.settings.home != anton_home and demo.settings.planning_model == DEMO_MODEL
        first_prompt = demo.next_prompt()
        assert first_prompt and "revenue" in first_prompt
        events = await play(demo, first_prompt)

        activity = [e.event for e in events if isinstance(e, ev.ScratchpadActivity)]
        outputs = "".join(a.text for a in activity if isinstance(a, CellOutput))
        assert "18 rows, columns: ['month', 'region', 'revenue']" in outputs
        assert "South" in outputs and "+14.8%" in outputs
        assert any(isinstance(a, CellProgress) and "summed 6 of 18 rows" in a.message for a in activity)
        failed = [a.cell for a in activity if isinstance(a, CellFinished) and a.cell.error]
        assert len(failed) == 1 and "NameError" in failed[0].error
        assert (demo.settings.project_dir / "sales.csv").exists()

        recall = next(e for e in events if isinstance(e, ev.ToolCallFinished) and e.name == "recall_skill")
        assert recall.success and "csv-summary" in recall.result
        assert demo.session.skills.load("csv_summary").stats.total_recalls == 1

        nudges = [e for e in events if isinstance(e, ev.AccNudge)]
        assert any(n.lesson.detector == "detect_name_switch" and n.nudged for n in nudges)
        global_rules = (demo.settings.home / "memory" / "rules.md").read_text()
        assert "Show money with thousands separators" in global_rules
        assert "one scratchpad name for the whole task" in global_rules  # the ACC's rule
        project_lessons = (demo.settings.project_dir / ".anton" / "memory" / "lessons.md").read_text()
        assert "sales.csv with columns month, region, revenue" in project_lessons
        finished = next(e for e in events if isinstance(e, ev.TurnFinished))
        assert finished.stop_reason == "end_turn" and "recorded demo" in finished.text

        second = await play(demo, demo.next_prompt())
        recall_tool = next(e for e in second if isinstance(e, ev.ToolCallFinished) and e.name == "recall")
        assert recall_tool.success and "revenue" in recall_tool.result.lower()
        assert demo.next_prompt() is None
        await demo.session.wait_background(timeout=20)
    finally:
        await demo.close()
    assert not demo.root.exists()


def drain(queue) -> list:
    found = []
    while not queue.empty():
        found.append(queue.get_nowait())
    return found


async def test_five_demo_turns_show_no_error_and_the_background_work_has_recorded_answers(anton_home: Path):
    demo = build_demo(load_settings(), chunk_delay=0)
    seen: list = []
    try:
        for n in range(5):
            seen += await play(demo, demo.next_prompt() or f"And what else, {n}?")
            await demo.session.wait_background(timeout=20)
            seen += drain(demo.session.background_events)
    finally:
        await demo.close()
    errors = [e.message for e in seen if isinstance(e, ev.ErrorOccurred)]
    assert errors == []
    assert sum(isinstance(e, ev.TurnFinished) for e in seen) == 5


async def test_the_demo_keeps_copilot_when_it_is_chosen(anton_home: Path, monkeypatch):
    monkeypatch.setenv("ANTON_MEMORY_MODE", "copilot")
    demo = build_demo(load_settings(), chunk_delay=0)
    try:
        assert demo.settings.memory_mode == "copilot"
        asked = []
        async for event in demo.session.turn(demo.next_prompt()):
            if isinstance(event, ev.MemoryConfirmationNeeded):
                asked.append(event)
                event.future.set_result(list(event.engrams))
        await demo.session.wait_background(timeout=20)
        for event in drain(demo.session.background_events):
            if isinstance(event, ev.MemoryConfirmationNeeded):
                asked.append(event)
                event.future.set_result(list(event.engrams))
        assert asked, "copilot asks about the memories it is unsure of"
    finally:
        await demo.close()
    monkeypatch.setenv("ANTON_MEMORY_MODE", "off")
    demo = build_demo(load_settings(), chunk_delay=0)
    try:
        assert demo.settings.memory_mode == "autopilot", "the demo is there to show memory at work"
    finally:
        await demo.close()
