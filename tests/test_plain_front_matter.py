"""The plain front matter reader gives exactly what PyYAML gives, or leaves the text to PyYAML: checked on generated
front matter mixing every kind of line and value that SKILL.md files hold, and on the tricky ones by name."""

from __future__ import annotations

import random

import pytest
import yaml

from anton_tui.memory.skills.format import _front_matter_loader
from anton_tui.memory.skills.plain_front_matter import plain_front_matter, written_fields

KEYS = ["name", "description", "metadata", "display_name", "on", "No", "null", "user-invocable", "a_b", "x1", "Key"]
VALUES = [
    "Does task number 0. Use when the user asks for task 0", "skill-md-00001", "'2026-03-01T10:00:00+00:00'",
    "2026-03-01", "true", "True", "yes", "Off", "null", "~", "12", "0x1F", "1:20", ".inf", "-x", "- item", "[a, b]",
    "{a: 1}", "'it''s'", "'unclosed", "'a' b", "\"quoted\"", "a: b", "a #c", "C# and F#", "trailing  ", "ends:",
    "&anchor", "*alias", "!tag x", "|", ">", "%p", "@at", "`tick`", "Don't", "50% off", "a, b, c", "x [1] {2}",
    "Ünïcode wörds", "emoji 🎉", "tab\there", "nul\x00", "del\x7f", "nel\x85x", "bom\ufeffx", "y", "N", "<<", "=",
    "", "  ", "'' ", "''", "'a''b'", "a:b", "http://x.y/z", "k: v: w",
]  # fmt: skip
SHAPES = ["{k}: {v}", "{k}:", "  {k}: {v}", "    {k}: {v}", "", "# comment", "{k}:{v}", "  {k}:", "- {v}", "\t{k}: {v}",
          "{k}: {v}\r", "...", "---", " ", "  continued text"]  # fmt: skip


GOOD_KEYS = ["name", "description", "metadata", "display_name", "user-invocable", "a_b", "Key", "provenance"]
GOOD_VALUES = [*VALUES[:2], "'it''s'", "Don't", "a, b, c", "C# and F#", "Ünïcode wörds", "x [1] {2}", "'2026-03-01'"]


def plain_document(rng: random.Random) -> list[str]:
    """Front matter of the plain kind (distinct keys, one nested level), with an odd line put in now and then."""
    lines = []
    for key in rng.sample(GOOD_KEYS, rng.randint(1, 5)):
        if rng.random() < 0.25:
            lines.append(f"{key}:")
            lines += [f"  {sub}: {rng.choice(GOOD_VALUES)}" for sub in rng.sample(GOOD_KEYS, rng.randint(0, 3))]
        else:
            lines.append(f"{key}: {rng.choice(GOOD_VALUES)}")
    if rng.random() < 0.5:
        lines.insert(rng.randrange(len(lines) + 1), rng.choice(SHAPES).format(k=rng.choice(KEYS), v=rng.choice(VALUES)))
    return lines


def yaml_reading(text: str) -> object:
    try:
        return ("ok", yaml.load(text, Loader=_front_matter_loader()))
    except yaml.YAMLError:
        return ("error", None)


@pytest.mark.parametrize("seed", range(40))
def test_generated_front_matter_reads_as_yaml_reads_it_or_is_left_to_yaml(seed: int) -> None:
    rng = random.Random(seed)
    read = 0
    for _ in range(400):
        if rng.random() < 0.6:
            lines = plain_document(rng)
        else:
            lines = [
                rng.choice(SHAPES).format(k=rng.choice(KEYS), v=rng.choice(VALUES)) for _ in range(rng.randint(1, 7))
            ]
        text = "\n".join(lines) + rng.choice(["\n", ""])
        ours = plain_front_matter(text)
        if ours is not None:
            read += 1
            assert yaml_reading(text) == ("ok", ours or None) or (ours == {} and yaml_reading(text) == ("ok", None)), (
                text
            )
    assert read > 100  # the generator does make front matter of the plain kind


@pytest.mark.parametrize(
    "text",
    [
        "name: skill-md-00000\ndescription: Does task number 0. Use when the user asks for task 0\nmetadata:\n"
        "  display_name: Skill 0\n  provenance: manual\n  created_at: '2026-03-01T10:00:00+00:00'\n",
        "name: x\nmetadata:\n",
        "name: x\n\nmetadata:\n  a: b\n\n  c: d\n",
        "description: 'It''s fine'\n",
    ],
)
def test_what_skill_writers_produce_is_read_without_yaml(text: str) -> None:
    assert plain_front_matter(text) == yaml.load(text, Loader=_front_matter_loader())


@pytest.mark.parametrize(
    "text",
    ["on: x\n", "name: 12\n", "name: yes\n", "a: b\n  c: d\n", "a:\n  b: c\n   d: e\n", "a: b\na: c\n", "a:\tb\n",
     "a: b # note\n", "a: >\n  folded\n", "a: 2026-01-01\n", "a: \"x\"\n", "a:\n  b:\n    c: d\n"],
)  # fmt: skip
def test_anything_else_is_left_to_yaml(text: str) -> None:
    assert plain_front_matter(text) is None


WRITTEN_VALUES = [*GOOD_VALUES, "Skill 12", "a  b", "x.y/z", "naïve café", "'x: y # z'", "'a'", "Yes1", "nul", "é"]
ODD_VALUES = [*VALUES, "'", "a'b", "email@x.org", "tail:", "t #x", "NO", "\u00a0x", "x\u00a0", "x\u2028y", "a:b"]


def written_value(rng: random.Random) -> str:
    return rng.choice(WRITTEN_VALUES if rng.random() < 0.9 else ODD_VALUES)


def written_document(rng: random.Random) -> list[str]:
    """Front matter in the shape skills are written in, with random values, now and then changed a little."""
    lines = [f"name: {written_value(rng)}", f"description: {written_value(rng)}"]
    if rng.random() < 0.7:
        lines.append("metadata:")
        for key in ("display_name", "provenance", "created_at"):
            if rng.random() < 0.8:
                lines.append(f"  {key}: {written_value(rng)}")
    if rng.random() < 0.3:
        where = rng.randrange(len(lines) + 1)
        odd = rng.choice(SHAPES).format(k=rng.choice(KEYS), v=rng.choice(VALUES))
        lines.insert(where, rng.choice([odd, rng.choice(lines)]))  # an odd line, or one said twice
    if rng.random() < 0.1:
        rng.shuffle(lines)
    return lines


@pytest.mark.parametrize("seed", range(20))
def test_written_front_matter_read_in_one_match_gives_what_yaml_gives(seed: int) -> None:
    rng = random.Random(seed)
    read = 0
    for _ in range(600):
        text = "\n".join(written_document(rng)) + rng.choice(["\n", "\n", ""])
        fields = written_fields(text)
        if fields is None:
            continue
        read += 1
        outcome, data = yaml_reading(text)
        assert outcome == "ok" and isinstance(data, dict), text
        metadata = data.get("metadata") or {}
        assert fields == (data["name"], data["description"], metadata.get("display_name", "")), text
        assert plain_front_matter(text) == data  # (the plain reader reads it too, the same way)
    assert read > 50  # the generator does make front matter in the written shape
