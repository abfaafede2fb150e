"""The first skill listing reads only what it shows (a meta.json's three fields, a SKILL.md's front matter), yet it
lists exactly the skills that load, with the same fields, and refuses the same files for the same reasons."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from anton_tui.memory.skills.store import SkillStore

ODD_META = {
    "an unknown key holding NaN": '{"name": "Fine", "description": "Does it", "when_to_use": "w", "x": NaN}',
    "a key given twice (the last counts)": '{"name": "First", "name": "Second", "description": "d"}',
    "nulls": '{"name": null, "description": null, "when_to_use": null}',
    "a number for a name": '{"name": 5, "description": "d"}',
    "a number for the creation time": '{"name": "n", "created_at": 2026}',
    "a list for the provenance": '{"name": "n", "provenance": ["manual"]}',
    "a line break in the name": '{"name": "two\\nlines", "description": "d"}',
    "a byte order mark": '\ufeff{"name": "n"}',
    "a list, not an object": '["n"]',
    "no JSON at all": "name: n",
    "an escaped accent": '{"name": "Caf\\u00e9", "description": "Brews \\u2615"}',
}


@pytest.mark.parametrize("text", ODD_META.values(), ids=ODD_META.keys())
def test_a_meta_json_is_listed_exactly_when_the_skill_loads(tmp_path: Path, text: str) -> None:
    folder = tmp_path / "skills" / "odd"
    folder.mkdir(parents=True)
    (folder / "meta.json").write_text(text, encoding="utf-8")
    (folder / "declarative.md").write_text("1. steps\n")
    before = {path.name: path.read_bytes() for path in folder.iterdir()}
    store = SkillStore(tmp_path / "skills")

    listed = store.list_summaries()
    loaded = store.load("odd")
    if loaded is None:
        assert listed == []
        [problem] = store.broken()
        assert problem.label == "odd" and "meta.json" in problem.reason
    else:
        assert [(s["name"], s["description"], s["when_to_use"]) for s in listed] == [
            (loaded.name, loaded.description, loaded.when_to_use)
        ]
        assert store.broken() == []
    assert {path.name: path.read_bytes() for path in folder.iterdir()} == before  # nothing rewritten


def front_matter_ending_at(offset: int, tail: str = "\n") -> str:
    """A SKILL.md whose closing '---' line starts `offset` bytes into the file (its description fills the gap with
    two-byte characters, so a read that cuts the file at a round size can cut one of them in two)."""
    head = "---\nname: wide\ndescription: "
    filler = offset - len(head.encode()) - 1  # (the description's line break)
    text = head + "é" * (filler // 2) + "x" * (filler % 2) + "\n"
    assert len(text.encode()) == offset
    return text + "---" + tail + "1. Do it.\n"


@pytest.mark.parametrize("offset", [8180, 8189, 8190, 8191, 8192, 8193, 8200, 20_000])
def test_a_front_matter_crossing_the_first_piece_read_is_listed_whole(tmp_path: Path, offset: int) -> None:
    folder = tmp_path / "skills" / "wide"
    folder.mkdir(parents=True)
    text = front_matter_ending_at(offset)
    (folder / "SKILL.md").write_text(text, encoding="utf-8")

    [summary] = SkillStore(tmp_path / "skills").list_summaries()
    assert summary["description"] == text.split("description: ", 1)[1].split("\n", 1)[0]


def test_a_front_matter_closed_by_the_last_line_without_a_line_break_is_listed(tmp_path: Path) -> None:
    folder = tmp_path / "skills" / "short"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: short\ndescription: Ends at the dashes\n---")

    assert [s["description"] for s in SkillStore(tmp_path / "skills").list_summaries()] == ["Ends at the dashes"]


@pytest.mark.parametrize("where", ["front matter", "body in the first piece"])
def test_a_byte_that_is_not_utf8_early_in_a_skill_md_makes_it_broken(tmp_path: Path, where: str) -> None:
    folder = tmp_path / "skills" / "latin"
    folder.mkdir(parents=True)
    if where == "front matter":
        data = b"---\nname: latin\ndescription: caf\xe9\n---\n1. Do it.\n"
    else:
        data = b"---\nname: latin\ndescription: fine\n---\n1. Caf\xe9.\n"
    (folder / "SKILL.md").write_bytes(data)
    store = SkillStore(tmp_path / "skills")

    assert store.list_summaries() == []
    [problem] = store.broken()
    assert "not UTF-8" in problem.reason
    assert (folder / "SKILL.md").read_bytes() == data


def test_a_body_that_is_not_utf8_after_the_first_piece_does_not_hide_the_skill(tmp_path: Path) -> None:
    folder = tmp_path / "skills" / "long"
    folder.mkdir(parents=True)
    data = b"---\nname: long\ndescription: Long steps\n---\n" + b"1. step\n" * 2000 + b"caf\xe9\n"
    (folder / "SKILL.md").write_bytes(data)

    assert [s["description"] for s in SkillStore(tmp_path / "skills").list_summaries()] == ["Long steps"]


def test_meta_json_fields_are_listed_as_written(tmp_path: Path) -> None:
    folder = tmp_path / "skills" / "csv_summary"
    folder.mkdir(parents=True)
    meta = {"label": "csv_summary", "name": "CSV Summary", "description": "Summarise", "when_to_use": "a csv file",
            "created_at": "2026-03-01T10:00:00+00:00", "provenance": "manual", "stage_1_present": True}  # fmt: skip
    (folder / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    (folder / "declarative.md").write_text("1. Load\n")

    [summary] = SkillStore(tmp_path / "skills").list_summaries()
    assert (summary["name"], summary["description"], summary["when_to_use"], summary["format"]) == (
        "CSV Summary", "Summarise", "a csv file", "anton"
    )  # fmt: skip


SHAPES = {
    "as skills are written": "---\nname: a\ndescription: Does a\nmetadata:\n  display_name: Skill A\n"
    "  provenance: manual\n  created_at: '2026-03-01T10:00:00+00:00'\n---\n1. Go\n",
    "quoted values": "---\nname: 'it''s'\ndescription: 'a: b # c'\n---\n1. Go\n",
    "a display name that is empty": "---\nname: n\ndescription: d\nmetadata:\n  display_name: ''\n---\n1. Go\n",
    "no name": "---\ndescription: d\n---\n1. Go\n",
    "other keys": "---\nname: n\nlicense: MIT\ndescription: d\nmetadata:\n  author: x\n---\n1. Go\n",
    "a boolean": "---\nname: n\ndescription: d\nuser-invocable: true\ndisable-model-invocation: true\n---\n",
    "a folded description": "---\nname: n\ndescription: >\n  folded\n  text\n---\n1. Go\n",
    "a name that is a word": "---\nname: yes\ndescription: d\n---\n",
    "a duplicate key": "---\nname: n\ndescription: d\ndescription: e\n---\n",
    "a name with a control character": "---\nname: 'a\u0085b'\ndescription: d\n---\n",
    "trailing spaces": "---  \nname: n  \ndescription: d\n---\n",
    "a carriage return": "---\r\nname: n\r\ndescription: d\r\n---\r\n",
    "a byte order mark": "\ufeff---\nname: n\ndescription: d\n---\n",
    "a closing line with more dashes": "---\nname: n\ndescription: d\n----\n---\n",
    "a mapping for a name": "---\nname:\n  first: x\ndescription: d\n---\n",
}


def test_skill_md_skills_of_every_shape_are_listed_as_the_full_reader_reads_them(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    for number, text in enumerate(SHAPES.values()):
        folder = root / f"shape-{number:02}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(text, newline="")
    (root / "shape-00" / "stats.json").write_text('{"total_recalls": 2}')
    (root / "shape-01" / "stats.json").write_text("not json")
    (root / "shape-02" / "scripts").mkdir()
    (root / "shape-02" / "scripts" / "run.sh").write_text("echo\n")
    (root / "shape-03" / "scripts").mkdir()
    (root / "shape-03" / "scripts" / "secret").symlink_to(tmp_path / "elsewhere")
    (root / "alias").symlink_to("shape-00")
    store = SkillStore(root)

    listed = {s["label"]: (s["name"], s["description"], s["model_invocable"]) for s in store.list_summaries()}
    loaded = {skill.label: (skill.name, skill.description, skill.model_invocable) for skill in store.list_all()}
    assert listed == loaded
    assert {"shape-00", "shape-02", "alias"} <= set(listed) and "shape-01" not in listed and "shape-03" not in listed
    assert store.slash_commands() == [("shape-05", "d")]


def test_the_first_listing_is_the_callers_own(tmp_path: Path) -> None:
    folder = tmp_path / "skills" / "report"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: report\ndescription: Monthly report\n---\n1. Go\n")
    store = SkillStore(tmp_path / "skills")

    first = store.list_summaries()
    expected = [dict(summary) for summary in first]
    first[0]["description"] = "changed by a caller"
    first.append(dict(first[0]))
    assert store.list_summaries() == expected
    store.list_summaries()[0]["description"] = "changed again"
    assert store.list_summaries() == expected
