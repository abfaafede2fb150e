"""The `/memory` commands: the dashboard, numbered lists of rules, lessons and identity facts with edit and delete by
number, the current session's episodes, and compaction on demand.

Entries are numbered across both scopes, global first, in the order the lists show them, so the number a user
reads in `/memory rules` is the number `/memory rules delete <n>` acts on. Everything shown goes through Rich
`Text` objects, never markup, so a kind like `[always]` is displayed as typed.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from rich.console import Group
from rich.table import Table
from rich.text import Text

from anton_tui.memory.engrams.engram import Engram, MemoryFileError
from anton_tui.runtime import EntryListing, MemoryOverview, ScopeOverview, SessionTurns
from anton_tui.tui.commands.context import CommandContext, CommandOutput, as_output, error, info, success, warning
from anton_tui.tui.commands.parse import ParsedCommand

MODE_MEANING = {
    "autopilot": "saves what it learns without asking",
    "copilot": "saves what it is sure of, asks about the rest",
    "off": "reads memory but saves nothing new",
}
LIST_FILES = {"rules": "rules", "lessons": "lessons", "identity": "profile"}
SINGULAR = {"rules": "rule", "lessons": "lesson", "identity": "identity fact"}
EPISODE_CELL = 63
IDENTITY_PREVIEW = 3


def short_path(path: Path) -> str:
    """`path` with the user's home folder written as `~`."""
    home = os.path.expanduser("~")
    text = str(path)
    return "~" + text[len(home) :] if home not in ("", "/") and text.startswith(home + os.sep) else text


# --------------------------------------------------------------------------- dashboard


def _scope_rows(table: Table, scope: ScopeOverview) -> None:
    facts = scope.identity
    identity = ", ".join(facts[:IDENTITY_PREVIEW]) + (" ..." if len(facts) > IDENTITY_PREVIEW else "")
    table.add_row(Text("  Identity"), Text(identity or "(empty)"))
    table.add_row(Text("  Rules"), Text(str(scope.rules)))
    table.add_row(Text("  Lessons"), Text(str(scope.lessons)))
    table.add_row(Text("  Topics"), Text(", ".join(scope.topics) if scope.topics else "(none)"))


async def dashboard(ctx: CommandContext, args: ParsedCommand) -> CommandOutput:
    return dashboard_output(await ctx.runtime.memory.overview())


def dashboard_output(overview: MemoryOverview) -> CommandOutput:
    mode = overview.mode
    lines: list[Text | Table] = [Text.assemble(("Memory mode: ", "bold"), (mode, "bold"), f" — {MODE_MEANING[mode]}")]
    if mode != overview.configured_mode:
        said = overview.configured_mode
        lines.append(Text(f"  ANTON_MEMORY_ENABLED is false, so memory is off (the mode setting says {said})."))
    grid = Table.grid(padding=(0, 2))
    grid.add_column(no_wrap=True)
    grid.add_column()
    for scope in overview.scopes:
        grid.add_row(Text(scope.scope.capitalize(), style="bold"), Text(short_path(scope.folder), style="dim"))
        if not scope.exists:
            grid.add_row(Text("  (no memory folder yet)"), Text(""))
            continue
        _scope_rows(grid, scope)
    total = overview.total_entries
    lines += [Text(""), grid, Text(""), Text(f"Total entries: {total} (rules and lessons in both scopes)")]
    crowded = [f"{scope.scope} has {scope.entries}" for scope in overview.crowded]
    threshold, every = overview.compaction_threshold, overview.compaction_every_turns
    if crowded:
        lines.append(
            Text(
                f"Compaction due: {' and '.join(crowded)} entries (more than {threshold} in a scope). "
                f"It runs in the background every {every} turns; /memory vacuum runs it now.",
                style="yellow",
            )
        )
    else:
        lines.append(Text(f"Compaction not needed ({overview.compaction_rule})."))
    sessions = overview.sessions
    lines.append(
        Text(
            f"Episodic memory: {'ON' if overview.episodic_memory else 'OFF'} · "
            f"{sessions} session{'' if sessions == 1 else 's'}"
        )
    )
    lines.append(Text(""))
    lines.append(
        Text(
            "/memory rules, /memory lessons and /memory identity list the entries by number; "
            "/memory episodes shows this session; /setup changes the memory mode.",
            style="dim",
        )
    )
    return CommandOutput(Group(*lines))


# --------------------------------------------------------------------------- numbered entries


@dataclass(frozen=True)
class NumberedEntry:
    number: int
    scope: str
    engram: Engram


def numbered_entries(listing: EntryListing) -> list[NumberedEntry]:
    """Every entry of the listing (both scopes), numbered from 1, global first."""
    found: list[NumberedEntry] = []
    for tier in listing.tiers:
        found += [NumberedEntry(len(found) + i + 1, tier.scope, engram) for i, engram in enumerate(tier.entries)]
    return found


async def _listing(ctx: CommandContext, which: str) -> EntryListing:
    return await ctx.runtime.memory.entries(LIST_FILES[which])


def _meta_line(engram: Engram) -> str:
    parts = []
    if engram.confidence and engram.confidence != "medium":
        parts.append(f"confidence:{engram.confidence}")
    if engram.source and engram.source != "llm":
        parts.append(f"source:{engram.source}")
    if engram.topic:
        parts.append(f"topic:{engram.topic}")
    if engram.updated_at is not None:
        parts.append(f"updated:{engram.updated_at:%Y-%m-%d}")
    return "  ".join(parts)


def _entry_list(listing: EntryListing, which: str) -> CommandOutput:
    entries = numbered_entries(listing)
    title = {"rules": "Rules", "lessons": "Lessons", "identity": "Identity"}[which]
    lines: list[Text] = [Text(f"{title} — {len(entries)}", style="bold")]
    if not entries:
        return CommandOutput(Group(*lines, Text("(no items)")))
    for tier in listing.tiers:
        mine = [entry for entry in entries if entry.scope == tier.scope]
        if not mine:
            continue
        lines += [Text(""), Text.assemble((tier.scope.capitalize(), "bold"), "  ", (short_path(tier.path), "dim"))]
        kind = None
        for entry in mine:
            if which == "rules" and entry.engram.kind != kind:
                kind = entry.engram.kind
                lines.append(Text(f"  {kind.capitalize()}", style="bold"))
            lines.append(Text(f"{entry.number:>3}.  {entry.engram.text}"))
            if meta := _meta_line(entry.engram):
                lines.append(Text(f"      {meta}", style="dim"))
    hint = f"/memory {which} edit <n> <new text> changes one; /memory {which} delete <n> removes one."
    lines += [Text(""), Text(hint, style="dim")]
    return CommandOutput(Group(*lines))


async def _pick(ctx: CommandContext, which: str, number_text: str) -> NumberedEntry | CommandOutput:
    if not number_text.isdigit():
        return error(f"Give the number of the {SINGULAR[which]} as /memory {which} lists it (e.g. delete 2).")
    entries = numbered_entries(await _listing(ctx, which))
    number = int(number_text)
    if not entries:
        return error(f"There are no {which} to change.")
    if not 1 <= number <= len(entries):
        return error(f"There is no {SINGULAR[which]} {number}: pick a number from 1 to {len(entries)}.")
    return entries[number - 1]


async def _edit(ctx: CommandContext, which: str, args: ParsedCommand) -> CommandOutput:
    picked = await _pick(ctx, which, args.words[1] if len(args.words) > 1 else "")
    if isinstance(picked, CommandOutput):
        return picked
    new_text = args.after(2)
    if not new_text:
        ask_text = ctx.hook("ask_text")
        if ask_text is None:
            return error(f"Type the new text after the number: /memory {which} edit {picked.number} <new text>")
        new_text = (await ctx.call(ask_text, f"Edit {SINGULAR[which]} {picked.number}", picked.engram.text)) or ""
        if not new_text.strip():
            return info("Nothing changed.")
    what = f"{SINGULAR[which].capitalize()} {picked.number}"
    try:
        changed = await ctx.runtime.update_entry(picked.scope, LIST_FILES[which], picked.engram.id, new_text)
    except (MemoryFileError, OSError, ValueError) as exc:
        return error(f"Not changed: {exc}")
    if not changed:
        return warning(f"{what} changed on disk meanwhile; list again and retry.")
    return success(f"{what} ({picked.scope}) is now: {' '.join(new_text.split())}")


async def _delete(ctx: CommandContext, which: str, args: ParsedCommand) -> CommandOutput:
    picked = await _pick(ctx, which, args.words[1] if len(args.words) > 1 else "")
    if isinstance(picked, CommandOutput):
        return picked
    if not await ctx.ask(f"Delete {SINGULAR[which]} {picked.number} ({picked.scope}): {picked.engram.text}?"):
        return info("Nothing deleted.")
    try:
        deleted = await ctx.runtime.delete_entry(picked.scope, LIST_FILES[which], picked.engram.id)
    except (MemoryFileError, OSError, ValueError) as exc:
        return error(f"Not deleted: {exc}")
    if not deleted:
        return warning(f"{SINGULAR[which].capitalize()} {picked.number} was already gone.")
    return success(f"Deleted {SINGULAR[which]} {picked.number} ({picked.scope}): {picked.engram.text}")


def entries_command(which: str) -> Callable[[CommandContext, ParsedCommand], Awaitable[CommandOutput]]:
    """The handler of `/memory rules|lessons|identity [edit <n> <text> | delete <n>]`."""

    async def handler(ctx: CommandContext, args: ParsedCommand) -> CommandOutput:
        action = args.words[0].lower() if args.words else ""
        if not action:
            return _entry_list(await _listing(ctx, which), which)
        if action == "edit":
            return await _edit(ctx, which, args)
        if action in ("delete", "remove", "del"):
            return await _delete(ctx, which, args)
        return error(f"Unknown action {action!r}: use /memory {which} [edit <n> <text> | delete <n>].")

    return handler


# --------------------------------------------------------------------------- episodes


def _cell(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= EPISODE_CELL else flat[: EPISODE_CELL - 3] + "..."


async def episodes(ctx: CommandContext, args: ParsedCommand) -> CommandOutput:
    turns = await ctx.runtime.memory.session_turns()
    action = args.words[0].lower() if args.words else ""
    if action in ("delete", "remove", "del"):
        return await _delete_turn(ctx, turns, args.words[1] if len(args.words) > 1 else "")
    if action:
        return error("Use /memory episodes, or /memory episodes delete <turn>.")
    title = f"Episodes — session {turns.session}" if turns.session else "Episodes"
    if not turns.turns:
        return CommandOutput(Group(Text(title, style="bold"), Text("(no items)")))
    table = Table(title=title, title_justify="left", show_lines=False)
    table.add_column("turn", justify="right", no_wrap=True)
    table.add_column("question")
    table.add_column("answer")
    for turn in turns.turns:
        table.add_row(Text(str(turn.turn)), Text(_cell(turn.question)), Text(_cell(turn.answer)))
    return CommandOutput(table)


async def _delete_turn(ctx: CommandContext, turns: SessionTurns, number_text: str) -> CommandOutput:
    if not number_text.isdigit():
        return error("Give the turn number as /memory episodes shows it (e.g. /memory episodes delete 3).")
    number = int(number_text)
    session, turn = turns.session, turns.get(number)
    if session is None or turn is None:
        shown = ", ".join(str(t.turn) for t in turns.turns) or "none"
        return error(f"Turn {number} is not in this session (turns: {shown}).")
    question = _cell(turn.question)
    if not await ctx.ask(f"Delete turn {number} of session {session} from the episode log: {question}?"):
        return info("Nothing deleted.")
    try:
        removed = await ctx.runtime.delete_episode_turn(session, number)
    except OSError as exc:
        return error(f"Not deleted: {exc}")
    return success(f"Deleted turn {number} ({removed} lines) from session {session}.")


# --------------------------------------------------------------------------- compaction and help


async def vacuum(ctx: CommandContext, args: ParsedCommand) -> CommandOutput:
    if not ctx.runtime.can_compact:
        return warning("Compaction needs the model and is not available in this session.")
    table = await ctx.runtime.memory.compaction_table()
    due = [f"{file.name} ({file.entries} entries)" for file in table.due]
    if not due:
        largest = table.largest
        return info(f"Nothing to compact: {table.rule}. The largest is {largest.name} with {largest.entries}.")
    if not await ctx.ask(f"Compact {', '.join(due)} now? The model keeps what is still useful."):
        return info("Memory left as it is.")
    result = await ctx.runtime.compact_now()
    return as_output(result, default="Compaction finished.")


async def reset(ctx: CommandContext, args: ParsedCommand) -> CommandOutput:
    """``/memory reset global|project|episodic``: Anton's reset, as a recorded change that can be undone."""
    scope = args.words[0] if args.words else ""
    if scope not in ("global", "project", "episodic"):
        return error("Say which scope to clear: /memory reset global, project or episodic.")
    what = "episode logs (archived, not deleted)" if scope == "episodic" else f"{scope} rules, lessons and profile"
    if not await ctx.ask(f"Clear the {what}? The change is recorded and can be undone in the History tab."):
        return info("Canceled.")
    try:
        change = await ctx.runtime.history.reset(scope)
    except Exception as exc:
        return error(f"Not reset: {exc}")
    if change is None:
        return info(f"Nothing to clear in {scope}.")
    return success(f"Reset finished: {scope} (change {change.short}; undo it in the History tab).")


async def memory_help(ctx: CommandContext, args: ParsedCommand) -> CommandOutput:
    rows = [
        ("/memory", "dashboard: mode, counts per scope, compaction and episodes"),
        ("/memory rules|lessons|identity", "numbered list, global scope first"),
        ("/memory rules|lessons|identity edit <n> <text>", "change entry n"),
        ("/memory rules|lessons|identity delete <n>", "remove entry n (asks first)"),
        ("/memory episodes [delete <turn>]", "this session's turns; remove one from the log"),
        ("/memory vacuum", "compact both scopes now (asks first)"),
        ("/memory reset global|project|episodic", "clear a scope as a recorded change that can be undone"),
        ("/memory remote [add <scope> <url> | remove <scope>]", "share a scope through a git remote"),
        ("/memory sync [global|project]", "fetch, merge by entries and push shared memory now"),
        ("/memory resolve <scope> mine|theirs", "finish a sync that waits for a choice"),
    ]
    notes = Text(f"Compaction: {await ctx.runtime.memory.compaction_rule()}.")
    table = Table.grid(padding=(0, 2))
    for command, meaning in rows:
        table.add_row(Text(command, style="bold"), Text(meaning))
    return CommandOutput(Group(table, Text(""), notes))
