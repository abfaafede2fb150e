"""The consolidator: which scratchpad sessions are replayed, what a replay yields, and that cells replay only once."""

from __future__ import annotations

import pytest

from anton_tui.agent.learning import LearningLoops
from anton_tui.memory.learners.consolidator import Consolidator
from anton_tui.scratchpad.cell import Cell
from tests.fakellm import Reply
from tests.fakellm.fixtures import fake_llm  # noqa: F401
from tests.session_helpers import (
    CODER,
    PLANNER,
    coder_requests,
    exec_call,
    exec_reply,
    forced_tool,
    make_session,
    quiet_coder,
    read,
    run_turn,
    settle,
    user_text_of,
)


def ok(n: int = 0) -> Cell:
    return Cell(code=f"print({n})", description=f"print {n}", stdout=f"{n}\n", status="ok")


def err() -> Cell:
    return Cell(code="1/0", description="divide", error="Traceback ...\nZeroDivisionError: division by zero",
                status="error")


def warned(text: str) -> Cell:
    return Cell(code="run()", description="run", stderr=text, status="ok")


@pytest.mark.parametrize(
    ("cells", "expected"),
    [
        ([], False),
        ([err()], False),  # one cell is too little to learn from, even a failed one
        ([ok(1), ok(2)], False),
        ([ok(1), ok(2), ok(3), ok(4)], False),
        ([ok(i) for i in range(5)], True),  # a long session
        ([ok(1), err()], True),
        ([ok(1), warned("Worker process was killed by the OOM killer")], True),
        ([ok(1), warned("Task CANCELLED by the scheduler")], True),
        ([ok(1), warned("DeprecationWarning: use something else")], False),
    ],
)
def test_should_replay_heuristics(cells, expected):
    assert Consolidator.should_replay(cells) is expected


async def test_replay_yields_at_most_five_engrams_with_scope_and_confidence(fake_llm):  # noqa: F811
    items = [
        {"text": "When an API paginates, fetch pages in a loop", "kind": "when", "scope": "global",
         "confidence": "high"},
        {"text": "The sales export uses semicolons", "kind": "lesson", "topic": "Sales Export"},
        *({"text": f"Extra memory {i}"} for i in range(5)),
    ]
    fake_llm.queue(Reply.tool_call("ConsolidatedMemories", {"items": items}), model=CODER)
    cells = [ok(1), err(), ok(2)]

    engrams = await Consolidator().replay_and_extract(cells, fake_llm.llm_client())

    assert len(engrams) == 5
    first, second = engrams[:2]
    assert (first.kind, first.scope, first.confidence, first.source) == ("when", "global", "high", "consolidation")
    assert (second.kind, second.scope, second.confidence, second.topic) == ("lesson", "project", "medium",
                                                                            "Sales Export")
    assert all(e.source == "consolidation" for e in engrams)
    [request] = fake_llm.requests
    assert forced_tool(request) == "ConsolidatedMemories" and request.max_tokens >= 2048
    summary = user_text_of(request)
    assert "Cell 1 [ok]: print 1 -> 1" in summary
    assert "Cell 2 [error]: divide -> ERROR: ZeroDivisionError: division by zero" in summary
    assert "Code: 1/0" in summary and "Cell 3 [ok]" in summary


async def test_a_pad_is_replayed_once_and_later_only_its_new_cells_count(fake_llm):  # noqa: F811
    session = make_session(fake_llm)
    five_cells = Reply(calls=[exec_call("main", f"print({i} * {i})", f"square {i}") for i in range(5)])
    fake_llm.queue(five_cells, Reply.text("Squares printed."), model=PLANNER)
    fake_llm.queue(
        Reply.tool_call("ConsolidatedMemories", {"items": [
            {"text": "Print intermediate results in every scratchpad cell", "kind": "always", "scope": "global",
             "confidence": "high"},
            {"text": "Squares of small integers are cheap to compute inline", "kind": "lesson", "topic": "math"},
        ]}),
        model=CODER,
    )

    await run_turn(session, "Print the first five squares")
    await settle(session)
    assert len(coder_requests(fake_llm)) == 1
    assert "Print intermediate results" in read(session.cortex.global_hc.rules_path)
    assert "cheap to compute inline" in read(session.cortex.project_hc.lessons_path)

    # same pad, no new cells: nothing to replay
    fake_llm.queue(Reply.text("They were 0, 1, 4, 9 and 16."), model=PLANNER)
    await run_turn(session, "Remind me of the squares")
    await settle(session)
    assert len(coder_requests(fake_llm)) == 1

    # one new cell is not enough on its own ...
    fake_llm.queue(exec_reply("main", "print(25)", "square 5"), Reply.text("25"), model=PLANNER)
    await run_turn(session, "And the next one?")
    await settle(session)
    assert len(coder_requests(fake_llm)) == 1

    # ... but it counts together with the next ones, and the replay holds the new cells only
    four_more = Reply(calls=[exec_call("main", f"print({i} * {i})", f"square {i}") for i in range(6, 10)])
    fake_llm.queue(four_more, Reply.text("Done."), model=PLANNER)
    quiet_coder(fake_llm)
    await run_turn(session, "Four more please")
    await settle(session)
    requests = coder_requests(fake_llm)
    assert len(requests) == 2
    summary = user_text_of(requests[1])
    assert len([line for line in summary.splitlines() if line.startswith("Cell ")]) == 5
    assert "square 5" in summary and "square 9" in summary and "square 0" not in summary
    await session.close()


async def test_failures_alone_are_left_to_the_cerebellum_unless_it_is_off(fake_llm):  # noqa: F811
    failing = [
        exec_reply("main", "import nosuchmodule", "import the helper"),
        exec_reply("main", "nosuchmodule.run()", "run the helper"),
        Reply.text("The helper module is missing."),
    ]
    session = make_session(fake_llm)
    quiet_coder(fake_llm)
    fake_llm.queue(*failing, model=PLANNER)
    await run_turn(session, "Run the helper")
    await settle(session)
    assert [forced_tool(r) for r in coder_requests(fake_llm)] == ["CerebellumReport"]
    await session.close()

    fake_llm.reset()
    session = make_session(fake_llm)
    session.turn_end_hooks.clear()
    session.scratchpad_observers.clear()
    session.turn_end_hooks.extend(LearningLoops(session, cerebellum=False).hooks())
    quiet_coder(fake_llm)
    fake_llm.queue(*failing, model=PLANNER)
    await run_turn(session, "Run the helper")
    await settle(session)
    assert [forced_tool(r) for r in coder_requests(fake_llm)] == ["ConsolidatedMemories"]
    await session.close()


async def test_nothing_is_replayed_with_memory_off(fake_llm):  # noqa: F811
    session = make_session(fake_llm, memory_mode="off")
    fake_llm.queue(Reply(calls=[exec_call("main", f"print({i})", "count") for i in range(5)]), Reply.text("Done."),
                   model=PLANNER)
    await run_turn(session, "Count to five")
    await settle(session)
    assert coder_requests(fake_llm) == []
    await session.close()
