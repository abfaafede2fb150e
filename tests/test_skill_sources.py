"""Skills from several places: the project's .agents/skills, ~/.anton/skills, other tools' folders in the home
folder, and the built-in skills; which one wins a label, switching sources off, and never writing outside the user's
own folder."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from anton_tui.agent.tools.recall_skill import recall
from anton_tui.config import load_settings
from anton_tui.memory.skills.sources import BUILTIN_ROOT, skill_sources, sources_for_settings
from anton_tui.memory.skills.store import ReadOnlySkillError, Skill, SkillStore, procedural_memory_section
from anton_tui.memory.stores import MemoryStores


def skill_md(folder: Path, name: str, description: str, body: str = "1. Do it.\n") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}")
    return folder


def tree_hash(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()
    }


@pytest.fixture
def places(tmp_path: Path) -> dict[str, Path]:
    home = Path.home()  # the tests' own empty home folder (see conftest)
    assert home != Path("/root") and str(home).startswith(str(tmp_path.parent))
    return {
        "project": tmp_path / "project" / ".agents" / "skills",
        "user": tmp_path / "anton-home" / "skills",
        "agents": home / ".agents" / "skills",
        "claude": home / ".claude" / "skills",
    }


def store_for(places: dict[str, Path], **enabled: bool) -> SkillStore:
    return SkillStore(places["user"], sources=skill_sources(places["project"].parent.parent, enabled=enabled))


def test_precedence_is_project_then_user_then_other_tools_then_built_in(places: dict[str, Path]) -> None:
    for key in ("project", "user", "agents", "claude"):
        skill_md(places[key] / "deploy", "deploy", f"Deploy as the {key} copy says")
    skill_md(places["claude"] / "tidy-notes", "tidy-notes", "Tidy notes the Claude way")
    skill_md(places["agents"] / "tidy-notes", "tidy-notes", "Tidy notes the shared way")
    store = store_for(places)

    listed = {s["label"]: s["source"] for s in store.list_summaries()}
    assert listed["deploy"] == "project" and listed["tidy-notes"] == "agents"
    assert {"explore-data-file", "python-helper-in-scratchpad", "analysis-to-skill"} <= {
        label for label, source in listed.items() if source == "builtin"
    }
    assert store.load("deploy").description == "Deploy as the project copy says"
    assert store.load("deploy").read_only
    clashes = {c.label: (c.winner, c.shadowed) for c in store.clashes()}
    assert clashes == {"deploy": ("project", ("user", "agents", "claude")), "tidy-notes": ("agents", ("claude",))}


def test_a_user_skill_shadows_a_built_in_one_and_deleting_it_brings_the_built_in_back(places: dict[str, Path]) -> None:
    store = store_for(places)
    builtin = store.load("explore_data_file")
    assert builtin.source == "builtin" and builtin.provenance == "builtin"

    mine = store.save(
        Skill(label="explore-data-file", name="My way", description="Explore my way", declarative_md="1.")
    )
    assert mine.source == "user" and (places["user"] / "explore-data-file" / "SKILL.md").is_file()
    loaded = store.load("explore-data-file")
    assert (loaded.source, loaded.name, loaded.provenance) == ("user", "My way", "manual")
    assert [c.shadowed for c in store.clashes()] == [("builtin",)]

    assert store.delete("explore-data-file") is True
    assert store.delete("explore-data-file") is False, "a built-in skill cannot be deleted"
    assert store.load("explore-data-file").source == "builtin"


def test_read_only_skills_are_never_written(places: dict[str, Path]) -> None:
    claude = skill_md(places["claude"] / "review", "review", "Review a pull request")
    store = store_for(places)
    before_builtin, before_claude = tree_hash(BUILTIN_ROOT), tree_hash(claude)

    for label in ("review", "explore-data-file"):
        skill = store.load(label)
        skill.declarative_md = "changed"
        with pytest.raises(ReadOnlySkillError, match="read-only"):
            store.save(skill)
        result = recall(store, label)
        assert result.success and "## Procedure" in result.text
    assert tree_hash(BUILTIN_ROOT) == before_builtin and tree_hash(claude) == before_claude
    assert not places["user"].exists()


def test_each_source_can_be_switched_off_in_the_settings(places: dict[str, Path], monkeypatch) -> None:
    skill_md(places["claude"] / "review", "review", "Review a pull request")
    skill_md(places["project"] / "ship", "ship", "Ship the project")
    settings = load_settings()
    labels = {s["label"] for s in MemoryStores.from_settings(settings).skills.list_summaries()}
    assert {"review", "ship", "explore-data-file"} <= labels

    monkeypatch.setenv("ANTON_SKILLS_CLAUDE", "false")
    monkeypatch.setenv("ANTON_SKILLS_BUILTIN", "false")
    settings = load_settings()
    assert [s.key for s in sources_for_settings(settings)] == ["project", "agents"]
    labels = {s["label"] for s in MemoryStores.from_settings(settings).skills.list_summaries()}
    assert labels == {"ship"}


def test_prompt_section_names_other_tools_and_only_reads_skill_md(places: dict[str, Path]) -> None:
    skill_md(places["claude"] / "review", "review", "Review a pull request")
    legacy = places["agents"] / "old_style"
    legacy.mkdir(parents=True)
    (legacy / "meta.json").write_text('{"name": "Old"}')
    (legacy / "declarative.md").write_text("1.")
    store = store_for(places, builtin=False)

    section = procedural_memory_section(store.list_summaries())
    assert "- `review` — Review a pull request (from ~/.claude/skills)" in section
    assert "old_style" not in section
    assert (legacy / "meta.json").read_text() == '{"name": "Old"}'


def test_a_link_out_of_another_tools_folder_is_not_followed(places: dict[str, Path], tmp_path: Path) -> None:
    secret = skill_md(tmp_path / "elsewhere" / "secret", "secret", "Not to be read")
    places["claude"].mkdir(parents=True)
    (places["claude"] / "secret").symlink_to(secret)
    store = store_for(places, builtin=False)
    assert store.list_summaries() == [] and store.load("secret") is None


def test_renaming_a_read_only_skill_is_refused_and_moves_nothing(places: dict[str, Path]) -> None:
    from anton_tui.runtime.skill_edits import SkillRenameError, rename_skill

    claude = skill_md(places["claude"] / "review", "review", "Review a pull request")
    store = store_for(places)
    before = tree_hash(BUILTIN_ROOT)
    for label in ("review", "explore-data-file"):
        with pytest.raises(SkillRenameError, match="read-only"):
            rename_skill(store, label, "mine")
    assert (claude / "SKILL.md").is_file() and tree_hash(BUILTIN_ROOT) == before
    assert not (places["user"] / "mine").exists()


def test_only_skills_that_load_clash_and_only_folders_sharing_a_name_are_read(
    places: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A clash is a label two sources list: a broken folder of the same name is none. Finding clashes reads only the
    folders whose name another source also has (the Skills tab asks for them with thousands of skills of your own)."""
    from anton_tui.memory.skills import listing

    skill_md(places["project"] / "deploy", "deploy", "Deploy as the project says")
    skill_md(places["claude"] / "deploy", "deploy", "Deploy the Claude way")
    (places["user"] / "deploy").mkdir(parents=True)
    (places["user"] / "deploy" / "meta.json").write_text("{not json")  # broken: not listed, so no clash
    for n in range(30):
        skill_md(places["user"] / f"mine-{n}", f"mine-{n}", "One of mine")
    read: list[str] = []
    real = listing.read_summary

    def noted(folder: str) -> tuple[object, object]:
        read.append(Path(folder).name)
        return real(folder)

    monkeypatch.setattr(listing, "read_summary", noted)
    store = store_for(places)
    assert [(c.label, c.winner, c.shadowed) for c in store.clashes()] == [("deploy", "project", ("claude",))]
    assert sorted(read) == ["deploy", "deploy", "deploy"]
