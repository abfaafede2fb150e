"""The `/skill` commands: list the saved skills, show one (typo-tolerant), remove one, and save a new one.

Drafting a skill from the conversation needs the model, so `/skill save` hands the hint to the Runtime; everything
else reads and changes `~/.anton/skills` through the Runtime's skill services, off the event loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from rich.console import Group
from rich.table import Table
from rich.text import Text

from anton_tui.memory.skills.model import Skill
from anton_tui.memory.skills.sources import SOURCE_TITLES
from anton_tui.runtime import SkillListing, SkillLookup
from anton_tui.tui.commands.context import CommandContext, CommandOutput, error, info, success, warning
from anton_tui.tui.commands.parse import ParsedCommand

if TYPE_CHECKING:
    from anton_tui.memory.skills.install import Offer

CELL = 60


def _cell(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= CELL else flat[: CELL - 3] + "..."


def _stages(skill: Skill) -> str:
    return ",".join(str(stage) for stage in skill.stages_present) or "-"


CHAT_ROWS = 100
"""Skills the chat's table shows at most: a table of thousands would take seconds to draw, with keys waiting."""


def skill_table(listing: SkillListing) -> CommandOutput:
    skills, broken = listing.skills, listing.broken
    if not skills and not broken:
        return info("No skills saved yet. After a task went well, /skill save [hint] turns it into one.")
    parts: list[Table | Text] = []
    if skills:
        table = Table(title="Procedural memory — saved skills", title_justify="left")
        # the label is what /skill show|edit|remove take: it has the first line of its row to itself (folded, never
        # cut, if the chat is narrower than it), and the skill's name and when to use it wrap below it
        table.add_column("Skill (label, name, when to use)", overflow="fold")
        table.add_column("Recalls", justify="right")
        table.add_column("Stages")
        for skill in skills[:CHAT_ROWS]:
            about = Text.assemble((skill.label, "bold"), "\n", _cell(skill.name))
            if skill.cue:
                about.append(f" — {_cell(skill.cue)}", style="dim")
            table.add_row(about, Text(str(skill.stats.total_recalls)), Text(_stages(skill)))
        parts.append(table)
        if len(skills) > CHAT_ROWS:
            parts.append(Text(
                f"…and {len(skills) - CHAT_ROWS:,} more ({len(skills):,} skills in all): the inspector's Skills tab "
                "lists them all, /skill show <label> shows one and /skill edit opens the skills screen.",
                style="dim",
            ))  # fmt: skip
    for problem in broken:
        where = "" if problem.source == "user" else f" in {SOURCE_TITLES.get(problem.source, problem.source)}"
        parts.append(
            Text(f"Broken: {problem.label}{where} — {problem.reason} (files left as they are)", style="yellow")
        )
    return CommandOutput(Group(*parts), "warning" if broken and not skills else "info")


async def list_skills(ctx: CommandContext, args: ParsedCommand) -> CommandOutput:
    if args.words and args.words[0].lower() not in ("list",):
        return error(
            f"Unknown /skill subcommand {args.words[0]!r}: use save, list, show, load, remove, edit or install."
        )
    return skill_table(await ctx.runtime.skills.listing())


def _resolved(found: SkillLookup) -> tuple[Skill | None, str]:
    """(skill, note): the exact skill, else the closest one with a note saying so, else None with the reason."""
    requested = found.requested
    if found.invalid is not None:
        return None, f"{found.invalid}."
    if found.problem is not None:
        problem = found.problem
        return None, f"Skill {problem.label} is broken: {problem.reason}. Its files were left as they are."
    if found.skill is not None:
        note = f"No skill is labelled {requested}; showing the closest one, {found.closest}." if found.closest else ""
        return found.skill, note
    available = f" Saved skills: {', '.join(found.labels)}." if found.labels else " No skills are saved yet."
    return None, f"No skill is labelled {requested}.{available}"


def _markdown_text(text: str) -> str:
    """Escape characters Markdown would treat as formatting in a one-line field."""
    return "".join("\\" + ch if ch in "\\`*_[]<>#|" else ch for ch in text)


def skill_markdown(skill: Skill) -> str:
    stats = skill.stats
    lines = [f"## {_markdown_text(skill.name or skill.label)}", "", f"- **Label:** `{skill.label}`"]
    if skill.description:
        lines.append(f"- **Description:** {_markdown_text(skill.description)}")
    if skill.when_to_use:
        lines.append(f"- **When to use:** {_markdown_text(skill.when_to_use)}")
    if skill.read_only:
        lines.append(f"- **Source:** {SOURCE_TITLES.get(skill.source, skill.source)} (read-only)")
    if skill.allowed_tools is not None:
        lines.append(f"- **Allowed tools:** {_markdown_text(', '.join(skill.allowed_tools) or 'none')}")
    if skill.user_invocable:
        lines.append(f"- **Slash command:** `/{skill.label} [arguments]`")
    lines.append(f"- **Recalls:** {stats.total_recalls}")
    for stage in (1, 2, 3):
        counters = stats.stage(stage)
        present = "present" if stage in skill.stages_present else "not yet"
        lines.append(f"- **Stage {stage}:** {present}, recommended {counters.recommended}, used {counters.used}")
    lines += ["", "### Procedure", "", skill.declarative_md.strip()]
    return "\n".join(lines)


async def show_skill(ctx: CommandContext, args: ParsedCommand) -> CommandOutput:
    requested = args.rest.strip()
    if not requested:
        return error("Which skill? /skill show <label> (see /skill list).")
    skill, note = _resolved(await ctx.runtime.skills.lookup(requested))
    if skill is None:
        return error(note)
    body = skill_markdown(skill)
    if note:
        body = f"> {_markdown_text(note)}\n\n{body}"
    return CommandOutput(body, "warning" if note else "info", markdown=True)


async def load_skill(ctx: CommandContext, args: ParsedCommand) -> CommandOutput:
    """`/skill load <label>`: the skill goes with every request of this conversation, from the next one on."""
    requested = args.rest.strip()
    if not requested:
        return error("Which skill? /skill load <label> (see /skill list).")
    try:
        label = await ctx.runtime.preload_skill(requested)
    except ValueError as exc:
        return error(f"Not loaded: {exc}")
    return success(f"Loaded skill {label} for this conversation: every request carries it from the next turn on.")


async def remove_skill(ctx: CommandContext, args: ParsedCommand) -> CommandOutput:
    requested = args.rest.strip()
    if not requested:
        return error("Which skill? /skill remove <label> (see /skill list).")
    found = await ctx.runtime.skills.lookup(requested)
    if found.invalid is not None:
        return error(f"{found.invalid}.")
    if not found.exact:
        hint = f" Did you mean {found.closest}?" if found.closest else ""
        return error(f"No skill is labelled {requested}.{hint}")
    if not await ctx.ask(f"Delete the skill {requested} and all its files? This cannot be undone."):
        return info("Nothing deleted.")
    try:
        deleted = await ctx.runtime.skill_edits.delete(requested)
    except OSError as exc:
        return error(f"Could not delete {requested}: {exc}")
    return success(f"Deleted skill {requested}.") if deleted else warning(f"Skill {requested} was already gone.")


def skill_prompt(label: str, arguments: str) -> str:
    """The message a skill's slash command sends: recall the skill, then follow it with the arguments."""
    text = f"Use the skill `{label}`: call recall_skill with the label `{label}` first, then follow its procedure."
    return f"{text}\n\nArguments: {arguments}" if arguments else text


async def invoke_skill(ctx: CommandContext, parsed: ParsedCommand) -> CommandOutput | Literal[False] | None:
    """`/label [args]` for a skill marked `user-invocable: true`: starts a turn that recalls it with the arguments.
    False when no such skill exists (the command is then unknown)."""
    try:
        skill = await ctx.runtime.skills.load(parsed.name)
    except ValueError:
        return False
    if skill is None or not skill.user_invocable:
        return False
    send = ctx.hook("send_prompt")
    if send is None:
        return error(f"/{skill.label} starts a turn, which this screen cannot do.")
    await ctx.call(send, skill_prompt(skill.label, parsed.rest.strip()))
    return None


async def install_skill(ctx: CommandContext, args: ParsedCommand) -> CommandOutput:
    source = args.rest.strip()
    if not source:
        return error("Install from where? /skill install <folder or git URL>.")
    pick = ctx.hook("choose_skills")

    async def choose(offers: list[Offer]) -> list[str] | None:
        if pick is not None:  # one list of every skill found, in a modal
            return await ctx.call(pick, source, offers)
        chosen = []  # no modal here: a yes/no question per installable skill
        for offer in (offer for offer in offers if offer.installable):
            what = f" — {offer.description}" if offer.description else ""
            clash = f" ({offer.clash}; yours is moved to a backup)" if offer.replaces else ""
            if await ctx.ask(f"Install the skill {offer.label}{what}{clash}?"):
                chosen.append(offer.label)
        return chosen

    try:
        report = await ctx.runtime.skill_install.install(source, choose)
    except (ValueError, OSError) as exc:
        return error(str(exc))
    lines = [
        f"Installed skill {label}" + (" (your old one is in the backups folder)." if label in report.replaced else ".")
        for label in report.installed
    ] or ["Nothing installed."]
    lines += [f"Skipped: {problem}" for problem in report.problems]
    if not report.installed:
        return warning("\n".join(lines))
    return success("\n".join(lines))


async def save_skill(ctx: CommandContext, args: ParsedCommand) -> CommandOutput:
    if not ctx.runtime.can_draft_skills:
        return warning("Saving a skill needs the model and is not available in this session.")
    from anton_tui.llm.errors import LLMError

    try:
        drafted = await ctx.runtime.draft_skill(args.rest.strip())
    except (LLMError, ValueError) as exc:
        return error(f"No skill saved: {exc}")
    skill = drafted.skill
    if drafted.status == "held":
        return warning(f"Skill {skill.label} waits for your review: {drafted.why}")
    if drafted.status != "applied":
        return error(f"Skill {skill.label} was not saved: {drafted.why}")
    lines = [f"Saved skill {skill.label} → {skill.path}", f"Name: {skill.name}"]
    if skill.when_to_use:
        lines.append(f"When to use: {skill.when_to_use}")
    return success("\n".join(lines))
