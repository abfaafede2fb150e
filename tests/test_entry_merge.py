"""Entry-level three-way merge of memory files (memory/sync.entry_merge.py)."""

from __future__ import annotations

import pytest

from anton_tui.memory.sync.entry_merge import merge_file

RULES = (
    "# Rules\n\n"
    "## Always\n"
    "- Use httpx <!-- confidence:high source:user ts:2026-11-01 -->\n"
    "- Write tests first <!-- confidence:medium source:llm ts:2026-11-01 -->\n\n"
    "## Never\n"
    "- Commit secrets <!-- confidence:high source:user ts:2026-11-01 -->\n\n"
    "## When\n"
)
LESSONS = (
    "- pandas reads csv fast <!-- confidence:medium source:llm topic:data ts:2026-11-01 -->\n"
    "- The API pages by 100 <!-- confidence:high source:llm topic:api ts:2026-11-01 -->\n"
    "- Retry on 429 <!-- confidence:medium source:llm topic:api ts:2026-11-01 -->\n"
)


def b(text: str) -> bytes:
    return text.encode("utf-8")


def lines(data: bytes | None) -> list[str]:
    return data.decode().splitlines() if data else []


def test_unchanged_files_come_back_byte_for_byte() -> None:
    odd = b("# Rules\r\n\n## Always\r\n- a rule with CRLF <!-- ts:2026-11-01 -->\r\nstray text\n")
    assert merge_file("rules.md", odd, odd, odd).data == odd
    changed = odd + b"- another <!-- ts:2026-11-02 -->\n"
    assert merge_file("rules.md", odd, odd, changed).data == changed
    assert merge_file("rules.md", odd, changed, odd).data == changed
    assert merge_file("rules.md", None, None, None).data is None


def test_additions_on_both_sides_are_united_and_both_orders_agree() -> None:
    ours = LESSONS + "- Mine: cache the token <!-- ts:2026-11-02 -->\n"
    theirs = LESSONS + "- Theirs: dates are UTC <!-- ts:2026-11-02 -->\n"
    merged = merge_file("lessons.md", b(LESSONS), b(ours), b(theirs))
    assert merged.clean
    got = lines(merged.data)
    assert "- Mine: cache the token <!-- ts:2026-11-02 -->" in got
    assert "- Theirs: dates are UTC <!-- ts:2026-11-02 -->" in got
    assert got[:3] == LESSONS.splitlines()
    # the other machine then merges the pushed result into its own: both end with the same bytes
    again = merge_file("lessons.md", b(LESSONS), b(theirs), merged.data)
    assert again.data == merged.data


def test_rule_added_lands_in_its_section_and_the_rest_of_the_file_is_untouched() -> None:
    theirs = RULES.replace("## When\n", "## When\n- When deploying, tag first <!-- ts:2026-11-03 -->\n")
    ours = RULES.replace("- Commit secrets", "- Push to main directly <!-- ts:2026-11-03 -->\n- Commit secrets")
    merged = merge_file("rules.md", b(RULES), b(ours), b(theirs))
    text = merged.data.decode()
    assert text == ours.replace("## When\n", "## When\n- When deploying, tag first <!-- ts:2026-11-03 -->\n")


def test_new_section_is_created_in_anton_order() -> None:
    base = "# Rules\n\n## Always\n- Use httpx <!-- ts:2026-11-01 -->\n\n## When\n- When x, y <!-- ts:2026-11-01 -->\n"
    theirs = base.replace("## When", "## Never\n- Never z <!-- ts:2026-11-02 -->\n\n## When")
    ours = base.replace("- Use httpx <!-- ts:2026-11-01 -->\n", "- Use httpx <!-- ts:2026-11-01 -->\n- Use uv <!-- ts:2026-11-02 -->\n")
    merged = merge_file("rules.md", b(base), b(ours), b(theirs))
    assert merged.clean
    text = merged.data.decode()
    assert text.index("## Always") < text.index("## Never") < text.index("## When")
    assert "- Never z" in text and "- Use uv" in text


def test_deletion_removes_unless_the_other_side_changed_it() -> None:
    ours = LESSONS.replace("- Retry on 429 <!-- confidence:medium source:llm topic:api ts:2026-11-01 -->\n", "")
    theirs = LESSONS.replace("- pandas reads csv fast <!-- confidence:medium source:llm topic:data ts:2026-11-01 -->\n", "")
    merged = merge_file("lessons.md", b(LESSONS), b(ours), b(theirs))
    assert lines(merged.data) == ["- The API pages by 100 <!-- confidence:high source:llm topic:api ts:2026-11-01 -->"]
    # deleted here, its confidence raised there: the changed entry stays
    raised = LESSONS.replace("- Retry on 429 <!-- confidence:medium", "- Retry on 429 <!-- confidence:high")
    merged = merge_file("lessons.md", b(LESSONS), b(ours), b(raised))
    assert merged.clean
    assert "- Retry on 429 <!-- confidence:high source:llm topic:api ts:2026-11-01 -->" in lines(merged.data)
    assert merged.notes and "deleted" in merged.notes[0]
    # and the other way round
    merged = merge_file("lessons.md", b(LESSONS), b(raised), b(ours))
    assert "- Retry on 429 <!-- confidence:high source:llm topic:api ts:2026-11-01 -->" in lines(merged.data)


def test_edited_on_both_sides_keeps_the_newer_and_notes_the_other() -> None:
    ours = LESSONS.replace("- The API pages by 100 <!-- confidence:high source:llm topic:api ts:2026-11-01 -->",
                           "- The API pages by 100 items <!-- confidence:high source:llm topic:api ts:2026-11-05 -->")
    theirs = LESSONS.replace("- The API pages by 100 <!-- confidence:high source:llm topic:api ts:2026-11-01 -->",
                             "- The API pages by 100 rows <!-- confidence:high source:llm topic:api ts:2026-11-04 -->")
    merged = merge_file("lessons.md", b(LESSONS), b(ours), b(theirs))
    assert merged.clean
    got = lines(merged.data)
    assert "- The API pages by 100 items <!-- confidence:high source:llm topic:api ts:2026-11-05 -->" == got[1]
    assert not any("100 rows" in line for line in got)
    assert any("100 rows" in note for note in merged.notes)
    # the newer on the other side wins, in place
    merged = merge_file("lessons.md", b(LESSONS), b(theirs), b(ours))
    assert lines(merged.data)[1].startswith("- The API pages by 100 items")
    assert len(lines(merged.data)) == 3


def test_same_day_edits_fall_back_to_the_newer_side_and_a_tie_is_a_conflict() -> None:
    ours = LESSONS.replace("Retry on 429", "Retry on 429 twice")
    theirs = LESSONS.replace("Retry on 429", "Retry on 429 with backoff")
    newer_theirs = merge_file("lessons.md", b(LESSONS), b(ours), b(theirs), ours_time=10, theirs_time=20)
    assert "- Retry on 429 with backoff" in newer_theirs.data.decode()
    tie = merge_file("lessons.md", b(LESSONS), b(ours), b(theirs), ours_time=10, theirs_time=10)
    assert tie.data is None and len(tie.conflicts) == 1
    conflict = tie.conflicts[0]
    assert "twice" in conflict.ours and "backoff" in conflict.theirs
    kept = merge_file("lessons.md", b(LESSONS), b(ours), b(theirs), prefer="ours")
    assert kept.data == b(ours)
    taken = merge_file("lessons.md", b(LESSONS), b(ours), b(theirs), prefer="theirs")
    assert taken.data == b(theirs)


def test_text_around_entries_changed_on_both_sides_is_undecidable() -> None:
    base = "# Lessons\n" + LESSONS
    ours = "# Lessons learned\n" + LESSONS
    theirs = "# What we learned\n" + LESSONS + "- new one <!-- ts:2026-11-02 -->\n"
    merged = merge_file("lessons.md", b(base), b(ours), b(theirs))
    assert merged.data is None and merged.conflicts
    # only one side changed the text around the entries: that side's frame is used, entries still united
    ours_entries = base + "- mine <!-- ts:2026-11-02 -->\n"
    merged = merge_file("lessons.md", b(base), b(ours_entries), b(theirs))
    assert merged.clean
    assert merged.data.decode().startswith("# What we learned\n")
    assert "- mine" in merged.data.decode() and "- new one" in merged.data.decode()


def test_undecodable_file_changed_on_both_sides_is_not_merged() -> None:
    base = b("- a\n")
    merged = merge_file("lessons.md", base, b"- a\n- \xff\n", b("- a\n- b\n"))
    assert merged.data is None and merged.conflicts


def test_compaction_on_one_side_and_a_new_lesson_on_the_other() -> None:
    compacted = "- API: pages by 100, retry on 429 <!-- confidence:high topic:api ts:2026-11-06 -->\n"
    theirs = LESSONS.splitlines(keepends=True)[0] + compacted
    ours = LESSONS + "- Fresh lesson <!-- ts:2026-11-06 -->\n"
    merged = merge_file("lessons.md", b(LESSONS), b(ours), b(theirs))
    got = lines(merged.data)
    assert "- The API pages by 100 <!-- confidence:high source:llm topic:api ts:2026-11-01 -->" not in got
    assert compacted.strip() in got and "- Fresh lesson <!-- ts:2026-11-06 -->" in got


def test_profile_and_missing_files() -> None:
    ours = b("# Profile\n- Name: Ada\n")
    theirs = b("# Profile\n- Timezone: UTC\n")
    merged = merge_file("profile.md", None, ours, theirs)
    assert lines(merged.data) == ["# Profile", "- Timezone: UTC", "- Name: Ada"]  # first there, first here
    # a file removed on one side (a reset) with nothing new there: the other side's additions survive alone
    base = b("- a <!-- ts:2026-11-01 -->\n")
    merged = merge_file("lessons.md", base, None, base + b("- b <!-- ts:2026-11-02 -->\n"))
    assert lines(merged.data) == ["- b <!-- ts:2026-11-02 -->"]


def test_rule_moved_to_another_section() -> None:
    theirs = RULES.replace("- Write tests first <!-- confidence:medium source:llm ts:2026-11-01 -->\n", "").replace(
        "## When\n", "## When\n- Write tests first <!-- confidence:medium source:llm ts:2026-11-01 -->\n")
    ours = RULES + "- When tired, stop <!-- ts:2026-11-02 -->\n"
    merged = merge_file("rules.md", b(RULES), b(ours), b(theirs))
    text = merged.data.decode()
    when = text[text.index("## When"):]
    assert "Write tests first" in when and "When tired" in when
    assert text.count("Write tests first") == 1


def test_an_entry_under_a_heading_anton_does_not_use_is_not_lost() -> None:
    base = "# Rules\n\n## Always\n- a <!-- ts:2026-11-01 -->\n"
    theirs = base + "\n## Notes\n- keep this note <!-- ts:2026-11-02 -->\n"
    ours = base.replace("- a <!-- ts:2026-11-01 -->\n", "- a <!-- ts:2026-11-01 -->\n- b <!-- ts:2026-11-02 -->\n")
    merged = merge_file("rules.md", b(base), b(ours), b(theirs))
    text = merged.data.decode()
    assert "- keep this note" in text and "- b <!--" in text
    assert text.index("## Notes") < text.index("- keep this note")


@pytest.mark.parametrize("seed", range(25))
def test_random_changes_on_both_sides_keep_every_addition_and_honour_deletions(seed: int) -> None:
    import random

    rng = random.Random(seed)
    base = [f"lesson {i} about topic {rng.randint(0, 9)}" for i in range(40)]

    def line(text: str, day: int = 1) -> str:
        return f"- {text} <!-- ts:2026-11-{day:02d} -->\n"

    def side(name: str) -> tuple[list[str], set[str], set[str]]:
        texts = list(base)
        deleted = set(rng.sample(base, 4))
        texts = [t for t in texts if t not in deleted]
        added = {f"{name} new {k} {rng.random():.6f}" for k in range(5)}
        for text in sorted(added):
            texts.insert(rng.randint(0, len(texts)), text)
        return texts, deleted, added

    ours, ours_deleted, ours_added = side("mine")
    theirs, theirs_deleted, theirs_added = side("theirs")
    as_bytes = lambda texts: "".join(line(t) for t in texts).encode()  # noqa: E731
    merged = merge_file("lessons.md", as_bytes(base), as_bytes(ours), as_bytes(theirs), ours_time=1, theirs_time=2)
    assert merged.clean
    got = [text.removeprefix("- ").split(" <!--")[0] for text in lines(merged.data)]
    assert len(got) == len(set(got)), "no entry twice"
    assert ours_added | theirs_added <= set(got), "every addition kept"
    assert not (ours_deleted | theirs_deleted) & set(got), "every deletion honoured"
    assert set(got) == (set(base) - ours_deleted - theirs_deleted) | ours_added | theirs_added
    # the other machine merging the result in ends with the same bytes
    assert merge_file("lessons.md", as_bytes(base), as_bytes(theirs), merged.data).data == merged.data
