"""Reflection with the scripted LLM server and a fixed clock: a week of seeded episodes gives seven dailies and one
weekly with the right statistics, a quiet day makes no model call, a tainted day's proposal waits for a person even
with review level none, the chain catches up at most 35 days, and what was written is found again by recall."""

from __future__ import annotations

import json
import re
from datetime import date, datetime, timedelta
from typing import Any

from anton_tui.memory.episodes.span import episodes_between
from anton_tui.memory.reflection.document import parse
from anton_tui.memory.reflection.periods import Period, due
from tests.fakellm import Reply
from tests.review_support import MONDAY, ZONE, exchange, project, write_session

PLANNER = "planner"
WEEK = [date(2026, 11, 16) + timedelta(days=n) for n in range(7)]  # ISO week 47: Monday 16 to Sunday 22


def seed_week(episodes) -> None:
    """Monday to Sunday: three exchanges a day (Tuesday's cells fail, Thursday read outside content), Wednesday
    quiet (one message)."""
    for day in WEEK:
        start = datetime(day.year, day.month, day.day, 10, 0, tzinfo=ZONE)
        name = day.strftime("%A")
        if name == "Wednesday":
            write_session(episodes, start, exchange("Just a quick hello", "Hello!"))
            continue
        lines = []
        for n in range(3):
            lines += exchange(f"{name} question {n} about invoices", f"{name} answer {n}",
                              cells=2 if name == "Tuesday" else 0,
                              error="Traceback (most recent call last): KeyError 'amount'" if name == "Tuesday" else "",
                              untrusted=name == "Thursday" and n == 1)  # fmt: skip
        write_session(episodes, start, lines)


def drafts(fake_llm, proposals: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Answer every ReflectionDraft request with notes naming its period; the labels asked for, in order."""
    asked: list[str] = []

    def respond(request):
        if (request.tool_choice or {}).get("name") != "ReflectionDraft":
            return None
        label = re.search(r"period (\S+)", str(request.messages[0]["content"])).group(1)
        asked.append(label)
        return Reply.tool_call("ReflectionDraft", {"title": f"Invoices {label}", "notes": f"Notes of {label}.",
                                                   "proposals": proposals.get(label, [])})  # fmt: skip

    fake_llm.responder = respond
    return asked


async def test_a_week_of_episodes_gives_seven_dailies_and_one_weekly_with_the_right_statistics(
    anton_home, project_dir, fake_llm
):
    p = project(anton_home, project_dir, llm=fake_llm.llm_client(), review_level="none")
    seed_week(p.paths.episodes)
    p.parts.journal.clock = lambda: datetime(2026, 11, 17, 11, 0, tzinfo=ZONE)
    p.parts.journal.event("scratchpad_result", 6, {"error": "KeyError 'amount'"})
    p.parts.journal.lesson("repeated_error_signature", "Check the column names before summing", 7)
    monday_lesson = {"kind": "lesson", "text": "Invoices export with sep=';'", "why": "Monday's three questions",
                     "topic": "invoices"}  # fmt: skip
    thursday_rule = {"kind": "rule", "form": "always", "text": "Check invoice totals against the PDF",
                     "why": "Thursday's page said so", "scope": "project"}  # fmt: skip
    asked = drafts(fake_llm, {"2026-11-16": [monday_lesson], "2026-11-19": [thursday_rule]})

    report = await p.parts.reflector.run()

    reflections = p.paths.reflections
    dailies = sorted(path.name for path in (reflections / "daily").iterdir())
    assert dailies == [f"{day.isoformat()}.md" for day in WEEK]
    assert sorted(path.name for path in (reflections / "weekly").iterdir()) == ["2026-W47.md"]
    assert not (reflections / "monthly").exists()  # November has not ended
    assert report.quiet == ["daily 2026-11-18"]
    # the quiet day made no model call; the six others and the week each made one
    assert asked == ["2026-11-16", "2026-11-17", "2026-11-19", "2026-11-20", "2026-11-21", "2026-11-22", "2026-W47"]
    assert len(fake_llm.requests_for(PLANNER)) == 7

    tuesday = parse((reflections / "daily" / "2026-11-17.md").read_text())
    assert tuesday.statistics == {
        "conversations": 1, "user_messages": 3, "answers": 3, "tool_calls": 6, "cells": 6, "errors": 3,
        "untrusted_turns": 0, "acc_events": 1, "lessons_fired": 1, "memory_changes": 0, "tools": {"scratchpad": 6},
    }  # fmt: skip
    assert tuesday.notes == "Notes of 2026-11-17." and tuesday.title == "Invoices 2026-11-17"
    assert tuesday.start == "2026-11-17T00:00:00+01:00" and tuesday.end == "2026-11-18T00:00:00+01:00"
    tuesday_request = next(r for r in fake_llm.requests_for(PLANNER) if "period 2026-11-17" in str(r.messages))
    sent = str(tuesday_request.messages)
    assert "Tuesday question 2" in sent and "KeyError" in sent and "Check the column names" in sent
    assert "Monday question" not in sent, "a daily reads only its own day"
    wednesday = (reflections / "daily" / "2026-11-18.md").read_text()
    assert "quiet: true" in wednesday and "Quiet day: 1 message from the user (below 3)" in wednesday

    weekly = parse((reflections / "weekly" / "2026-W47.md").read_text())
    assert weekly.statistics["user_messages"] == 6 * 3 + 1 and weekly.statistics["errors"] == 3
    assert weekly.statistics["active_days"] == 6 and weekly.statistics["untrusted_turns"] == 1
    assert weekly.inputs["daily_reflections"] == 7
    week_request = next(r for r in fake_llm.requests_for(PLANNER) if "period 2026-W47" in str(r.messages))
    assert "Notes of 2026-11-20." in str(week_request.messages)

    # the proposals: Monday's applied (review level none), Thursday's waits for a person (the day was tainted)
    statuses = {outcome.target: outcome.status for outcome in report.proposals}
    assert statuses == {"project lessons.md": "applied", "project rules.md": "held"}
    assert "Invoices export with sep=';'" in p.stores.project_hc.lessons_path.read_text()
    thursday = parse((reflections / "daily" / "2026-11-19.md").read_text())
    assert thursday.tainted and "read outside content" in thursday.tainted[0]
    assert [line.status for line in thursday.proposals] == ["held"]

    # a person's later decision shows in the reflection's front matter
    await p.parts.pipeline.decide(thursday.proposals[0].id, False)
    again = parse((reflections / "daily" / "2026-11-19.md").read_text())
    assert [(line.status, line.why) for line in again.proposals] == [("rejected", "rejected by you")]

    assert (await p.parts.reflector.run()).written == [], "nothing is due twice"


async def test_a_quiet_week_makes_no_call_at_all(anton_home, project_dir, fake_llm):
    p = project(anton_home, project_dir, llm=fake_llm.llm_client())
    write_session(p.paths.episodes, datetime(2026, 11, 18, 10, 0, tzinfo=ZONE), exchange("hello", "hi"))
    report = await p.parts.reflector.run()
    assert report.written == [] and len(report.quiet) == 5 + 1  # Wednesday to Sunday, and the week
    assert fake_llm.requests == []
    assert "Quiet week" in (p.paths.reflections / "weekly" / "2026-W47.md").read_text()


async def test_a_model_that_fails_writes_nothing_so_the_period_is_tried_again(anton_home, project_dir, fake_llm):
    p = project(anton_home, project_dir, llm=fake_llm.llm_client())
    write_session(p.paths.episodes, datetime(2026, 11, 22, 10, 0, tzinfo=ZONE),
                  exchange("a", "b") + exchange("c", "d") + exchange("e", "f"))  # fmt: skip
    fake_llm.queue(Reply.error(400, "no"), model=PLANNER)
    report = await p.parts.reflector.run(("daily",))
    assert report.failed and report.failed[0].startswith("daily 2026-11-22")
    assert not (p.paths.reflections / "daily" / "2026-11-22.md").exists()
    drafts(fake_llm, {})
    assert [path.name for path in (await p.parts.reflector.run(("daily",))).written] == ["2026-11-22.md"]


def test_catching_up_goes_back_35_days_at_most_and_weeks_are_iso_weeks():
    today = date(2026, 11, 23)
    days = due("daily", today, None, date(2026, 8, 1))
    assert days[0].first == today - timedelta(days=35) and days[-1].first == date(2026, 11, 22) and len(days) == 35
    assert due("daily", today, Period.containing("daily", date(2026, 11, 20)), None) == [
        Period.containing("daily", date(2026, 11, 21)), Period.containing("daily", date(2026, 11, 22))]  # fmt: skip
    [week] = due("weekly", today, Period.containing("weekly", date(2026, 11, 11)), None)
    assert (week.label, week.first, week.last) == ("2026-W47", date(2026, 11, 16), date(2026, 11, 22))
    assert due("monthly", date(2026, 12, 1), None, date(2026, 11, 3))[0].label == "2026-11"
    assert Period.from_label("weekly", "2026-W01").first == date(2025, 12, 29)  # ISO: the week of 1 January


def test_a_days_lines_are_found_without_reading_the_whole_log(tmp_path):
    """Every line of the day and nothing else, from files that began before it, during it and after it."""
    folder = tmp_path / "episodes"
    start = datetime(2026, 11, 1, 0, 0, tzinfo=ZONE)
    for n in range(6):  # sessions four days apart, each writing a line every 7 minutes for five days
        lines = [("user", f"s{n} line {i}", {}) for i in range(5 * 24 * 60 // 7)]
        write_session(folder, start + timedelta(days=4 * n, minutes=n), lines)
    day_start = datetime(2026, 11, 9, tzinfo=ZONE)
    found = list(episodes_between(folder, day_start, day_start + timedelta(days=1)))
    expected = []
    for path in sorted(folder.iterdir()):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if day_start <= datetime.fromisoformat(record["ts"]) < day_start + timedelta(days=1):
                expected.append(record["content"])
    assert [episode.content for episode in found] == expected and len(expected) > 200


async def test_reflections_and_summaries_are_recalled_marked_as_such(anton_home, project_dir, fake_llm):
    p = project(anton_home, project_dir, llm=fake_llm.llm_client(), review_level="none")
    seed_week(p.paths.episodes)
    drafts(fake_llm, {})
    await p.parts.reflector.run(("daily",), today=date(2026, 11, 18))
    [found] = p.stores.episodic.recall("notes of 2026-11-16", max_results=1)
    assert found.role == "reflection" and found.session == "daily/2026-11-16" and found.ts == "2026-11-16"
    assert found.content.startswith("Daily reflection: 2026-11-16 — Invoices 2026-11-16")
    found_all = p.stores.episodic.recall("invoices", max_results=20)
    roles = [episode.role for episode in found_all]
    assert roles[:2] == ["reflection", "reflection"] and "user" in roles[2:], "the turns follow the reflections"


def test_the_clock_of_these_tests():
    assert MONDAY.weekday() == 0 and MONDAY.isocalendar()[1] == 48


async def test_one_process_writes_the_reflections_at_a_time(anton_home, project_dir, fake_llm):
    import fcntl
    import os

    p = project(anton_home, project_dir, llm=fake_llm.llm_client())
    seed_week(p.paths.episodes)
    drafts(fake_llm, {})
    p.paths.reflections.mkdir(parents=True)
    fd = os.open(p.paths.reflections / ".writing", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)  # as `anton-tui reflect` from cron holds it while it writes
    try:
        report = await p.parts.reflector.run()
    finally:
        os.close(fd)
    assert report.failed == ["another process is writing this project's reflections; nothing was done"]
    assert not (p.paths.reflections / "daily").exists() and fake_llm.requests == []
    assert len((await p.parts.reflector.run()).written) == 7, "once it is done, the next run writes them"
