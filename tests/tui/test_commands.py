"""Slash commands over real memory, episode and skill files, and the command palette's entries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.app import App
from textual.screen import Screen
from textual.widgets import Static

from anton_tui.agent.skill_draft import DraftedSkill
from anton_tui.config import load_settings
from anton_tui.memory.skills.store import Skill, SkillStore
from anton_tui.tui.commands import COMMANDS, CommandContext, CommandOutput, complete, run
from anton_tui.tui.commands.palette import PALETTE_ACTIONS, AntonCommands, palette_commands
from anton_tui.tui.commands.parse import parse
from anton_tui.tui.screens.skills import SkillsScreen
from anton_tui.memory.stores import MemoryStores
from anton_tui.runtime import Runtime

from ..runtime_sessions import QuietSession

GLOBAL_RULES = """# Rules

## Always
- Use httpx instead of requests <!-- confidence:high source:user ts:2026-01-05 -->
- Call progress() before long API calls <!-- confidence:medium source:llm ts:2026-01-06 -->

## Never
- Print [secret] API keys <!-- confidence:high source:consolidation ts:2026-01-07 -->

## When
"""
GLOBAL_LESSONS = "# Lessons\n- CoinGecko rate-limits at 50 req/min <!-- topic:api-coingecko ts:2026-01-02 -->\n"
PROFILE = "# Profile\n- Name: Ada\n- Works at: Example Corp\n- Prefers: tables\n- Timezone: UTC\n"
PROJECT_RULES = """# Rules

## Always

## Never

## When
- When plotting, save PNGs under out/ <!-- confidence:low source:llm ts:2026-01-08 -->
"""
PROJECT_LESSONS = (
    "# Lessons\n"
    "- pandas read_csv needs encoding='latin-1' for the sales export <!-- topic:pandas ts:2026-01-03 -->\n"
    "- The staging database is read-only <!-- ts:2026-01-04 -->\n"
)
SESSION = "20260110_120000"
LONG_ANSWER = "The export has 12,000 rows; revenue peaked in March at 1.2M and fell 8% in April after the price change."
SKILL_META = {
    "label": "csv_summary",
    "name": "CSV Summary",
    "description": "Summarize a CSV",
    "when_to_use": "the user hands over a CSV file and wants the totals, the trends and a chart of each column",
    "created_at": "2026-11-22T04:23:52.709659+00:00",
    "provenance": "manual",
    "stage_1_present": True,
    "stage_2_present": False,
    "stage_3_present": False,
}


def episode(turn: int, role: str, content: str) -> str:
    ts = f"2026-01-10T12:0{turn}:00+00:00"
    return json.dumps({"ts": ts, "session": SESSION, "turn": turn, "role": role, "content": content, "meta": {}})


@pytest.fixture
def stores(anton_home: Path, project_dir: Path, monkeypatch) -> MemoryStores:
    monkeypatch.setenv("ANTON_SKILLS_BUILTIN", "false")  # these tests are about the user's own skills
    memory = anton_home / "memory"
    memory.mkdir()
    (memory / "rules.md").write_text(GLOBAL_RULES)
    (memory / "lessons.md").write_text(GLOBAL_LESSONS)
    (memory / "profile.md").write_text(PROFILE)
    project_memory = project_dir / ".anton" / "memory"
    project_memory.mkdir(parents=True)
    (project_memory / "rules.md").write_text(PROJECT_RULES)
    (project_memory / "lessons.md").write_text(PROJECT_LESSONS)
    episodes = project_dir / ".anton" / "episodes"
    episodes.mkdir()
    lines = [
        episode(1, "user", "How many rows are in sales.csv?"),
        episode(1, "tool_call", "{'code': 'len(df)'}"),
        episode(1, "assistant", LONG_ANSWER),
        episode(2, "user", "Plot revenue"),
        episode(2, "assistant", "Saved out/revenue.png"),
    ]
    (episodes / f"{SESSION}.jsonl").write_text("\n".join(lines) + "\n")
    skill = anton_home / "skills" / "csv_summary"
    skill.mkdir(parents=True)
    (skill / "meta.json").write_text(json.dumps(SKILL_META, indent=2) + "\n")
    (skill / "declarative.md").write_text("1. Load the file\n2. Describe every column\n")
    (skill / "stats.json").write_text(json.dumps({"total_recalls": 4}, indent=2) + "\n")
    broken = anton_home / "skills" / "half_done"
    broken.mkdir()
    (broken / "meta.json").write_text("{oops")
    (broken / "declarative.md").write_text("x\n")
    return MemoryStores.from_settings(load_settings())


class Recorder:
    """The app's side of the hooks: records calls and answers confirmations from a list."""

    def __init__(self, answers: list[bool] | None = None) -> None:
        self.answers = list(answers or [])
        self.calls: list[tuple] = []

    def hook(self, name: str, result=None):
        async def call(*args):
            self.calls.append((name, *args))
            return result

        return call

    async def confirm(self, question: str) -> bool:
        self.calls.append(("confirm", question))
        return self.answers.pop(0)


class AppSide(Recorder):
    """The app's `CommandUI`: records the screens it is asked to open and answers questions from a list."""

    def __init__(self, answers: list[bool] | None = None) -> None:
        super().__init__(answers)
        self.open_setup = self.hook("open_setup")
        self.open_skills = self.hook("open_skills")
        self.set_theme = self.hook("set_theme")
        self.clear_chat = self.hook("clear_chat")
        self.exit_app = self.hook("exit_app")
        self.open_reflections = self.hook("open_reflections")

    def theme_names(self) -> list[str]:
        return ["anton-dark", "anton-light", "nord"]

    def current_theme_name(self) -> str:
        return "anton-dark"


class Learning:
    """The session's learning loops, as far as `/memory vacuum` sees them."""

    def __init__(self, recorder: Recorder, lines: list[str]) -> None:
        self.recorder, self.lines = recorder, lines

    async def compact_now(self) -> list[str]:
        self.recorder.calls.append(("compact_now",))
        return self.lines


def context(stores: MemoryStores, recorder: Recorder | None = None, *, session=None, **overrides) -> CommandContext:
    ui = recorder if isinstance(recorder, AppSide) else AppSide(recorder.answers if recorder else None)
    if recorder is not None and ui is not recorder:
        ui.calls = recorder.calls
    for name, hook in overrides.items():
        setattr(ui, name, hook)
    return CommandContext(Runtime(load_settings(), session or QuietSession(), stores=stores), ui=ui)


async def text_of(line: str, ctx: CommandContext, width: int = 140) -> str:
    output = await run(line, ctx)
    assert isinstance(output, CommandOutput), line
    return output.plain(width)


# --------------------------------------------------------------------------- parsing and completion


def test_parse_splits_name_and_keeps_free_text() -> None:
    parsed = parse("  /Memory rules edit 3 Use  httpx\teverywhere ")
    assert (parsed.name, parsed.words[:3]) == ("memory", ("rules", "edit", "3"))
    assert parsed.after(3) == "Use  httpx\teverywhere"
    for not_command in ("hello /memory", "/", "// not a command", "/ memory"):
        assert parse(not_command) is None, not_command


async def test_completion_offers_the_next_word(stores: MemoryStores) -> None:
    ctx = context(stores)
    assert await complete("/sk") == ["/skill", "/skills"]
    assert await complete("/skill s") == ["/skill save", "/skill show"]
    assert await complete("/memory rules ") == ["/memory rules delete", "/memory rules edit"]
    assert await complete("/skill show c", ctx) == ["/skill show csv_summary"]
    assert await complete("/theme n", ctx) == ["/theme nord"]
    assert await complete("/skill show c") == []  # labels need the runtime
    assert await complete("hello") == [] and await complete("/zzz") == []
    assert set(await complete("/")) == {"/" + spec.name.split()[0] for spec in COMMANDS}


async def test_help_lists_every_command(stores: MemoryStores) -> None:
    text = await text_of("/help", context(stores))
    for spec in COMMANDS:
        assert spec.usage in text, spec.usage
    assert "/memory rules [edit <n> <text> | delete <n>]" in text


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("/memroy", "Unknown command: /memroy. Did you mean /memory?"),
        ("/skils", "Did you mean /skills?"),
        ("/skill shwo csv_summary", "Unknown command: /skill shwo. Did you mean /skill show?"),
        ("/memory vaccum", "Did you mean /memory vacuum?"),
        ("/xyzzy", "Unknown command: /xyzzy. /help lists the commands."),
        ("/clear now", "/clear takes no arguments"),
    ],
)
async def test_unknown_commands_suggest_the_closest(stores: MemoryStores, line: str, expected: str) -> None:
    output = await run(line, context(stores))
    assert output.level == "error"
    assert expected in output.plain(200)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("/memory vacuum now", "/memory vacuum takes no arguments"),
        ("/setup anthropic", "/setup takes no arguments"),
        ("/skill list all", "/skill list takes no arguments"),
    ],
)
async def test_a_known_command_with_extra_words_never_suggests_itself(
    stores: MemoryStores, line: str, expected: str
) -> None:
    text = (await run(line, context(stores))).plain(200)
    assert expected in text
    assert "Did you mean" not in text and "Unknown command" not in text


async def test_skill_edit_opens_the_named_skill_in_the_skills_screen(stores: MemoryStores) -> None:
    recorder = Recorder()
    assert await run("/skill edit csv_summary", context(stores, recorder)) is None
    assert recorder.calls == [("open_skills", "csv_summary")]
    recorder = Recorder()
    assert await run("/skill edit csv_sumary", context(stores, recorder)) is None  # a typo finds the closest
    assert recorder.calls == [("open_skills", "csv_summary")]
    output = await run("/skill edit no_such_thing_at_all", context(stores, Recorder()))
    assert output.level == "error" and "No skill is labelled no_such_thing_at_all" in output.plain(200)
    assert await complete("/skill edit c", context(stores)) == ["/skill edit csv_summary"]


# --------------------------------------------------------------------------- /memory


async def test_dashboard_shows_counts_per_scope(stores: MemoryStores, project_dir: Path) -> None:
    (project_dir / ".anton" / ".env").write_text("ANTON_MEMORY_MODE=copilot\n")
    text = await text_of("/memory", context(stores))
    assert "Memory mode: copilot" in text
    global_part, project_part = text.split("Project", 1)
    assert "Identity  Name: Ada, Works at: Example Corp, Prefers: tables ..." in global_part
    assert "Rules     3" in global_part and "Lessons   1" in global_part and "Topics    api-coingecko" in global_part
    assert "Identity  (empty)" in project_part
    assert "Rules     1" in project_part and "Lessons   2" in project_part and "Topics    pandas" in project_part
    assert "Total entries: 7" in text
    assert "Compaction not needed" in text and "more than 20 entries" in text.replace("\n", " ")
    assert "Episodic memory: ON · 1 session" in text


async def test_dashboard_shows_the_effective_mode_and_compaction_due(stores: MemoryStores, project_dir: Path) -> None:
    (project_dir / ".anton" / ".env").write_text(
        "ANTON_MEMORY_MODE=copilot\nANTON_MEMORY_ENABLED=false\nANTON_EPISODIC_MEMORY=false\n"
    )
    extra = "".join(f"- Lesson number {i} <!-- ts:2026-01-09 -->\n" for i in range(20))
    with open(project_dir / ".anton" / "memory" / "lessons.md", "a") as handle:
        handle.write(extra)
    text = await text_of("/memory", context(stores))
    assert "Memory mode: off" in text and "mode setting says copilot" in text
    assert "Compaction due: project has 23 entries (more than 20 in a scope)" in text
    assert "/memory vacuum" in text
    assert "Episodic memory: OFF" in text


async def test_rules_are_numbered_globally_with_global_first(stores: MemoryStores) -> None:
    text = await text_of("/memory rules", context(stores))
    lines = [line.rstrip() for line in text.splitlines()]
    assert "Rules — 4" in lines[0]
    numbered = [line.strip() for line in lines if line.strip()[:2].rstrip(".").isdigit()]
    assert numbered == [
        "1.  Use httpx instead of requests",
        "2.  Call progress() before long API calls",
        "3.  Print [secret] API keys",
        "4.  When plotting, save PNGs under out/",
    ]
    assert "confidence:high  source:user  updated:2026-01-05" in text
    after_two = lines[lines.index("  2.  Call progress() before long API calls") + 1].strip()
    assert after_two == "updated:2026-01-06"  # medium and llm are the defaults, so they are not shown
    order = [text.index(word) for word in ("Global", "Always", "Never", "Project", "When")]
    assert order == sorted(order)


async def test_edit_and_delete_by_number_change_the_right_file(
    stores: MemoryStores, anton_home: Path, project_dir: Path
) -> None:
    recorder = Recorder(answers=[False, True])
    ctx = context(stores, recorder)
    project_rules = project_dir / ".anton" / "memory" / "rules.md"
    global_rules = anton_home / "memory" / "rules.md"

    output = await run("/memory rules edit 4 When plotting, save SVGs under out/", ctx)
    assert output.level == "success"
    assert "- When plotting, save SVGs under out/ <!-- confidence:low source:llm ts:" in project_rules.read_text()
    assert global_rules.read_text() == GLOBAL_RULES

    output = await run("/memory rules delete 1", ctx)
    assert output.level == "info" and global_rules.read_text() == GLOBAL_RULES
    assert recorder.calls[-1] == ("confirm", "Delete rule 1 (global): Use httpx instead of requests?")
    output = await run("/memory rules delete 1", ctx)
    assert output.level == "success"
    assert "httpx" not in global_rules.read_text()
    assert global_rules.read_text().count("\n- ") == 2

    output = await run("/memory rules delete 9", ctx)
    assert output.level == "error" and "pick a number from 1 to 3" in output.plain()
    output = await run("/memory rules edit two x", ctx)
    assert output.level == "error"


async def test_edit_without_text_asks_for_it(stores: MemoryStores, anton_home: Path) -> None:
    output = await run("/memory identity edit 2", context(stores))
    assert output.level == "error" and "Type the new text" in output.plain()

    asked = []

    async def ask_text(question: str, current: str) -> str:
        asked.append((question, current))
        return "Works at: Acme"

    output = await run("/memory identity edit 2", context(stores, ask_text=ask_text))
    assert asked == [("Edit identity fact 2", "Works at: Example Corp")]
    assert output.level == "success"
    assert (anton_home / "memory" / "profile.md").read_text() == PROFILE.replace("Example Corp", "Acme")


async def test_lessons_and_identity_lists_number_both_scopes(stores: MemoryStores, project_dir: Path) -> None:
    ctx = context(stores, Recorder(answers=[True]))
    text = await text_of("/memory lessons", ctx)
    assert "1.  CoinGecko rate-limits at 50 req/min" in text and "topic:api-coingecko" in text
    assert "3.  The staging database is read-only" in text
    output = await run("/memory lessons delete 2", ctx)
    assert output.level == "success"
    remaining = (project_dir / ".anton" / "memory" / "lessons.md").read_text()
    assert "read_csv" not in remaining and "staging database" in remaining
    identity = await text_of("/memory identity", ctx)
    assert "4.  Timezone: UTC" in identity


async def test_episodes_table_and_delete(stores: MemoryStores, project_dir: Path) -> None:
    ctx = context(stores, Recorder(answers=[True]))
    text = await text_of("/memory episodes", ctx, width=160)
    assert f"Episodes — session {SESSION}" in text
    assert "How many rows are in sales.csv?" in text
    assert LONG_ANSWER[:60] + "..." in text and LONG_ANSWER[:61] not in text
    assert "Plot revenue" in text and "Saved out/revenue.png" in text
    output = await run("/memory episodes delete 1", ctx)
    assert output.level == "success" and "3 lines" in output.plain()
    remaining = (project_dir / ".anton" / "episodes" / f"{SESSION}.jsonl").read_text()
    assert "sales.csv" not in remaining and "Plot revenue" in remaining
    output = await run("/memory episodes delete 7", ctx)
    assert output.level == "error" and "turns: 2" in output.plain()


RULE = "a rules or lessons file is compacted once it holds 8 entries or more"


async def test_vacuum_with_nothing_big_enough_says_so_without_asking(stores: MemoryStores) -> None:
    recorder = Recorder(answers=[])
    session = QuietSession()
    session.learning = Learning(recorder, ["should not run"])
    output = await run("/memory vacuum", context(stores, recorder, session=session))
    assert output.level == "info"
    text = output.plain(300)
    assert "Nothing to compact" in text and RULE in text
    assert "largest is global rules.md with 3" in text
    assert recorder.calls == [], "no question, no compaction"
    dashboard = await text_of("/memory", context(stores), width=300)
    assert RULE in dashboard and "more than 20" in dashboard
    assert RULE in await text_of("/memory help", context(stores), width=300)


async def test_vacuum_asks_then_compacts_the_files_big_enough(stores: MemoryStores, anton_home: Path) -> None:
    lessons = "".join(f"- Lesson number {n} about the API <!-- ts:2026-01-0{n % 9 + 1} -->\n" for n in range(9))
    (anton_home / "memory" / "lessons.md").write_text("# Lessons\n" + lessons)
    output = await run("/memory vacuum", context(stores))
    assert output.level == "warning"  # no model in this session
    recorder = Recorder(answers=[False, True])
    session = QuietSession()
    session.learning = Learning(recorder, ["global: kept 3 of 4", "project: skipped"])
    ctx = context(stores, recorder, session=session)
    assert (await run("/memory vacuum", ctx)).level == "info"
    assert ("compact_now",) not in recorder.calls
    output = await run("/memory vacuum", ctx)
    assert ("compact_now",) in recorder.calls
    assert output.plain() == "global: kept 3 of 4\nproject: skipped\n"
    assert "global lessons.md (9 entries)" in recorder.calls[0][1]
    assert "rules.md" not in recorder.calls[0][1]


async def test_memory_help_shows_brackets(stores: MemoryStores) -> None:
    text = await text_of("/memory help", context(stores))
    assert "/memory rules|lessons|identity edit <n> <text>" in text
    assert "/memory episodes [delete <turn>]" in text


# --------------------------------------------------------------------------- /skill


async def test_skill_list_table(stores: MemoryStores) -> None:
    for line in ("/skill list", "/skills", "/skill", "/skills list"):
        text = await text_of(line, context(stores), width=160)
        assert "Procedural memory — saved skills" in text, line
        header = next(row for row in text.splitlines() if "Skill (label" in row)
        columns = [cell.strip() for cell in header.strip("│┃ ").split("┃")]
        assert columns == ["Skill (label, name, when to use)", "Recalls", "Stages"]
        assert SKILL_META["when_to_use"][:57] + "..." in text
        row = next(row for row in text.splitlines() if "csv_summary" in row)
        assert [cell.strip() for cell in row.strip("│ ").split("│")] == ["csv_summary", "4", "1"]
        assert "Broken: half_done — meta.json: invalid JSON" in text


async def test_a_long_skill_list_shows_its_first_rows_and_says_how_many_more(
    stores: MemoryStores, anton_home: Path
) -> None:
    for n in range(150):
        folder = anton_home / "skills" / f"step_{n:03}"
        folder.mkdir()
        (folder / "SKILL.md").write_text(f"---\nname: Step {n}\ndescription: does step {n}\n---\nDo it.\n")
    text = await text_of("/skill list", context(stores), width=160)
    assert "csv_summary" in text and "step_098" in text
    assert "step_099" not in text, "the table stops at its first 100 skills"
    assert "…and 51 more (151 skills in all)" in " ".join(text.split())
    assert "Broken: half_done" in text


async def test_skill_show_tolerates_typos(stores: MemoryStores) -> None:
    output = await run("/skill show csv_sumary", context(stores))
    assert output.markdown and output.level == "warning"
    assert "showing the closest one, csv\\_summary" in output.content
    assert "1. Load the file\n2. Describe every column" in output.content
    assert "**Recalls:** 4" in output.content
    output = await run("/skill show totally_else", context(stores))
    assert output.level == "error" and "Saved skills: csv_summary." in output.plain()
    output = await run("/skill show half_done", context(stores))
    assert output.level == "error" and "broken" in output.plain()


async def test_skill_remove_asks_and_deletes(stores: MemoryStores, anton_home: Path) -> None:
    recorder = Recorder(answers=[False, True])
    ctx = context(stores, recorder)
    output = await run("/skill remove csv_sumary", ctx)
    assert output.level == "error" and "Did you mean csv_summary?" in output.plain()
    assert (await run("/skill remove csv_summary", ctx)).level == "info"
    assert (anton_home / "skills" / "csv_summary" / "declarative.md").exists()
    assert (await run("/skill remove csv_summary", ctx)).level == "success"
    assert not (anton_home / "skills" / "csv_summary").exists()
    assert SkillStore(anton_home / "skills").problem("half_done") is not None


async def test_skill_save_hands_the_hint_to_the_runtime(stores: MemoryStores) -> None:
    assert (await run("/skill save", context(stores))).level == "warning"
    hints = []

    decisions = [("applied", "applied: approved by the AI reviewer: clear"),
                 ("held", "held for a person: ANTON_REVIEW_LEVEL is human"),
                 ("rejected", "rejected (injection scan): reads like an injected instruction")]  # fmt: skip

    class Drafting(Runtime):
        can_draft_skills = True

        async def draft_skill(self, hint: str) -> DraftedSkill:
            hints.append(hint)
            skill = Skill(
                label="csv_totals", name="CSV totals", when_to_use="Summing a CSV", path=Path("/s/csv_totals")
            )
            status, why = decisions.pop(0)
            return DraftedSkill(skill, status, why)

    ctx = CommandContext(Drafting(load_settings(), QuietSession(), stores=stores), ui=AppSide())
    output = await run("/skill save  csv   totals ", ctx)
    assert hints == ["csv   totals"]
    assert output.level == "success"
    assert output.plain() == "Saved skill csv_totals → /s/csv_totals\nName: CSV totals\nWhen to use: Summing a CSV\n"
    held = await run("/skill save", ctx)  # the review holds it for the user: nothing saved yet, and said so
    assert held.level == "warning"
    assert held.plain() == "Skill csv_totals waits for your review: held for a person: ANTON_REVIEW_LEVEL is human\n"
    rejected = await run("/skill save", ctx)
    assert rejected.level == "error" and "was not saved: rejected (injection scan)" in rejected.plain()


# --------------------------------------------------------------------------- app hooks


@pytest.mark.parametrize(
    ("line", "hook"),
    [
        ("/setup", "open_setup"),
        ("/skill edit", "open_skills"),
        ("/clear", "clear_chat"),
        ("/exit", "exit_app"),
        ("/reflections", "open_reflections"),
    ],
)
async def test_screen_commands_call_the_apps_hooks(stores: MemoryStores, line: str, hook: str) -> None:
    recorder = Recorder()
    assert await run(line, context(stores, recorder)) is None
    assert recorder.calls == [(hook,)]
    output = await run(line, context(stores, **{hook: None}))
    assert output.level == "error" and "not available" in output.plain()


async def test_theme_lists_switches_and_suggests(stores: MemoryStores) -> None:
    recorder = Recorder()
    ctx = context(stores, recorder)
    listing = await text_of("/theme", ctx)
    assert "* anton-dark" in listing and "  nord" in listing
    assert (await run("/theme nord", ctx)).level == "success"
    assert recorder.calls == [("set_theme", "nord")]
    output = await run("/theme nrod", ctx)
    assert output.level == "error" and "Did you mean nord?" in output.plain()
    assert len(recorder.calls) == 1


# --------------------------------------------------------------------------- command palette


class PaletteHost(App[None]):
    def __init__(self, stores: MemoryStores) -> None:
        super().__init__()
        self.runtime = Runtime(load_settings(), QuietSession(), stores=stores)
        self.ran: list[str] = []

    def action_slash_command(self, line: str) -> None:
        self.ran.append(line)


class PaneScreen(Screen):
    def compose(self):
        yield Static("main")

    def action_toggle_scratchpad(self) -> None:
        self.app.ran.append("toggle_scratchpad")


async def test_palette_offers_commands_that_apply_and_runs_them(stores: MemoryStores) -> None:
    app = PaletteHost(stores)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.push_screen(PaneScreen())
        provider = AntonCommands(app.screen)
        discovered = [hit.text async for hit in provider.discover()]
        assert "/memory" in discovered and "/memory rules" in discovered and "/skill save" in discovered
        assert "Scratchpad pane" in discovered
        assert "Memory inspector pane" not in discovered  # this screen has no inspector
        assert not any(title.startswith(("Show skill", "Theme:")) for title in discovered)
        assert not any("Delete skill" in title for title in discovered)

        hits = [hit async for hit in provider.search("remove csv")]
        assert [hit.text for hit in hits][0] == "Remove skill csv_summary"
        await hits[0].command()
        theme_hits = [hit.text async for hit in provider.search("theme")]
        assert any(title.startswith("Theme: ") for title in theme_hits)
        [toggle] = [hit async for hit in provider.discover() if hit.text == "Scratchpad pane"]
        assert toggle.help.startswith("Show or hide the scratchpad")
        await toggle.command()
        await pilot.pause()
    assert app.ran == ["/skill remove csv_summary", "toggle_scratchpad"]


async def test_help_keeps_descriptions_readable_in_a_narrow_chat(stores: MemoryStores) -> None:
    text = await text_of("/help", context(stores), width=76)
    for spec in COMMANDS:
        first_words = " ".join(spec.help.split()[:3])
        assert first_words in text, f"{spec.name}: {first_words!r} is broken across lines"


def test_clear_is_described_one_way() -> None:
    [clear] = [spec for spec in COMMANDS if spec.name == "clear"]
    assert clear.help == "Start a new conversation (memory, skills and past episodes stay)"


async def test_the_palette_has_no_second_quit_theme_or_maximise(stores: MemoryStores) -> None:
    from anton_tui.tui.app import AntonApp

    app = AntonApp(Runtime(load_settings(), QuietSession(), stores=stores), inspector=False)
    async with app.run_test(size=(100, 30)):
        titles = [command.title for command in app.get_system_commands(app.screen)]
    assert "Quit" not in titles and "Theme" not in titles and "Maximize" not in titles
    assert "Keys" in titles or "Screenshot" in titles, "the other built-ins stay"


async def test_palette_offers_rename_and_delete_for_the_selected_skill(stores: MemoryStores) -> None:
    app = PaletteHost(stores)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = SkillsScreen(app.runtime, cursor_blink=False)
        await app.push_screen(screen)
        await app.workers.wait_for_complete()
        await pilot.pause()
        labels = await app.runtime.skills.labels()
        titles = [command.title for command in palette_commands(app, screen, labels)]
        assert f"Delete skill {screen.selected_label}" in titles and "New skill" in titles
        assert "Save the open skill file" not in titles
        actions = {command.action for command in palette_commands(app, screen, labels)}
    listed = {name.split("(")[0] for name in PALETTE_ACTIONS}
    assert {action.split("(")[0] for action in actions} <= listed


class PaletteApp(PaletteHost):
    COMMANDS = PaletteHost.COMMANDS | {AntonCommands}


async def test_choosing_an_entry_in_the_open_palette_runs_its_slash_command(stores: MemoryStores) -> None:
    app = PaletteApp(stores)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"/memory lessons")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
    assert app.ran == ["/memory lessons"]


async def test_skill_install_asks_per_skill_and_installs_the_chosen_one(stores: MemoryStores, tmp_path: Path) -> None:
    import subprocess

    repo = tmp_path / "skill-repo"
    for name in ("lint-python", "release-notes"):
        (repo / name).mkdir(parents=True)
        (repo / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: The {name} skill\n---\n1. Go.\n")
    for args in (
        ["init", "-q"],
        ["add", "."],
        ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "x"],
    ):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    recorder = Recorder([False, True])
    text = await text_of(f"/skill install {repo.as_uri()}", context(stores, recorder))
    assert "Installed skill release-notes." in text and "lint-python" not in text
    asked = [call for call in recorder.calls if call[0] == "confirm"]
    assert [("lint-python" in q[1], "release-notes" in q[1]) for q in asked] == [(True, False), (False, True)]
    assert stores.skills.load("release-notes").source == "user" and stores.skills.load_user("lint-python") is None

    before = sorted(p.name for p in stores.skills.root.iterdir())
    output = await run("/skill install file:///no/such/repo.git", context(stores))
    assert output.level == "error" and "Could not clone" in output.plain() and "Nothing was installed" in output.plain()
    assert sorted(p.name for p in stores.skills.root.iterdir()) == before


async def test_a_user_invocable_skill_is_a_slash_command_that_starts_a_recalling_turn(stores: MemoryStores) -> None:
    folder = stores.skills.root / "weekly-report"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        "---\nname: weekly-report\ndescription: Weekly report\nuser-invocable: true\n---\n1. Collect.\n"
    )
    sent: list[str] = []
    ctx = context(stores, send_prompt=sent.append)
    assert await run("/weekly-report for the sales team", ctx) is None
    assert len(sent) == 1 and "recall_skill with the label `weekly-report`" in sent[0]
    assert sent[0].endswith("Arguments: for the sales team")

    output = await run("/csv_summary now", ctx)  # a skill that is not user-invocable is no command
    assert output.level == "error" and "Unknown command" in output.plain() and len(sent) == 1


async def test_memory_reset_clears_a_scope_and_undo_brings_it_back(
    stores: MemoryStores, anton_home: Path, project_dir: Path
) -> None:
    from anton_tui.memory.history import ops as history_ops

    rules = (anton_home / "memory" / "rules.md").read_bytes()
    ctx = context(stores, Recorder(answers=[False, True, True]))
    assert (await run("/memory reset global", ctx)).plain().strip() == "Canceled."
    assert (anton_home / "memory" / "rules.md").read_bytes() == rules
    output = await run("/memory reset global", ctx)
    assert output.level == "success" and "Reset finished: global" in output.plain()
    assert not (anton_home / "memory" / "rules.md").exists()
    change = history_ops.log(stores)[0]
    assert change.producer == "reset" and history_ops.undo(stores, change.short).done
    assert (anton_home / "memory" / "rules.md").read_bytes() == rules

    logs = sorted(p.name for p in (project_dir / ".anton" / "episodes").glob("*.jsonl"))
    output = await run("/memory reset episodic", ctx)
    assert output.level == "success"
    assert not list((project_dir / ".anton" / "episodes").glob("*.jsonl"))
    reset = history_ops.log(stores)[0]
    assert "archived" in reset.summary and history_ops.undo(stores, reset.short).done
    assert sorted(p.name for p in (project_dir / ".anton" / "episodes").glob("*.jsonl")) == logs


async def test_skill_load_preloads_a_skill_for_the_conversation(stores: MemoryStores, fake_llm) -> None:
    from tests.session_helpers import make_session

    session = make_session(fake_llm)
    output = await run("/skill load csv_sumary", context(stores, session=session))
    assert output.level == "success" and "Loaded skill csv_summary for this conversation" in output.plain()
    [message] = session.turn_memory.front()
    assert "1. Load the file" in message["content"], "its procedure goes at the front of every request"
    output = await run("/skill load totally_else", context(stores, session=session))
    assert output.level == "error" and "Not loaded" in output.plain()
    assert (await run("/skill load", context(stores, session=session))).level == "error"
    assert (await run("/skill load csv_summary", context(stores))).level == "error", "a session that cannot"
    await session.close()
