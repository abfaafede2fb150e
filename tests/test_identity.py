"""Identity extraction: every fifth turn, the user's recent messages yield profile facts merged by key."""

from __future__ import annotations

from anton_tui.agent.events import MemoryWritten
from tests.fakellm import Reply
from tests.fakellm.fixtures import fake_llm  # noqa: F401
from tests.session_helpers import (
    CODER,
    PLANNER,
    coder_requests,
    forced_tool,
    make_session,
    read,
    run_turn,
    settle,
    user_text_of,
)

MESSAGES = [
    "Hi, I'm Jorge and I look after the data platform at Acme.",
    "Can you check the row counts in sales.csv?",
    "I'm in San Francisco, so mornings PST suit me.",
    "Please keep answers short.",
    "Now group the rows by region.",
]


async def chat(session, fake_llm, messages):  # noqa: F811
    for text in messages:
        fake_llm.queue(Reply.text("Sure."), model=PLANNER)
        await run_turn(session, text)
        await settle(session)


async def test_the_fifth_turn_extracts_facts_and_merges_them_by_key(fake_llm, anton_home):  # noqa: F811
    profile = anton_home / "memory" / "profile.md"
    profile.parent.mkdir(parents=True)
    profile.write_text("# Profile\n- Name: Someone Else\n- Timezone: CET\n- Works mostly in Python\n")
    session = make_session(fake_llm)
    fake_llm.queue(
        Reply.tool_call("IdentityFacts", {"facts": ["Name: Jorge", "Role: data platform owner at Acme",
                                                    "Timezone: PST", "Works mostly in Python"]}),
        model=CODER,
    )

    await chat(session, fake_llm, MESSAGES[:4])
    assert coder_requests(fake_llm) == []
    await chat(session, fake_llm, MESSAGES[4:])

    [request] = coder_requests(fake_llm)
    assert forced_tool(request) == "IdentityFacts" and request.max_tokens >= 2048
    assert "\n\n".join(MESSAGES) in user_text_of(request)
    assert read(profile) == (
        "# Profile\n- Works mostly in Python\n- Name: Jorge\n- Role: data platform owner at Acme\n- Timezone: PST\n"
    )
    [written] = [e for e in _background(session) if isinstance(e, MemoryWritten)]
    assert written.producer == "identity"
    assert [e.text for e in written.engrams] == ["Name: Jorge", "Role: data platform owner at Acme", "Timezone: PST"]
    await session.close()


async def test_only_the_last_five_messages_are_read(fake_llm):  # noqa: F811
    session = make_session(fake_llm, identity_every_turns=3)
    fake_llm.queue(Reply.tool_call("IdentityFacts", {"facts": []}),
                   Reply.tool_call("IdentityFacts", {"facts": ["Name: Jorge"]}), model=CODER)

    await chat(session, fake_llm, [f"message {i}" for i in range(1, 7)])

    first, second = coder_requests(fake_llm)
    assert "message 1\n\nmessage 2\n\nmessage 3" in user_text_of(first)
    assert "message 2\n\nmessage 3\n\nmessage 4\n\nmessage 5\n\nmessage 6" in user_text_of(second)
    assert "message 1" not in user_text_of(second)
    assert "Name: Jorge" in session.cortex.global_hc.recall_identity()
    await session.close()


async def test_nothing_is_extracted_with_memory_off(fake_llm, anton_home):  # noqa: F811
    session = make_session(fake_llm, memory_mode="off")
    await chat(session, fake_llm, MESSAGES)
    assert coder_requests(fake_llm) == []
    assert not (anton_home / "memory" / "profile.md").exists()
    await session.close()


def _background(session) -> list:
    events = []
    while not session.background_events.empty():
        events.append(session.background_events.get_nowait())
    return events
