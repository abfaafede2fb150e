"""The Agent Skills fields: resource files read on demand (and never from outside the skill's folder),
`disable-model-invocation`, `user-invocable` and `allowed-tools` as the recall shows them."""

from __future__ import annotations

from pathlib import Path

import pytest

from anton_tui.agent.tools.recall_skill import recall
from anton_tui.agent.tools.skill_resource import MAX_BYTES, read_resource
from anton_tui.memory.skills.store import SkillStore, procedural_memory_section

FRONT = """---
name: {name}
description: {description}
{more}---
1. Follow the steps.
"""


def make_skill(root: Path, name: str, description: str = "Does a thing", more: str = "") -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(FRONT.format(name=name, description=description, more=more))
    return folder


@pytest.fixture
def store(tmp_path: Path) -> SkillStore:
    return SkillStore(tmp_path / "skills")


def test_recall_lists_the_resource_files_and_each_is_read_on_demand(store: SkillStore, tmp_path: Path) -> None:
    folder = make_skill(store.root, "report")
    for rel, text in {"scripts/build.py": "print('hi')\n", "references/columns.md": "# Columns\n",
                      "assets/template.txt": "Dear {name}\n"}.items():  # fmt: skip
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    secret = tmp_path / "secret.txt"
    secret.write_text("password=hunter2\n")

    text = recall(store, "report").text
    assert "- scripts/build.py (12 bytes)" in text and "- references/columns.md" in text
    assert "- assets/template.txt" in text
    assert "read_skill_resource" in text
    assert read_resource(store, "report", "references/columns.md").text == "# Columns\n"

    for bad, why in (("../secret.txt", "leave"), ("references/../../secret.txt", "leave"),
                     ("/etc/passwd", "leave"), ("SKILL.md", "only files under"),
                     ("scripts/missing.py", "cannot be read")):  # fmt: skip
        result = read_resource(store, "report", bad)
        assert not result.success and why in result.text, bad

    (folder / "references" / "leak.md").symlink_to(secret)  # a link to a secret outside the skill
    result = read_resource(store, "report", "references/leak.md")
    assert not result.success and "hunter2" not in result.text
    refused = recall(store, "report")  # the skill is not recalled through the link; the reason names it, not its text
    assert not refused.success and "references/leak.md is a link" in refused.text and "hunter2" not in refused.text


def test_a_resource_is_capped_and_a_binary_one_is_refused(store: SkillStore) -> None:
    folder = make_skill(store.root, "big")
    (folder / "references").mkdir()
    (folder / "references" / "long.md").write_text("x" * (MAX_BYTES + 500))
    (folder / "assets").mkdir()
    (folder / "assets" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe")

    long = read_resource(store, "big", "references/long.md")
    assert long.success and long.text.startswith("x" * MAX_BYTES) and "continues" in long.text
    assert len(long.text) < MAX_BYTES + 200
    binary = read_resource(store, "big", "assets/logo.png")
    assert not binary.success and "not a text file" in binary.text


def test_disable_model_invocation_keeps_a_skill_out_of_the_model_list(store: SkillStore) -> None:
    make_skill(store.root, "deploy", "Deploy to production", "disable-model-invocation: true\nuser-invocable: true\n")
    make_skill(store.root, "tidy", "Tidy the notes")

    section = procedural_memory_section(store.list_summaries())
    assert "`tidy`" in section and "deploy" not in section
    deploy = store.load("deploy")
    assert not deploy.model_invocable and deploy.user_invocable and store.load("tidy").model_invocable


def test_allowed_tools_are_shown_in_the_recall(store: SkillStore) -> None:
    make_skill(store.root, "careful", "Careful work", "allowed-tools: recall memorize\n")
    result = recall(store, "careful")
    assert store.load("careful").allowed_tools == ["recall", "memorize"]
    assert "only these tools may be used: `recall`, `memorize`" in result.text
    assert result.limits_tools == ("careful", ("recall", "memorize"))


def test_skill_show_names_the_source_the_allowed_tools_and_the_slash_command(store: SkillStore) -> None:
    from anton_tui.tui.commands.skill_cmds import skill_markdown

    make_skill(store.root, "careful", "Careful work", "allowed-tools: recall memorize\nuser-invocable: true\n")
    text = skill_markdown(store.load("careful"))
    assert "**Allowed tools:** recall, memorize" in text and "`/careful [arguments]`" in text
