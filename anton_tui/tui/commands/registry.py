"""The slash-command table (name, argument hint, help, handler), running a typed command, and completion.

`run(text, ctx)` parses a line such as `/memory rules delete 3`, finds the longest command name that matches its
first words, and awaits that command's handler; an unknown command gets a reply suggesting the closest one.
`complete(prefix, ctx)` offers the next word for the prompt's completion list (argument choices such as skill
labels are read through the Runtime, off the event loop).
"""

from __future__ import annotations

import difflib
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field

from rich.table import Table
from rich.text import Text

from anton_tui.tui.commands import conversation_cmds, goal_cmd, memory_cmds, memory_sync_cmds, skill_cmds
from anton_tui.tui.commands.context import CommandContext, CommandOutput, error, info, success
from anton_tui.tui.commands.parse import ParsedCommand, parse

Handler = Callable[[CommandContext, ParsedCommand], Awaitable[CommandOutput | None]]
Choices = Callable[[CommandContext], Awaitable[Iterable[str]]]


@dataclass(frozen=True)
class CommandSpec:
    """One slash command. `name` may be several words (`skill show`); `choices` lists first-argument completions."""

    name: str
    args: str
    help: str
    handler: Handler
    group: str
    takes_args: bool = False
    choices: Choices | tuple[str, ...] = field(default=())

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(self.name.split())

    @property
    def usage(self) -> str:
        return f"/{self.name} {self.args}".strip()


# --------------------------------------------------------------------------- general commands


async def _help(ctx: CommandContext, args: ParsedCommand) -> CommandOutput:
    table = Table(title="Slash commands", title_justify="left", show_header=False, box=None, padding=(0, 2))
    table.add_column(overflow="fold", ratio=2)  # a long usage wraps rather than squeeze the description
    table.add_column(min_width=24, ratio=3)
    group = None
    for spec in COMMANDS:
        if spec.group != group:
            group = spec.group
            table.add_row(Text(group, style="bold underline"), Text(""))
        table.add_row(Text(spec.usage, style="bold"), Text(spec.help))
    return CommandOutput(table)


async def _open(hook_name: str, what: str, ctx: CommandContext) -> CommandOutput | None:
    hook = ctx.hook(hook_name)
    if hook is None:
        return error(f"{what} is not available here.")
    await ctx.call(hook)
    return None


async def _setup(ctx: CommandContext, args: ParsedCommand) -> CommandOutput | None:
    return await _open("open_setup", "The setup screen", ctx)


async def _skills_screen(ctx: CommandContext, args: ParsedCommand) -> CommandOutput | None:
    """`/skill edit [label]`: the skills screen, on the named skill (typos tolerated) when one is given."""
    hook = ctx.hook("open_skills")
    if hook is None:
        return error("The skills screen is not available here.")
    requested = args.rest.strip()
    if not requested:
        await ctx.call(hook)
        return None
    found = await ctx.runtime.skills.lookup(requested)
    label = requested if found.exact else found.closest
    if found.invalid is not None or label is None:
        return error(f"No skill is labelled {requested}. /skill list shows the saved ones.")
    await ctx.call(hook, label)
    return None


async def _reflections(ctx: CommandContext, args: ParsedCommand) -> CommandOutput | None:
    return await _open("open_reflections", "The reflections screen", ctx)


async def _clear(ctx: CommandContext, args: ParsedCommand) -> CommandOutput | None:
    return await _open("clear_chat", "Clearing the chat", ctx)


async def _resume(ctx: CommandContext, args: ParsedCommand) -> CommandOutput | None:
    if not ctx.runtime.can_save_conversations:
        return error("Conversations are saved only with episodic memory on (ANTON_EPISODIC_MEMORY).")
    return await _open("open_resume", "Resuming a conversation", ctx)


async def _rewind(ctx: CommandContext, args: ParsedCommand) -> CommandOutput | None:
    if not ctx.runtime.user_turns():
        return info("Nothing to go back to: no message was sent in this conversation yet.")
    return await _open("open_rewind", "Rewinding", ctx)


async def _exit(ctx: CommandContext, args: ParsedCommand) -> CommandOutput | None:
    return await _open("exit_app", "Leaving", ctx)


async def _theme(ctx: CommandContext, args: ParsedCommand) -> CommandOutput:
    names = ctx.themes()
    current = ctx.current_theme()
    wanted = args.rest.strip()
    if not wanted:
        if not names:
            return info(f"Current theme: {current or 'unknown'}.")
        listed = "\n".join(f"{'*' if name == current else ' '} {name}" for name in names)
        return info(f"Themes (* is the current one):\n{listed}\n\n/theme <name> switches.")
    if names and wanted not in names:
        close = difflib.get_close_matches(wanted, names, n=1, cutoff=0.5)
        hint = f" Did you mean {close[0]}?" if close else f" Installed: {', '.join(names)}."
        return error(f"No theme is called {wanted}.{hint}")
    set_theme = ctx.hook("set_theme")
    if set_theme is None:
        return error("Switching themes is not available here.")
    await ctx.call(set_theme, wanted)
    return success(f"Theme: {wanted}")


async def _skill_labels(ctx: CommandContext) -> list[str]:
    return await ctx.runtime.skills.labels()


async def _theme_names(ctx: CommandContext) -> list[str]:
    return ctx.themes()


_ENTRY_ACTIONS = ("edit", "delete")
COMMANDS: list[CommandSpec] = [
    CommandSpec("memory", "", "Memory dashboard: mode, counts, compaction, episodes", memory_cmds.dashboard, "Memory"),
    CommandSpec("memory rules", "[edit <n> <text> | delete <n>]", "List rules by number; change or remove one",
                memory_cmds.entries_command("rules"), "Memory", True, _ENTRY_ACTIONS),
    CommandSpec("memory lessons", "[edit <n> <text> | delete <n>]", "List lessons by number; change or remove one",
                memory_cmds.entries_command("lessons"), "Memory", True, _ENTRY_ACTIONS),
    CommandSpec("memory identity", "[edit <n> <text> | delete <n>]", "What Anton knows about you; change or remove",
                memory_cmds.entries_command("identity"), "Memory", True, _ENTRY_ACTIONS),
    CommandSpec("memory episodes", "[delete <turn>]", "This session's turns; remove one from the log",
                memory_cmds.episodes, "Memory", True, ("delete",)),
    CommandSpec("memory vacuum", "", "Compact both memory scopes now", memory_cmds.vacuum, "Memory"),
    CommandSpec("memory reset", "global|project|episodic", "Clear a scope (recorded; undo in the History tab)",
                memory_cmds.reset, "Memory", True, ("global", "project", "episodic")),
    CommandSpec("memory remote", "[add <scope> <url> | remove <scope>]", "Share a memory scope through a git remote",
                memory_sync_cmds.remote, "Memory", True, ("add", "remove")),
    CommandSpec("memory sync", "[global|project]", "Fetch, merge by entries and push shared memory now",
                memory_sync_cmds.sync, "Memory", True, ("global", "project", "keep-local")),
    CommandSpec("memory resolve", "<scope> mine|theirs", "Finish a sync that waits for a choice",
                memory_sync_cmds.resolve, "Memory", True, ("global", "project")),
    CommandSpec("memory help", "", "What the /memory commands do", memory_cmds.memory_help, "Memory"),
    CommandSpec("skill save", "[hint]", "Draft a skill from this conversation and save it", skill_cmds.save_skill,
                "Skills", True),
    CommandSpec("skill list", "", "Table of saved skills", skill_cmds.list_skills, "Skills"),
    CommandSpec("skill show", "<label>", "One skill's details and procedure (typos tolerated)", skill_cmds.show_skill,
                "Skills", True, _skill_labels),
    CommandSpec("skill load", "<label>", "Give a skill to every request of this conversation", skill_cmds.load_skill,
                "Skills", True, _skill_labels),
    CommandSpec("skill remove", "<label>", "Delete a skill (asks first)", skill_cmds.remove_skill, "Skills", True,
                _skill_labels),
    CommandSpec("skill edit", "[label]", "Open the skills screen (on that skill)", _skills_screen, "Skills", True,
                _skill_labels),
    CommandSpec("skill install", "<folder or git URL>", "Install skills from a folder or a git repository",
                skill_cmds.install_skill, "Skills", True),
    CommandSpec("skill", "", "Same as /skill list", skill_cmds.list_skills, "Skills"),
    CommandSpec("skills", "", "Same as /skill list", skill_cmds.list_skills, "Skills", True, ("list",)),
    CommandSpec("reflections", "", "The daily, weekly and monthly reflections and the changes they propose",
                _reflections, "Memory"),
    CommandSpec("setup", "", "Provider, API key, models and memory settings", _setup, "Workspace"),
    CommandSpec("theme", "[name]", "List the themes, or switch to one", _theme, "Workspace", True, _theme_names),
    CommandSpec("clear", "", "Start a new conversation (memory, skills and past episodes stay)", _clear, "Workspace"),
    CommandSpec("resume", "", "Continue a saved conversation (this program's or Anton's)", _resume, "Workspace"),
    CommandSpec("rewind", "", "Go back to before one of your messages and edit it", _rewind, "Workspace"),
    CommandSpec("conversation", "", "The saved conversations, forks under their parent", conversation_cmds.list_conversations,
                "Conversations"),
    CommandSpec("conversation rename", "<title>", "Give this conversation a title", conversation_cmds.rename,
                "Conversations", True),
    CommandSpec("conversation fork", "[N]", "Fork this conversation at your Nth message and continue in the fork",
                conversation_cmds.fork, "Conversations", True),
    CommandSpec("conversation export", "[file]", "This conversation as Markdown (a download in a browser tab)",
                conversation_cmds.export, "Conversations", True),
    CommandSpec("conversation delete", "<id>", "Move a saved conversation to the trash (kept 30 days; asks first)",
                conversation_cmds.delete, "Conversations", True),
    CommandSpec("conversation restore", "[id]", "Bring a deleted conversation back from the trash",
                conversation_cmds.restore, "Conversations", True),
    CommandSpec("unfold", "<turn>", "Bring a summarised turn back, word for word, into your next message",
                conversation_cmds.unfold, "Conversations", True),
    CommandSpec("goal", "<objective> [--turns N]", "Work on an objective on its own, turn after turn, until it is "
                "done or N turns (50) are used; Escape stops", goal_cmd.goal, "Workspace", True),
    CommandSpec("help", "", "This list", _help, "General"),
    CommandSpec("exit", "", "Leave anton-tui", _exit, "General"),
]  # fmt: skip
"""Every slash command, in the order /help lists them."""

_BY_WORDS = {spec.words: spec for spec in COMMANDS}


def find(parsed: ParsedCommand) -> tuple[CommandSpec, ParsedCommand] | None:
    """The command whose name matches the most leading words, and the arguments left after its name."""
    words = (parsed.name, *(word.lower() for word in parsed.words))
    for length in range(len(words), 0, -1):
        spec = _BY_WORDS.get(words[:length])
        if spec is not None:
            rest = parsed.after(length - 1)
            return spec, ParsedCommand(spec.name, tuple(rest.split()), rest)
    return None


def _has_subcommands(spec: CommandSpec) -> bool:
    return any(other.words[: len(spec.words)] == spec.words and other is not spec for other in COMMANDS)


def _suggest(typed: str, candidates: Iterable[str]) -> str | None:
    close = difflib.get_close_matches(typed, list(candidates), n=1, cutoff=0.5)
    return close[0] if close else None


def unknown(parsed: ParsedCommand) -> CommandOutput:
    """The reply to a command that is not in the table, naming the closest one when there is one (never itself:
    a known command given words it does not take says so)."""
    found = find(parsed)
    if found is not None and found[1].words and not found[0].takes_args and not _has_subcommands(found[0]):
        spec = found[0]
        return error(f"/{spec.name} takes no arguments (you added: {found[1].rest}). /help lists the commands.")
    tops = sorted({spec.words[0] for spec in COMMANDS})
    if parsed.name in tops and parsed.words:
        subs = [spec.words[1] for spec in COMMANDS if len(spec.words) > 1 and spec.words[0] == parsed.name]
        typed = parsed.words[0]
        close = _suggest(typed.lower(), [sub for sub in subs if sub != typed.lower()])
        hint = f" Did you mean /{parsed.name} {close}?" if close else f" Try: {', '.join(subs)}."
        return error(f"Unknown command: /{parsed.name} {typed}.{hint}")
    close = _suggest(parsed.name, tops)
    hint = f" Did you mean /{close}?" if close else " /help lists the commands."
    return error(f"Unknown command: /{parsed.name}.{hint}")


async def run(text: str, ctx: CommandContext) -> CommandOutput | None:
    """Run the slash command in `text`. None means the command's effect is its own reply (a screen opened, …)."""
    parsed = parse(text)
    if parsed is None:
        return error("Not a slash command.")
    found = find(parsed)
    if found is None:
        invoked = await skill_cmds.invoke_skill(ctx, parsed)
        return unknown(parsed) if invoked is False else invoked
    spec, args = found
    if args.words and not spec.takes_args:
        return unknown(parsed)
    return await spec.handler(ctx, args)


def is_command(text: str) -> bool:
    return parse(text) is not None


async def _choices(spec: CommandSpec, ctx: CommandContext | None) -> list[str]:
    if callable(spec.choices):
        if ctx is None:
            return []
        try:
            return list(await spec.choices(ctx))
        except (OSError, ValueError):
            return []
    return list(spec.choices)


async def complete(prefix: str, ctx: CommandContext | None = None) -> list[str]:
    """Completions of `prefix` up to the end of its current word: `/sk` → `/skill`, `/skills`; `/skill show c` →
    `/skill show csv-summary` (argument choices need `ctx`)."""
    if not prefix.startswith("/") or "\n" in prefix:
        return []
    *done, partial = prefix[1:].split(" ")
    done_words = tuple(word.lower() for word in done if word)
    partial_low = partial.lower()
    found: set[str] = set()
    for spec in COMMANDS:
        words = spec.words
        if words[: len(done_words)] == done_words and len(words) > len(done_words):
            found.add(words[len(done_words)])
        if done_words and words == done_words[: len(words)] and len(done_words) == len(words) and spec.takes_args:
            found.update(await _choices(spec, ctx))
    head = "/" + " ".join(done_words) + (" " if done_words else "")
    return sorted(head + word for word in found if word.lower().startswith(partial_low))
