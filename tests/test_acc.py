"""Turn-level error monitor: detectors, error signatures, nudges, end-of-turn dedupe and replayed turns."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from anton_tui.memory.learners.acc import (
    DETECTORS,
    EVENT_KINDS,
    AnteriorCingulate,
    Event,
    Lesson,
    events_from_records,
    format_nudge,
    normalise_error_signature,
    rules_similarity_predicate,
)
from anton_tui.memory.learners.acc_detectors import (
    classify_kill_reason,
    detect_cap_exhausted,
    detect_kill_loop,
    detect_name_switch,
    detect_oversized_cell,
    detect_repair_churn,
    detect_repeated_error_signature,
    detect_repeated_tool_error,
    detect_reset_churn,
    detect_severity_climb,
)

FIXTURES = Path(__file__).parent / "fixtures" / "acc"

LIVENESS_KILL = "Cell killed after 30s: no liveness signal (no output, heartbeat or progress() call)"
INACTIVITY_KILL = "Cell killed after 30s of inactivity"
HEAVY_KILL = "Cell timed out after 120s total"


def ev(kind: str, severity: int = 1, **detail) -> Event:
    return Event(kind, severity, detail)


def call(name: str, code_len: int = 300) -> Event:
    return ev("scratchpad_call", name=name, code_len=code_len, one_line_description="step")


def tool_fail(name: str, error: str = "Error: upstream refused") -> Event:
    return ev("tool_result", 5, name=name, success=False, error=error)


def tool_ok(name: str) -> Event:
    return ev("tool_result", name=name, success=True, error="")


def pad_fail(name: str, error: str) -> Event:
    return ev("scratchpad_result", 5, name=name, success=False, stdout_len=0, error=error)


def killed(name: str, reason: str) -> Event:
    return ev("scratchpad_killed", 6, name=name, reason=reason)


def detectors_fired(events) -> set[str]:
    return {detector.__name__ for detector in DETECTORS if detector(events) is not None}


# --- the detectors, each at its threshold -------------------------------------------------------------------------


def test_name_switch_needs_two_distinct_names():
    assert detect_name_switch([call("build_pres"), call("build_pres"), call("build_pres")]) is None
    assert detect_name_switch([call(""), call("build_pres")]) is None
    lesson = detect_name_switch([call("build_pres"), call("write_html")])
    assert lesson is not None
    assert (lesson.kind, lesson.detector) == ("always", "detect_name_switch")


def test_oversized_cell_fires_on_two_big_cells_or_any_empty_code():
    assert detect_oversized_cell([call("r", 9000)]) is None
    assert detect_oversized_cell([call("r", 4999), call("r", 5000)]) is None
    assert detect_oversized_cell([call("r", 5000), call("r", 5000)]) is not None
    assert detect_oversized_cell([call("r", "6100"), call("r", "7000")]) is not None
    assert detect_oversized_cell([call("r", "lots"), call("r", None)]) is None
    lesson = detect_oversized_cell([ev("scratchpad_empty_code", 7, name="r")])
    assert lesson is not None
    assert (lesson.kind, lesson.severity) == ("always", 7)


def test_repeated_tool_error_counts_consecutive_failures_of_one_tool():
    assert detect_repeated_tool_error([tool_fail("publish")]) is None
    lesson = detect_repeated_tool_error([tool_fail("publish"), ev("tool_call", name="publish"), tool_fail("publish")])
    assert lesson is not None
    assert (lesson.kind, lesson.severity) == ("when", 5)


def test_repeated_tool_error_run_is_restarted_by_another_tool_and_reset_by_success():
    assert detect_repeated_tool_error([tool_fail("publish"), tool_fail("recall")]) is None
    assert detect_repeated_tool_error([tool_fail("publish"), tool_ok("recall"), tool_fail("publish")]) is None
    assert detect_repeated_tool_error([tool_fail("publish"), tool_fail("recall"), tool_fail("recall")]) is not None


def test_repeated_tool_error_treats_a_result_without_success_as_failure():
    no_verdict = ev("tool_result", name="publish", error="")
    assert detect_repeated_tool_error([no_verdict, no_verdict]) is not None


def test_repeated_error_signature_needs_three_matching_failures():
    two = [pad_fail("a", "KeyError: 'date'"), tool_fail("scratchpad", "KeyError: 'when'")]
    assert detect_repeated_error_signature(two) is None
    lesson = detect_repeated_error_signature([*two, pad_fail("b", "KeyError: 'day'")])
    assert lesson is not None
    assert (lesson.kind, lesson.detector) == ("when", "detect_repeated_error_signature")


def test_repeated_error_signature_ignores_successes_blank_errors_and_other_kinds():
    missing_verdict = ev("tool_result", 5, name="x", error="boom")
    blank = ev("tool_result", 5, name="x", success=False, error="  ")
    kill = ev("scratchpad_killed", 6, name="x", reason="boom")
    assert detect_repeated_error_signature([missing_verdict, blank, kill] * 3) is None
    assert detect_repeated_error_signature([tool_fail("a", "boom"), tool_fail("b", "boom")]) is None


def test_repeated_error_signature_sees_through_argument_tweaks():
    errors = [f"Refusing to save empty credential record for engine='gmail-{i}'" for i in (1, 2, 3)]
    assert detect_repeated_error_signature([tool_fail("datavault", e) for e in errors]) is not None


def test_reset_churn_needs_two_resets():
    reset = ev("scratchpad_reset", 5, name="etl", reason="manual")
    assert detect_reset_churn([reset]) is None
    lesson = detect_reset_churn([reset, reset])
    assert lesson is not None
    assert lesson.kind == "never"


def test_kill_reasons_are_classified():
    assert classify_kill_reason(LIVENESS_KILL) == "liveness"
    assert classify_kill_reason(INACTIVITY_KILL) == "liveness"
    assert classify_kill_reason(HEAVY_KILL) == "heavy"
    assert classify_kill_reason("Cancelled by user.") == "heavy"
    assert classify_kill_reason("") == "ambiguous"
    assert classify_kill_reason("Cell killed after 30s without producing any output") == "ambiguous"
    assert classify_kill_reason("Cell timed out during auto-install of pandas") == "ambiguous"


def test_kill_loop_liveness_and_heavy_lessons():
    assert detect_kill_loop([killed("crawl", LIVENESS_KILL)]) is None
    liveness = detect_kill_loop([killed("crawl", LIVENESS_KILL), killed("crawl", INACTIVITY_KILL)])
    heavy = detect_kill_loop([killed("crawl", HEAVY_KILL), killed("crawl", HEAVY_KILL)])
    assert liveness is not None and heavy is not None
    assert liveness.kind == heavy.kind == "when"
    assert liveness.rule != heavy.rule
    assert "progress()" in liveness.rule


def test_kill_loop_catches_kills_spread_over_renamed_pads():
    lesson = detect_kill_loop([killed("crawl", HEAVY_KILL), killed("crawl2", HEAVY_KILL)])
    heavy_same_pad = detect_kill_loop([killed("crawl", HEAVY_KILL), killed("crawl", HEAVY_KILL)])
    assert lesson is not None
    assert lesson == heavy_same_pad


def test_kill_loop_picks_the_dominant_reason():
    live, heavy = killed("p", LIVENESS_KILL), killed("q", HEAVY_KILL)
    liveness_rule = detect_kill_loop([live, live]).rule
    heavy_rule = detect_kill_loop([heavy, heavy]).rule
    assert detect_kill_loop([live, heavy]) is None
    assert detect_kill_loop([live, live, heavy, heavy]).rule == liveness_rule
    assert detect_kill_loop([live, heavy, heavy]).rule == heavy_rule
    ambiguous = [killed("p", ""), killed("p", "auto-install failed"), killed("q", "killed without producing any output")]
    assert detect_kill_loop(ambiguous) is None


@pytest.mark.parametrize(
    ("severities", "fires"),
    [
        ((1, 3, 5), True),
        ((1, 5, 6, 9), True),
        ((1, 3, 4), False),
        ((3, 5), False),
        ((1, 5, 5), False),
        ((1, 3, 1, 5), False),
    ],
)
def test_severity_climb_needs_a_strict_rise_of_three_ending_high(severities, fires):
    events = [ev("scratchpad_result", s, name="etl") for s in severities]
    assert (detect_severity_climb(events) is not None) is fires


def test_severity_climb_is_tracked_per_name():
    interleaved = [ev("tool_result", 1, name="a"), ev("tool_result", 9, name="b"), ev("tool_result", 3, name="a")]
    lesson = detect_severity_climb([*interleaved, ev("tool_result", 5, name="a")])
    assert lesson is not None and lesson.severity == 5
    mixed_names = [ev("tool_result", 1, name="a"), ev("tool_result", 3, name="b"), ev("tool_result", 5, name="c")]
    assert detect_severity_climb(mixed_names) is None
    unnamed = [ev("history_repair", s, reason="orphan") for s in (1, 3, 5)]
    assert detect_severity_climb(unnamed) is None


def test_repair_churn_needs_three_repairs():
    repair = ev("history_repair", 5, reason="orphaned tool_use", sealed_count=1)
    assert detect_repair_churn([repair, repair]) is None
    assert detect_repair_churn([repair, repair, repair]) is not None


def test_cap_exhausted_fires_on_a_single_event():
    assert detect_cap_exhausted([tool_fail("x")]) is None
    lesson = detect_cap_exhausted([ev("cap_exhausted", 9, cap=25, configured_cap=25)])
    assert lesson is not None
    assert (lesson.kind, lesson.severity) == ("when", 9)


def test_every_lesson_is_one_rule_sentence_opening_with_its_kind():
    streams = [
        [call("a"), call("b")],
        [ev("scratchpad_empty_code", 7, name="a")],
        [tool_fail("x"), tool_fail("x")],
        [tool_fail("x", "boom")] * 3,
        [ev("scratchpad_reset", 5, name="a")] * 2,
        [killed("a", LIVENESS_KILL)] * 2,
        [killed("a", HEAVY_KILL)] * 2,
        [ev("tool_result", s, name="x") for s in (1, 3, 5)],
        [ev("history_repair", 5)] * 3,
        [ev("cap_exhausted", 9)],
    ]
    lessons = [lesson for stream in streams for d in DETECTORS if (lesson := d(stream))]
    assert {lesson.detector for lesson in lessons} == {d.__name__ for d in DETECTORS}
    assert len({lesson.rule for lesson in lessons}) == len({(lesson.detector, lesson.rule) for lesson in lessons})
    for lesson in lessons:
        assert lesson.rule.split()[0].lower() == lesson.kind
        assert lesson.rule.endswith(".") and ". " not in lesson.rule


# --- vocabulary discipline ------------------------------------------------------------------------------------------


SINGLE_KIND_STREAMS = {
    "scratchpad_call": [call("a", 6000), call("b", 6000), call("c", 6000)],
    "scratchpad_result": [pad_fail("a", "ValueError: bad row 7")] * 4,
    "scratchpad_empty_code": [ev("scratchpad_empty_code", 7, name="a")] * 3,
    "scratchpad_reset": [ev("scratchpad_reset", 5, name="a", reason="manual")] * 3,
    "scratchpad_killed": [killed("a", HEAVY_KILL), killed("b", LIVENESS_KILL)] * 2,
    "tool_call": [ev("tool_call", name=n, args_summary="{'q': 1}") for n in ("recall", "recall", "scratchpad")] * 3,
    "tool_result": [tool_fail("publish", "PUBLISH FAILED")] * 4,
    "history_repair": [ev("history_repair", 5, reason="orphaned tool_use", sealed_count=2)] * 4,
    "cap_exhausted": [ev("cap_exhausted", 9, cap=25, configured_cap=25)],
}


def test_event_vocabulary_is_closed_and_complete():
    assert set(SINGLE_KIND_STREAMS) == EVENT_KINDS
    assert len(EVENT_KINDS) == 9
    assert not {"context_compaction", "round_milestone"} & EVENT_KINDS


def test_every_kind_but_tool_call_is_read_by_some_detector():
    readers = {kind: detectors_fired(stream) for kind, stream in SINGLE_KIND_STREAMS.items()}
    assert readers.pop("tool_call") == set()
    unread = [kind for kind, fired in readers.items() if not fired]
    assert unread == []
    assert readers["scratchpad_call"] == {"detect_name_switch", "detect_oversized_cell"}
    assert readers["tool_result"] == {"detect_repeated_tool_error", "detect_repeated_error_signature"}


def test_observe_rejects_unknown_kinds_and_records_nothing():
    acc = AnteriorCingulate()
    with pytest.raises(ValueError, match="round_milestone"):
        acc.observe("round_milestone", {"round": 3})
    assert acc.events == ()


def test_observe_returns_a_frozen_event_detached_from_the_caller():
    acc = AnteriorCingulate()
    detail = {"name": "publish", "success": False, "error": "boom"}
    event = acc.observe("tool_result", detail, severity=5, round_idx=2)
    detail["success"] = True
    assert event == Event("tool_result", 5, {"name": "publish", "success": False, "error": "boom"}, 2)
    assert acc.events == (event,)
    with pytest.raises(TypeError):
        event.detail["name"] = "other"
    acc.observe("tool_call", {"name": "publish"})
    assert acc.event_kind_counts == {"tool_result": 1, "tool_call": 1}


def test_lesson_kind_is_checked():
    with pytest.raises(ValueError):
        Lesson("Prefer tea.", "lesson", "detect_tea")


# --- error signatures ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Refusing to save record for engine='gmail-1'", "Refusing to save record for engine='gmail-2'"),
        ('KeyError: "order_date"', 'KeyError: "ship_date"'),
        ("Rate limited, retry in 31 seconds (attempt 2)", "Rate limited, retry in 7 seconds (attempt 3)"),
        ("Segmentation fault at 0x7ffee4b2", "Segmentation fault at 0xDEADBEEF"),
        ("No such file: /tmp/run-1/out.csv", "No such file: /home/ana/data/in.parquet"),
        (r"No such file: C:\Users\ana\report.xlsx", r"No such file: D:\data\q3.csv"),
        (r"No such file: \\fileserver\share\q3.csv", r"No such file: C:/Users/ana/q3.csv"),
        ('{"message": "quota exceeded for key 42"}', '  {"message": "quota exceeded for key 7", "code": 429}'),
        ('{"error": {"message": "invalid model", "type": "bad_request"}}', "invalid model"),
        ("line one\n\n   line   two ", "line one line two"),
    ],
)
def test_errors_differing_only_in_variable_parts_share_a_signature(first, second):
    assert normalise_error_signature(first) == normalise_error_signature(second)


def test_windows_paths_are_normalised_like_posix_paths():
    assert normalise_error_signature(r"cannot open C:\Users\f.txt") == "cannot open /P"
    assert normalise_error_signature(r"cannot open \\server\share\f.txt") == "cannot open /P"


def test_different_errors_keep_different_signatures():
    assert normalise_error_signature("KeyError: 'a'") != normalise_error_signature("ValueError: 'a'")
    assert normalise_error_signature('{"message": "quota"}') != normalise_error_signature('{"message": "auth"}')
    not_an_envelope = '{"status": 500}'
    assert normalise_error_signature(not_an_envelope) == '{"X": N}'


# --- nudges and end of turn -----------------------------------------------------------------------------------------


def test_at_round_n_nudges_each_detector_once_per_turn():
    acc = AnteriorCingulate()
    acc.observe("tool_result", {"name": "publish", "success": False, "error": "timeout"}, severity=5)
    assert acc.at_round_n() == []
    acc.observe("tool_result", {"name": "publish", "success": False, "error": "denied"}, severity=5)
    assert [lesson.detector for lesson in acc.at_round_n()] == ["detect_repeated_tool_error"]
    acc.observe("tool_result", {"name": "publish", "success": False, "error": "refused"}, severity=5)
    assert acc.at_round_n() == []
    acc.observe("cap_exhausted", {"cap": 25}, severity=9)
    assert [lesson.detector for lesson in acc.at_round_n()] == ["detect_cap_exhausted"]
    assert acc.at_round_n() == []


def test_clear_starts_a_new_turn_and_nudges_again():
    acc = AnteriorCingulate()
    for _ in range(2):
        acc.observe("scratchpad_reset", {"name": "etl", "reason": "manual"}, severity=5)
    first = acc.at_round_n()
    acc.clear()
    assert acc.events == () and acc.event_kind_counts == {}
    assert acc.at_round_n() == []
    for _ in range(2):
        acc.observe("scratchpad_reset", {"name": "etl", "reason": "manual"}, severity=5)
    assert acc.at_round_n() == first != []


def test_nudges_ignore_known_rules_but_end_of_turn_skips_them():
    acc = AnteriorCingulate(has_similar_lesson=lambda rule: True)
    acc.observe("cap_exhausted", {"cap": 25}, severity=9)
    assert [lesson.detector for lesson in acc.at_round_n()] == ["detect_cap_exhausted"]
    assert acc.at_end_of_turn() == []
    assert [lesson.detector for lesson in acc.at_end_of_turn(lambda rule: False)] == ["detect_cap_exhausted"]


def test_end_of_turn_skips_rules_already_in_memory():
    acc = AnteriorCingulate()
    for name in ("build_pres", "write_html"):
        acc.observe("scratchpad_call", {"name": name, "code_len": 200})
    for _ in range(2):
        acc.observe("scratchpad_reset", {"name": "write_html", "reason": "manual"}, severity=5)
    name_switch_rule = detect_name_switch(acc.events).rule
    rules_md = (
        "# Rules\n\n## Always\n"
        f"- {name_switch_rule.upper()} <!-- confidence:high source:consolidation ts:2026-01-04 -->\n\n## Never\n\n## When\n"
    )
    lessons = acc.at_end_of_turn(rules_similarity_predicate(rules_md))
    assert [lesson.detector for lesson in lessons] == ["detect_reset_churn"]
    assert len(acc.events) == 4
    assert [lesson.detector for lesson in acc.at_end_of_turn()] == ["detect_name_switch", "detect_reset_churn"]


def test_end_of_turn_drops_duplicate_rule_text():
    def first(events):
        return Lesson("Always check the units.", "always", "first", 3)

    def second(events):
        return Lesson("Always check the units.", "always", "second", 5)

    acc = AnteriorCingulate(detectors=(first, second))
    assert [lesson.detector for lesson in acc.at_end_of_turn()] == ["first"]


def test_same_failure_keeps_only_the_more_specific_signature_lesson():
    acc = AnteriorCingulate()
    for request in (4411, 4412, 4419):
        acc.observe("tool_result", {"name": "publish", "success": False, "error": f"settings unavailable ({request})"})
    assert detect_repeated_tool_error(acc.events) is not None
    assert [lesson.detector for lesson in acc.at_end_of_turn()] == ["detect_repeated_error_signature"]


def test_different_failures_keep_both_error_lessons():
    acc = AnteriorCingulate()
    for error in ("timeout", "quota exceeded"):
        acc.observe("tool_result", {"name": "publish", "success": False, "error": error}, severity=5)
    for cell in range(3):
        acc.observe("scratchpad_result", {"name": "etl", "success": False, "error": f"KeyError: 'col{cell}'"})
    detectors = [lesson.detector for lesson in acc.at_end_of_turn()]
    assert detectors == ["detect_repeated_tool_error", "detect_repeated_error_signature"]


def test_format_nudge_names_the_detector_and_disowns_the_user():
    lesson = detect_cap_exhausted([ev("cap_exhausted", 9)])
    text = format_nudge(lesson)
    assert lesson.rule in text and "detect_cap_exhausted" in text
    assert "self-check" in text.lower() and "not written by the user" in text


# --- replayed turns -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fixture", "expected"),
    [
        ("name_switch", ["detect_name_switch"]),
        ("oversized_cell", ["detect_oversized_cell"]),
        ("publish_failure_loop", ["detect_repeated_error_signature"]),
        ("reset_churn", ["detect_reset_churn"]),
        ("kill_loop", ["detect_name_switch", "detect_kill_loop"]),
    ],
)
def test_replayed_turns_produce_the_expected_lessons(fixture, expected):
    records = json.loads((FIXTURES / f"{fixture}.json").read_text(encoding="utf-8"))
    acc = AnteriorCingulate()
    for event in events_from_records(records):
        acc.observe(event.kind, event.detail, severity=event.severity, round_idx=event.round_idx)
    assert len(acc.events) == len(records)
    assert [lesson.detector for lesson in acc.at_end_of_turn()] == expected
    assert [lesson.detector for lesson in acc.at_round_n()] == expected


def test_kill_loop_replay_learns_the_liveness_rule():
    events = events_from_records(json.loads((FIXTURES / "kill_loop.json").read_text(encoding="utf-8")))
    assert len({e.detail["name"] for e in events if e.kind == "scratchpad_killed"}) == 2
    assert "progress()" in detect_kill_loop(events).rule


def test_event_records_get_defaults_and_bad_records_are_named():
    [event] = events_from_records([{"kind": "cap_exhausted"}])
    assert (event.severity, dict(event.detail), event.round_idx) == (1, {}, 0)
    with pytest.raises(ValueError, match="record 1"):
        events_from_records([{"kind": "tool_call"}, {"kind": "round_milestone"}])
    with pytest.raises(ValueError, match="record 0"):
        events_from_records([{"severity": 3}])
    with pytest.raises(ValueError, match="record 0"):
        events_from_records([{"kind": "tool_call", "severity": "high"}])


# --- the similarity predicate ---------------------------------------------------------------------------------------

RULES_MD = """# Rules

## Always
- Always keep one scratchpad name for the whole task <!-- confidence:high source:consolidation ts:2026-01-04 -->
- Use httpx instead of requests <!-- confidence:high source:user ts:2026-01-02 -->

## Never

## When
- If paginated API → use async + progress() <!-- confidence:medium source:consolidation ts:2026-01-03 -->
"""


@pytest.mark.parametrize(
    ("rule", "present"),
    [
        ("always keep ONE scratchpad name, for the whole task!", True),
        ("use httpx", True),
        ("Always keep one scratchpad name for the entire task", True),
        ("Always keep one scratchpad name for every single task", False),
        ("Use http", False),
        ("When", False),
        ("confidence high source consolidation", False),
        ("If paginated API use async progress", True),
        ("...", False),
    ],
)
def test_similarity_predicate(rule, present):
    assert rules_similarity_predicate(RULES_MD)(rule) is present


def test_similarity_predicate_on_empty_memory_knows_nothing():
    assert rules_similarity_predicate("")("Always keep one scratchpad name for the whole task") is False


def test_module_imports_no_ui_or_sdk():
    code = (
        "import sys, anton_tui.memory.learners.acc; "
        "print(sorted(m for m in ('textual', 'anthropic', 'openai') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"


def test_the_scratchpads_own_inactivity_kill_counts_as_liveness():
    from anton_tui.memory.learners.acc_detectors import classify_kill_reason

    reason = "Cell killed after 30s without output (nothing printed and no progress() call)."
    assert classify_kill_reason(reason) == "liveness"
    assert classify_kill_reason("Cell timed out after 120s total without producing any output") == "ambiguous"
    assert classify_kill_reason("Cell timed out after 120s total.") == "heavy"
