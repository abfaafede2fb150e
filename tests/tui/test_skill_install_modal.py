"""`/skill install <git URL>` in the full app: the skills of a local git repository (made by the test) are listed in one
modal with their descriptions and problems, the valid ones chosen; a clash with the user's own skill starts unchosen
and, when chosen, is replaced only after asking (the old one kept in a backup)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import SelectionList

from anton_tui.memory.skills.store import Skill, SkillStore
from anton_tui.tui.screens.confirm import ConfirmScreen
from anton_tui.tui.screens.install_skills import InstallSkillsScreen
from tests.test_skill_install import git_repo
from tests.tui.e2e_support import SIZE, build_app, command_replies, home_dir, save_global_env, started, type_in_prompt, wait_for

MINE = "1. My own way of writing release notes\n"


def seed_own() -> SkillStore:
    store = SkillStore(home_dir() / "skills")
    store.save(Skill(label="release-notes", description="Mine", declarative_md=MINE))
    return store


def prompts(screen: InstallSkillsScreen) -> list[str]:
    listing = screen.query_one(SelectionList)
    return [str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]


async def open_modal(pilot, url: str) -> InstallSkillsScreen:
    await started(pilot)
    await type_in_prompt(pilot, f"/skill install {url}")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, InstallSkillsScreen), what="the install list")
    return pilot.app.screen


async def test_the_modal_lists_every_skill_and_installs_the_chosen_ones_replacing_a_clash_on_yes(fake_llm, tmp_path):
    save_global_env(fake_llm)
    store = seed_own()
    url = git_repo(tmp_path / "repo")
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_modal(pilot, url)
        shown = prompts(screen)
        assert [line.split()[0] for line in shown] == ["broken", "lint-python", "release-notes"]
        assert "cannot be installed" in shown[0] and "front matter" in shown[0]
        assert "Lint Python files" in shown[1]
        assert "Write release notes" in shown[2] and "clash: you already have a skill called release-notes" in shown[2]
        listing = screen.query_one(SelectionList)
        assert listing.selected == ["lint-python"], "valid skills start chosen, a clash does not"

        listing.highlighted = 2
        await pilot.press("space")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the replace question")
        assert "Replace your skill release-notes?" in app.screen.question
        await pilot.press("y")
        await wait_for(pilot, lambda: command_replies(app), what="the install report")
        [(_, reply)] = command_replies(app)

    assert "Installed skill lint-python." in reply and "Installed skill release-notes (your old one" in reply
    assert "Skipped: broken" in reply
    repo_skill = tmp_path / "repo" / "skills" / "release-notes" / "SKILL.md"
    assert (store.root / "release-notes" / "SKILL.md").read_bytes() == repo_skill.read_bytes()
    assert store.load("lint-python").code_files == {"run.sh": "ruff check .\n"}
    [backup] = (store.root.parent / "backups" / "skills").glob("release-notes.*")
    assert (backup / "SKILL.md").read_text().endswith(MINE)
    assert not (store.root / "broken").exists()


async def test_leaving_the_clash_out_keeps_the_users_skill_and_escape_installs_nothing(fake_llm, tmp_path):
    save_global_env(fake_llm)
    store = seed_own()
    before = (store.root / "release-notes" / "SKILL.md").read_bytes()
    url = git_repo(tmp_path / "repo")
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_modal(pilot, url)
        screen.query_one(SelectionList).highlighted = 2
        await pilot.press("space", "ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the replace question")
        await pilot.press("n")
        await wait_for(pilot, lambda: command_replies(app), what="the install report")
        assert "Installed skill lint-python." in command_replies(app)[0][1]
        assert "release-notes" not in command_replies(app)[0][1].split("Skipped")[0]

        await type_in_prompt(pilot, f"/skill install {url}")
        await wait_for(pilot, lambda: isinstance(app.screen, InstallSkillsScreen), what="the install list again")
        assert [line.split()[0] for line in prompts(app.screen) if "clash" in line] == ["lint-python", "release-notes"]
        await pilot.press("escape")
        await wait_for(pilot, lambda: len(command_replies(app)) == 2, what="the second report")
        assert "Nothing installed." in command_replies(app)[1][1]
    assert (store.root / "release-notes" / "SKILL.md").read_bytes() == before
    assert sorted(path.name for path in store.root.iterdir()) == ["lint-python", "release-notes"]
    assert not (store.root.parent / "backups").exists()


async def test_a_skill_with_an_odd_name_or_no_description_is_greyed_with_the_reason_and_not_installed(
    fake_llm, tmp_path
):
    save_global_env(fake_llm)
    source = tmp_path / "skills"
    for folder, front in (
        ("bad", "name: Bad Skill!\n"),
        ("quiet", "name: quiet-one\n"),
        ("good", "name: Chart Sales\ndescription: Chart the sales figures\n"),
    ):
        (source / folder).mkdir(parents=True)
        (source / folder / "SKILL.md").write_text(f"---\n{front}---\n1. Do it.\n")
    store = SkillStore(home_dir() / "skills")
    app = build_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_modal(pilot, str(source))
        shown = prompts(screen)
        assert "3 found, 1 can be installed" in str(screen.query_one("#install-summary").render())
        bad = next(line for line in shown if "Bad Skill!" in line)
        assert "cannot be installed" in bad and "`!`" in bad and "bad-skill" in bad
        quiet = next(line for line in shown if line.startswith("quiet"))
        assert "cannot be installed" in quiet and "no description" in quiet
        assert screen.query_one(SelectionList).selected == ["chart-sales"]
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: command_replies(app), what="the install report")
    assert sorted(path.name for path in store.root.iterdir()) == ["chart-sales"]
