"""A broken skill in another tool's folder: the skills screen shows it under that source, marked broken with the
reason, its files open read-only; the Skills tab names it in its warning; the source's other skills still list; and
the file is left byte-identical."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from anton_tui.memory.skills.sources import skill_sources
from anton_tui.memory.skills.store import Skill, SkillStore
from anton_tui.tui.screens.skills import NodeRef
from anton_tui.tui.widgets.inspector.base import ProblemBanner

from .inspector_fixtures import InspectorHost, seeded_stores, table_rows
from .inspector_fixtures import settle as settle_inspector
from .test_skills_screen import SIZE, SkillsHost, settle

BAD_SKILL_MD = b"---\nname: [unclosed\ndescription: half typed\n---\n1. Never mind\n"


def seed_claude(home: Path) -> Path:
    claude = home / ".claude" / "skills"
    (claude / "lint").mkdir(parents=True)
    (claude / "lint" / "SKILL.md").write_text("---\nname: lint\ndescription: Run the linter\n---\n1. Lint\n")
    (claude / "half-typed").mkdir()
    (claude / "half-typed" / "SKILL.md").write_bytes(BAD_SKILL_MD)
    return claude / "half-typed" / "SKILL.md"


async def test_the_skills_screen_shows_it_under_its_source_and_opens_it_read_only(tmp_path: Path) -> None:
    bad = seed_claude(tmp_path / "home")
    sources = skill_sources(tmp_path / "project", home=tmp_path / "home", enabled={"builtin": False})
    store = SkillStore(tmp_path / "skills", sources=sources)
    store.save(Skill(label="half-typed", description="My own, healthy", declarative_md="1. Mine\n"))
    app = SkillsHost(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await settle(pilot)
        [group] = [node for node in screen.skill_tree.root.children if node.data is None]
        assert str(group.label).startswith("~/.claude/skills")
        children = {str(child.label).split("  ")[0]: child for child in group.children}
        assert set(children) == {"lint", "half-typed"}
        broken = children["half-typed"]
        assert "broken" in str(broken.label) and broken.data == NodeRef("half-typed", None, "broken", "claude")
        broken.expand()
        await settle(pilot)
        assert any("YAML" in str(child.label) for child in broken.children)
        assert "1 broken" in str(screen.query_one("#skills-title").render())

        screen.skill_tree.select_node(broken)
        await settle(pilot)
        assert screen.open_ref == NodeRef("half-typed", "SKILL.md", "raw", "claude")
        assert screen.editor.read_only and screen.editor.text == BAD_SKILL_MD.decode()
        info = str(screen.query_one("#skills-file-info").render())
        assert "YAML" in info and "~/.claude/skills" in info
        screen.skill_tree.focus()
        await pilot.press("delete")  # it is not one of the user's skills: nothing is deleted, not even theirs
        await settle(pilot)
        assert app.screen is screen, "no deletion is offered for another tool's skill"
    assert bad.read_bytes() == BAD_SKILL_MD
    assert store.load_user("half-typed").declarative_md == "1. Mine\n"


async def test_the_skills_tab_warns_about_it_and_lists_the_sources_other_skills(tmp_path: Path) -> None:
    stores = seeded_stores(tmp_path, skills=False, episodes=False)
    bad = seed_claude(tmp_path / "home")
    sources = skill_sources(tmp_path / "project", home=tmp_path / "home", enabled={"builtin": False})
    stores = replace(stores, skills=SkillStore(stores.paths.skills, sources=sources))
    app = InspectorHost(stores)
    async with app.run_test(size=SIZE) as pilot:
        await settle_inspector(pilot)
        tab = app.pane.tab("skills")
        banner = str(tab.query_one(ProblemBanner).render())
        assert "skill half-typed in ~/.claude/skills" in banner and "YAML" in banner and "left as it is" in banner
        assert [row[0] for row in table_rows(tab.table)] == ["lint"]
    assert bad.read_bytes() == BAD_SKILL_MD
