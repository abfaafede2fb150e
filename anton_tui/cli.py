"""Command-line entry point: parses arguments, reads the settings' sources, then starts the full-screen app.

Everything heavy (settings, the app, the model SDKs) is imported only after the arguments are parsed, so
``--version`` and ``--help`` answer at once. The settings are validated right after the first frame (see `anton_tui.runtime.start`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from anton_tui import __version__
from anton_tui.settings_sources import SETTINGS_ERROR_EXIT, SettingsError, read_env_layers

PICK_CONVERSATION = "?"  # `--resume` without an id: the app opens the list of saved conversations


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="anton-tui",
        description="A full-screen terminal app for the Anton agent, whose memory lives in plain files.",
        epilog="Settings come from the environment, <folder>/.anton/.env and ~/.anton/.env, in that order. "
        "`anton-tui memory log|show|undo` works on the memory history without the app; "
        "`anton-tui conversation list|show|rename|delete|restore|fork|export` on the saved conversations; "
        '`anton-tui ask "MESSAGE"` runs one turn and prints the answer. '
        "`anton-tui reflect` writes the reflections that are due and `anton-tui recall QUERY` searches the past "
        "(see `anton-tui reflect --help`). "
        "`anton-tui serve` serves the app to web browsers (see `anton-tui serve --help`).",
    )
    parser.add_argument("--version", action="version", version=f"anton-tui {__version__}")
    parser.add_argument(
        "-f", "--folder", metavar="DIR", type=Path, help="project folder to work in (default: the current folder)"
    )
    parser.add_argument("--theme", metavar="NAME", help="colour theme for this run, e.g. anton-dark")
    parser.add_argument(
        "--demo", action="store_true", help="replay a recorded session; needs no API key and changes no memory"
    )
    parser.add_argument(
        "--skill", action="append", default=[], metavar="NAME",
        help="preload a skill for the conversation, in its first request (repeatable)",
    )  # fmt: skip
    resume = parser.add_mutually_exclusive_group()
    resume.add_argument(
        "--resume", nargs="?", const=PICK_CONVERSATION, metavar="ID",
        help="continue a saved conversation of the project; without an ID, choose it from a list",
    )  # fmt: skip
    resume.add_argument("--continue", dest="resume", action="store_const", const="",
                        help="continue the project's newest saved conversation")  # fmt: skip
    return parser


SUBCOMMANDS = ("memory", "conversation", "ask", "reflect", "recall")


def _split_subcommand(argv: list[str]) -> tuple[list[str], str | None, list[str]]:
    """The app's own options, the subcommand given (one of `SUBCOMMANDS`; else None) and its arguments."""
    for index, arg in enumerate(argv):
        if arg in SUBCOMMANDS and (index == 0 or argv[index - 1] not in ("-f", "--folder", "--theme", "--skill")):
            return argv[:index], arg, argv[index + 1 :]
    return argv, None, []


def _run_subcommand(name: str, arguments: list[str], folder: Path | None) -> int:
    if name == "conversation":
        from anton_tui.conversation_cli import run as conversation

        return conversation(arguments, folder)
    if name == "ask":
        from anton_tui.ask import run as ask

        return ask(arguments, read_env_layers(project_dir=folder))
    if name in ("reflect", "recall"):
        from anton_tui.reflect_cli import run as reflection

        return reflection(name, arguments, folder)
    from anton_tui.memory_cli import run as memory

    return memory(arguments, folder)


def main(argv: list[str] | None = None) -> int:
    from anton_tui import gc_policy

    arguments = sys.argv[1:] if argv is None else list(argv)
    if arguments[:1] == ["serve"]:  # the app in browser tabs (anton_tui/serve/): a server, so no gc_policy.hold()
        from anton_tui.serve.command import run as serve

        return serve(arguments[1:])
    gc_policy.hold()
    parser = build_parser()
    argv, subcommand, sub_args = _split_subcommand(arguments)
    args = parser.parse_args(argv)
    if args.folder is not None and not args.folder.expanduser().is_dir():
        parser.error(f"--folder {args.folder}: no such folder")
    if subcommand is not None:
        try:
            return _run_subcommand(subcommand, sub_args, args.folder)
        except SettingsError as exc:
            print(f"anton-tui: {exc}", file=sys.stderr)
            return SETTINGS_ERROR_EXIT

    try:
        layers = read_env_layers(project_dir=args.folder)
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            from anton_tui.config import settings_from_layers

            settings_from_layers(layers)  # no terminal to show a bad setting's screen on: say it here
        from anton_tui.tui.launch import run_app

        return run_app(layers, theme=args.theme, demo=args.demo, resume=args.resume, skills=tuple(args.skill)) or 0
    except SettingsError as exc:
        print(f"anton-tui: {exc}", file=sys.stderr)
        return SETTINGS_ERROR_EXIT
