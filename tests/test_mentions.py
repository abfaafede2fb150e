"""`@path` mentions: which paths a message names, and which of them are passed on to the agent."""

from __future__ import annotations

from pathlib import Path

from anton_tui.agent.mentions import check_mentions, mentioned_paths
from anton_tui.agent.turn_notes import user_content


def test_mentions_are_found_at_word_starts_only() -> None:
    text = "Compare @src/a.py with @data/b.csv, then mail me@example.com about @src/a.py."
    assert mentioned_paths(text) == ["src/a.py", "data/b.csv"]
    assert mentioned_paths("@top.md first") == ["top.md"]
    assert mentioned_paths("no mention @ here") == []


def test_files_in_the_workspace_pass_and_the_rest_is_refused_with_a_reason(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("print(1)\n", encoding="utf-8")
    (tmp_path / "big.csv").write_bytes(b"x" * 3000)
    (tmp_path.parent / "outside.txt").write_text("no", encoding="utf-8")

    check = check_mentions("@src/a.py @big.csv @gone.txt @../outside.txt @src", tmp_path, size_cap=2048)

    assert check.files == (("src/a.py", 9),)
    lines = [refused.line for refused in check.refused]
    assert lines[0] == ("@big.csv: 2.9 KB is over the 2.0 KB limit for mentioned files; not passed to Anton "
                        "(ask for the part you need instead).")  # fmt: skip
    assert lines[1] == "@gone.txt: no such file in the workspace; not passed to Anton."
    assert lines[2].startswith("@../outside.txt: outside the workspace folder")
    assert lines[3].startswith("@src: not a file")
    assert "src/a.py (9 bytes)" in check.note and "scratchpad" in check.note


def test_nothing_passed_means_no_note(tmp_path: Path) -> None:
    assert check_mentions("@missing.txt", tmp_path).note is None


def test_notes_follow_the_typed_text_as_text_blocks() -> None:
    assert user_content("hello") == "hello"
    assert user_content("hello", ["note"]) == [{"type": "text", "text": "hello"}, {"type": "text", "text": "note"}]
