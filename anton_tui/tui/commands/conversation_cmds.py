"""`/conversation …` and `/unfold`: the saved conversations from the prompt, through `Runtime.conversations`.

`/conversation` lists them (forks under their parent), `rename <title>` titles this one, `fork [N]` forks it at your
Nth message (the last by default) and continues in the fork, `export [file]` writes it as Markdown (in a browser tab:
a download), `delete <id>` moves one to the trash after asking and `restore [id]` brings one back. `/unfold <turn>`
brings a turn a summary folded back, word for word, into your next message.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from anton_tui.tui.commands.context import CommandContext, CommandOutput, error, info, success
from anton_tui.tui.commands.parse import ParsedCommand

FAILED = (LookupError, ValueError, RuntimeError, FileExistsError, OSError)


async def list_conversations(ctx: CommandContext, args: ParsedCommand) -> CommandOutput:
    rows = await ctx.runtime.conversations.tree()
    if not rows:
        return info("No saved conversations in this project yet.")
    current = ctx.runtime.conversations.current
    depth: dict[str, int] = {}
    table = Table(title="Saved conversations", title_justify="left", box=None, padding=(0, 2))
    for column in ("Id", "Started", "Turns", "Conversation"):
        table.add_column(column, no_wrap=column != "Conversation", overflow="fold")
    for row in rows:
        level = depth[row.session_id] = depth[row.parent] + 1 if row.parent in depth else 0
        branch = "  " * (level - 1) + "└ " if level else ""
        label = Text.assemble((branch, "dim"), (row.title, "bold") if row.title else row.preview or "(no message)")
        if row.parent and row.forked_at:
            label.append(f" · fork at message {row.forked_at}", style="dim")
        if row.session_id == current:
            label.append("  (this one)", style="dim")
        table.add_row(row.session_id, row.date, str(row.turns), label)
    return CommandOutput(table)


async def rename(ctx: CommandContext, args: ParsedCommand) -> CommandOutput:
    title = args.rest.strip()
    if not title:
        return error("Usage: /conversation rename <title>")
    try:
        about = await ctx.runtime.conversations.set_title(title)
    except FAILED as exc:
        return error(str(exc))
    return success(f"This conversation is titled {about.title!r}.")


async def fork(ctx: CommandContext, args: ParsedCommand) -> CommandOutput | None:
    words = args.rest.split()
    if len(words) > 1 or (words and not words[0].isdigit()):
        return error("Usage: /conversation fork [N] (your Nth message, 1-based; the last by default)")
    try:
        made = await ctx.runtime.conversations.fork(int(words[0]) if words else None)
    except FAILED as exc:
        return error(str(exc))
    resume = ctx.hook("resume_conversation")
    if resume is not None:
        await ctx.call(resume, made.session_id)
    return success(f"Forked at your message {made.at} into {made.session_id}, which you continue now; "
                   f"{made.parent} stays as it was (`/resume` lists both).")  # fmt: skip


async def export(ctx: CommandContext, args: ParsedCommand) -> CommandOutput:
    conversations = ctx.runtime.conversations
    try:
        exported = await conversations.export()
        deliver = ctx.hook("deliver_download")
        if deliver is not None and not args.rest.strip() and await ctx.call(deliver, exported.text, exported.name):
            return success(f"Exported this conversation: your browser downloads {exported.name}.")
        path = await conversations.save_export(exported, args.rest.strip() or None)
    except FAILED as exc:
        return error(str(exc))
    return success(f"Exported this conversation as Markdown to {path}.")


async def delete(ctx: CommandContext, args: ParsedCommand) -> CommandOutput | None:
    target = args.rest.strip()
    if not target:
        return error("Usage: /conversation delete <id> (`/conversation` lists the ids)")
    if not await ctx.ask(f"Delete the conversation {target}? It stays in the trash 30 days."):
        return info("Nothing was deleted.")
    try:
        trashed = await ctx.runtime.conversations.delete(target)
    except FAILED as exc:
        return error(str(exc))
    return success(f"Deleted {target}; it is kept until {trashed.expires:%Y-%m-%d}. "
                   f"`/conversation restore {target}` brings it back.")  # fmt: skip


async def restore(ctx: CommandContext, args: ParsedCommand) -> CommandOutput:
    try:
        restored = await ctx.runtime.conversations.restore(args.rest.strip() or None)
    except FAILED as exc:
        return error(str(exc))
    return success(f"Restored {restored}; `/resume` lists it again.")


async def unfold(ctx: CommandContext, args: ParsedCommand) -> CommandOutput:
    words = args.rest.split()
    if len(words) != 1 or not words[0].isdigit():
        return error("Usage: /unfold <turn> (the turn's number in a summary's ledger)")
    try:
        turn = ctx.runtime.conversations.unfold(int(words[0]))
    except LookupError as exc:
        return error(str(exc))
    said = f": {turn.text[:80]}" if turn.text else ""
    return success(f"Turn {turn.number}{said} goes back into your next message, word for word.")
