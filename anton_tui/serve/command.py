"""`anton-tui serve`: its options, the command each browser tab runs, and the start of the server.

The options are read and checked here without importing the server, so that `anton-tui serve --help` and a refused
option answer at once; textual-serve and aiohttp load only once serving starts.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from anton_tui.serve import SERVED_ENV, TOKEN_ENV, WITH_CLIPBOARD, WITHOUT_CLIPBOARD
from anton_tui.serve.plan import DEFAULT_HOST, DEFAULT_PORT, ServePlan, ServeUsageError, is_loopback, plan
from anton_tui.settings_sources import SETTINGS_ERROR_EXIT, SettingsError, read_env_layers

LISTEN_ERROR_EXIT = 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="anton-tui serve",
        description="Serve anton-tui to web browsers: each browser tab runs its own anton-tui on this machine.",
        epilog=f"Every address needs the token printed at start (or {TOKEN_ENV}), except a loopback one with "
        "--no-token. Stop with Ctrl+C.",
    )
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"address to listen on (default: {DEFAULT_HOST})")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port to listen on (default: {DEFAULT_PORT})")
    parser.add_argument(
        "-f", "--folder", metavar="DIR", type=Path, help="project folder the tabs work in (default: the current folder)"
    )
    parser.add_argument(
        "--public-url", metavar="URL",
        help="the address browsers use when a proxy or tunnel stands in front, e.g. https://anton.example.org",
    )  # fmt: skip
    parser.add_argument(
        "--no-token", action="store_true", help="let anyone who reaches the port in (only with a loopback --host)"
    )
    parser.add_argument("--theme", metavar="NAME", help="colour theme of the tabs, e.g. anton-dark")
    parser.add_argument("--demo", action="store_true", help="each tab replays the recorded demo session")
    return parser


def tab_command(folder: Path, *, demo: bool = False, theme: str | None = None) -> str:
    """The shell command textual-serve runs for each tab: this same anton-tui, on `folder`."""
    words = [sys.executable, "-m", "anton_tui", "--folder", str(folder)]
    words += ["--demo"] if demo else []
    words += ["--theme", theme] if theme else []
    return shlex.join(words)


def announcement(serve_plan: ServePlan, folder: Path) -> str:
    """What is printed once the port listens: the address to open, and what it gives."""
    lines = [
        "anton-tui is served. Open this address in a browser:",
        "",
        f"    {serve_plan.browser_url}",
        "",
        f"Each tab runs its own anton-tui on {folder}. Ctrl+C stops them all.",
    ]
    if serve_plan.token is None:
        lines.append("No token: anyone with an account on this machine can open it.")
    if not is_loopback(serve_plan.host) and not serve_plan.browser_url.startswith("https:"):
        lines.append(
            "Over plain http the token and all you type cross the network unencrypted: put https in front "
            "(--public-url https://…) or reach it through an SSH tunnel."
        )
    return "\n".join(lines)


def run(argv: list[str]) -> int:
    """`anton-tui serve ARGS`: serve until interrupted; the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    folder = (args.folder or Path.cwd()).expanduser().resolve()
    if not folder.is_dir():
        parser.error(f"--folder {args.folder}: no such folder")
    try:
        serve_plan = plan(
            host=args.host, port=args.port, public_url=args.public_url, no_token=args.no_token, environ=os.environ
        )
    except ServeUsageError as exc:
        parser.error(str(exc))
    try:
        from anton_tui.config import settings_from_layers

        settings_from_layers(read_env_layers(project_dir=folder))  # a bad setting is said here, not in every tab
    except SettingsError as exc:
        print(f"anton-tui: {exc}", file=sys.stderr)
        return SETTINGS_ERROR_EXIT

    os.environ.pop(TOKEN_ENV, None)  # the tabs' apps (and the code they run) have no use for it
    os.environ[SERVED_ENV] = WITH_CLIPBOARD if serve_plan.clipboard else WITHOUT_CLIPBOARD
    import asyncio

    from anton_tui.serve.server import AntonServer, ListenError

    server = AntonServer(
        serve_plan, tab_command(folder, demo=args.demo, theme=args.theme), title=f"anton-tui · {folder.name}"
    )
    try:
        asyncio.run(server.run(lambda: print(announcement(serve_plan, folder), flush=True)))
    except ListenError as exc:
        print(f"anton-tui serve: {exc.strerror}", file=sys.stderr)
        return LISTEN_ERROR_EXIT
    return 0
