"""Where a long history is cut for its summary, what the summariser is shown, and the fallbacks that need no model."""

from __future__ import annotations

import json

from anton_tui.agent.context_window import context_window
from anton_tui.agent.summarise import (
    COMPACTED_MARKER,
    RESULT_STUB,
    SEPARATOR,
    choose_cut,
    current_summary,
    drop_oldest,
    is_summary_message,
    serialise,
    stub_largest_results,
    summary_message,
    summary_prefix,
    summary_request,
    with_summary,
    worth_summarising,
)


def turn(number: int, answer_size: int = 200) -> list[dict]:
    return [
        {"role": "user", "content": f"question {number}"},
        {"role": "assistant", "content": [{"type": "text", "text": f"answer {number} " + "x" * answer_size}]},
    ]


def tool_turn(number: int, rounds: int = 3) -> list[dict]:
    messages: list[dict] = [{"role": "user", "content": f"task {number}"}]
    for step in range(rounds):
        call = f"toolu_{number}_{step}"
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": call, "name": "scratchpad", "input": {"action": "exec", "code": "x" * 300}}]})
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": "ok"}]})
    messages.append({"role": "assistant", "content": [{"type": "text", "text": f"done {number}"}]})
    return messages


def pairs_intact(history: list[dict]) -> bool:
    """Every tool_result answers a tool_use of the message right before it."""
    for index, message in enumerate(history):
        if message["role"] != "user" or not isinstance(message["content"], list):
            continue
        answered = {b["tool_use_id"] for b in message["content"] if b.get("type") == "tool_result"}
        if not answered:
            continue
        before = history[index - 1] if index else {"content": []}
        calls = {b["id"] for b in before["content"] if isinstance(b, dict) and b.get("type") == "tool_use"}
        if not answered <= calls:
            return False
    return True


def test_the_cut_falls_at_the_start_of_a_user_turn_and_keeps_the_last_turns():
    history = [m for n in range(1, 11) for m in turn(n)]
    cut = choose_cut(history)
    assert history[cut] == {"role": "user", "content": "question 7"}  # 60% of 20 messages, at a turn start
    assert len(history) - cut >= 4


def test_inside_one_long_tool_turn_the_cut_never_separates_a_call_from_its_result():
    history = tool_turn(1, rounds=12)
    cut = choose_cut(history)
    assert cut >= 2
    assert history[cut]["role"] == "assistant"  # the kept part starts with a call, its result right after it
    kept = with_summary("record", history[cut:])
    assert pairs_intact(kept)
    assert [m["role"] for m in kept[:2]] == ["user", "assistant"]


def test_every_possible_cut_of_a_tool_heavy_history_keeps_pairs_together():
    history = [m for n in range(1, 6) for m in tool_turn(n, rounds=n)]
    for keep in range(1, 10):
        cut = choose_cut(history, keep_recent=keep)
        if cut:
            assert pairs_intact(with_summary("record", history[cut:]))
            assert len(history) - cut >= keep


def test_short_histories_are_not_cut():
    assert choose_cut([m for n in range(1, 3) for m in turn(n)]) == 0


def test_a_summary_at_the_top_is_updated_not_summarised_again():
    first = with_summary("## Goal\n- add numbers", [m for n in range(5, 12) for m in turn(n)])
    assert summary_prefix(first) == 2 and first[1]["content"] == SEPARATOR
    cut = choose_cut(first)
    request = summary_request(first[:cut], budget_chars=100_000)
    assert request.startswith("PREVIOUS RECORD")
    assert "## Goal\n- add numbers" in request
    new_turns = request.split("NEW TURNS TO FOLD IN:\n", 1)[1]
    assert COMPACTED_MARKER not in new_turns and SEPARATOR not in new_turns
    assert new_turns.startswith("[user]: question 5")


def test_anton_summary_followed_by_an_answer_keeps_that_answer_as_material():
    """Anton writes [summary, assistant answer, ...] when the kept part starts with an answer."""
    history = [summary_message("record"), *turn(4)[1:], *[m for n in range(5, 9) for m in turn(n)]]
    assert summary_prefix(history) == 1
    request = summary_request(history[: choose_cut(history)], budget_chars=100_000)
    assert "[assistant]: answer 4" in request


def test_serialised_turns_show_calls_and_results_and_clip_long_text():
    messages = tool_turn(1, rounds=1)
    messages[2]["content"][0]["content"] = "head " + "y" * 5000 + " the cause"
    text = serialise(messages)
    assert "[assistant/tool_use]: scratchpad({" in text
    assert "[tool_result]: head " in text and text.rstrip().endswith("[assistant]: done 1")
    assert "the cause" in text  # the tail of a result is kept, where errors say what went wrong
    assert len(text) < 2000


def test_little_new_material_is_not_worth_a_model_call():
    history = [*turn(1, answer_size=10), *turn(2, answer_size=10), *turn(3, answer_size=50_000),
               *turn(4, answer_size=50_000)]
    assert not worth_summarising(history, 2)
    assert worth_summarising([m for n in range(1, 11) for m in turn(n)], 12)


def size(history: list[dict]) -> int:
    return len(json.dumps(history, ensure_ascii=False))


def test_dropping_the_oldest_keeps_the_summary_and_says_how_many_went():
    history = with_summary("## Goal\n- keep me", [m for n in range(1, 21) for m in turn(n, 500)])
    new, dropped = drop_oldest(history, size(history) // 2)
    assert size(new) <= size(history) // 2
    assert dropped > 0 and is_summary_message(new[0])
    assert current_summary(new).startswith("## Goal\n- keep me")
    assert f"{dropped} earlier messages were dropped" in new[0]["content"]
    assert new[-1] == history[-1]


def test_dropping_never_leaves_a_result_without_its_call_and_stops_at_the_last_few():
    history = [m for n in range(1, 6) for m in tool_turn(n, rounds=3)]
    new, dropped = drop_oldest(history, 0)
    assert pairs_intact(new)
    assert len(new) - summary_prefix(new) >= 4


def test_largest_tool_results_are_cut_down_first_and_every_call_keeps_a_result():
    history = tool_turn(1, rounds=3)
    history[2]["content"][0]["content"] = "a" * 20_000
    history[4]["content"][0]["content"] = "b" * 50_000
    new, stubbed = stub_largest_results(history, size(history) - 40_000)
    assert stubbed == 1 and new[4]["content"][0]["content"] == RESULT_STUB
    assert new[2]["content"][0]["content"] == "a" * 20_000
    assert history[4]["content"][0]["content"] == "b" * 50_000  # the original is not changed in place
    assert pairs_intact(new)


def test_known_models_have_their_window_and_unknown_ones_a_small_safe_one():
    assert context_window("claude-sonnet-4-6") == 200_000
    assert context_window("gpt-4.1-mini") == 1_000_000
    assert context_window("gpt-4o-mini") == 128_000
    assert context_window("llama3.1:8b") == 32_768
    assert context_window("llama3.1:8b", override=8192) == 8192


def test_the_budget_leaves_room_for_the_answer_without_starving_a_small_window():
    from types import SimpleNamespace

    from anton_tui.agent.context_fit import ContextKeeper

    def llm(model: str, max_tokens: int):
        return SimpleNamespace(planning=SimpleNamespace(model=model, max_tokens=max_tokens))

    assert ContextKeeper().budget(llm("claude-sonnet-4-6", 8192)) == 140_000
    assert ContextKeeper(share=0.99).budget(llm("claude-sonnet-4-6", 8192)) == 200_000 - 8192
    assert ContextKeeper(window=8192).budget(llm("llama3.1:8b", 8192)) == int(8192 * 0.7)
    assert ContextKeeper(window=8192, share=0.9).budget(llm("llama3.1:8b", 8192)) == 8192 - 2048
