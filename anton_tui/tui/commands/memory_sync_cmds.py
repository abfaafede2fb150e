"""The `/memory remote` and `/memory sync` commands: share a memory scope through a git remote, and sync it now.

They call the Runtime's sync service (`runtime/memory_sync.py`), which run off the event loop; a sync's outcome is
also shown in the header. Merges that wait for a choice are resolved with `/memory resolve` or in the History tab.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group
from rich.text import Text

from anton_tui.tui.commands.context import CommandContext, CommandOutput, error, info, success, warning
from anton_tui.tui.commands.parse import ParsedCommand

if TYPE_CHECKING:
    from anton_tui.memory.sync.syncer import SyncOutcome

SCOPES = ("global", "project")


async def remote(ctx: CommandContext, args: ParsedCommand) -> CommandOutput:
    """``/memory remote [add <scope> <url> | remove <scope>]``."""
    words = args.words
    action = words[0].lower() if words else "list"
    if action == "add":
        if len(words) < 3 or words[1] not in SCOPES:
            return error("Use /memory remote add global|project <url> (a bare folder, ssh:// or https:// address).")
        try:
            url = await ctx.runtime.sync.add_remote(words[1], args.after(2))
        except Exception as exc:
            return error(f"Not added: {exc}")
        return success(f"The {words[1]} memory is shared through {url}. /memory sync syncs it now.")
    if action in ("remove", "delete"):
        if len(words) < 2 or words[1] not in SCOPES:
            return error("Use /memory remote remove global|project.")
        removed = await ctx.runtime.sync.remove_remote(words[1])
        return success(f"The {words[1]} memory is no longer shared.") if removed else info("It was not shared.")
    if action != "list":
        return error("Use /memory remote, /memory remote add <scope> <url> or /memory remote remove <scope>.")
    shared = await ctx.runtime.sync.remotes()
    lines = [Text(f"{scope:<8} {url}") for scope, url in shared.items()]
    managed = ctx.runtime.sync.managed_dir
    if managed is not None:
        lines.append(Text(f"{'managed':<8} {managed} (read-only)"))
    if not lines:
        return info("No memory is shared. /memory remote add global|project <url> shares one.")
    return CommandOutput(Group(Text("Shared memory", style="bold"), *lines))


def _report(outcomes: list[SyncOutcome]) -> CommandOutput:
    lines: list[Text] = []
    for outcome in outcomes:
        style = "green" if outcome.ok else "yellow" if outcome.status in ("conflicts", "secret") else "red"
        lines.append(Text.assemble((f"{outcome.scope}: ", "bold"), (outcome.message, style)))
        lines += [Text(f"  {note}", style="dim") for note in outcome.notes[:5]]
        for conflict in outcome.conflicts:
            lines += [Text("  " + line) for line in conflict.describe().splitlines()]
        for hit in outcome.secrets:
            lines.append(Text(f"  {hit.describe()}"))
        if outcome.conflicts:
            lines.append(Text(f"  /memory resolve {outcome.scope} mine|theirs, or the History tab, decides.", "dim"))
        if outcome.secrets:
            lines.append(Text("  Edit the entry (/memory lessons or rules), or keep it local: "
                              f"/memory sync keep-local {outcome.scope}.", "dim"))  # fmt: skip
    if all(outcome.ok for outcome in outcomes):
        return CommandOutput(Group(*lines), "success")
    return CommandOutput(Group(*lines), "warning")


async def sync(ctx: CommandContext, args: ParsedCommand) -> CommandOutput:
    """``/memory sync [global|project]`` and ``/memory sync keep-local <scope>``."""
    words = args.words
    if words and words[0] == "keep-local":
        return await _keep_local(ctx, words[1] if len(words) > 1 else "")
    scope = words[0] if words else None
    if scope is not None and scope not in SCOPES:
        return error("Use /memory sync, or /memory sync global|project.")
    if scope is None and not await ctx.runtime.sync.remotes() and ctx.runtime.sync.managed_dir is None:
        return info("No memory is shared. /memory remote add global|project <url> shares one.")
    outcomes = await ctx.runtime.sync.sync(scope)
    if not outcomes:
        return info("Nothing to sync.")
    return _report(outcomes)


async def _keep_local(ctx: CommandContext, scope: str) -> CommandOutput:
    if scope not in SCOPES:
        return error("Use /memory sync keep-local global|project.")
    held = [o for o in ctx.runtime.sync.last if o.scope == scope and o.secrets]
    if not held:
        return info(f"No {scope} entry was held back by the last sync.")
    entries = [hit.entry_id for hit in held[0].secrets if hit.entry_id]
    if not await ctx.ask(f"Keep {len(entries)} {scope} entr{'y' if len(entries) == 1 else 'ies'} on this machine only "
                         "(never pushed)?"):  # fmt: skip
        return info("Nothing changed.")
    await ctx.runtime.sync.keep_local(scope, entries)
    return _report(await ctx.runtime.sync.sync(scope))


async def resolve(ctx: CommandContext, args: ParsedCommand) -> CommandOutput:
    """``/memory resolve global|project mine|theirs``."""
    words = args.words
    if len(words) < 2 or words[0] not in SCOPES or words[1] not in ("mine", "theirs"):
        return error("Use /memory resolve global|project mine|theirs.")
    waiting = await ctx.runtime.sync.waiting()
    if words[0] not in waiting:
        return warning(f"No {words[0]} merge waits for a choice.")
    outcome = await ctx.runtime.sync.resolve(words[0], "ours" if words[1] == "mine" else "theirs")
    return _report([outcome])
