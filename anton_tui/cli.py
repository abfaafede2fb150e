"""Command-line entry point: parses arguments, then starts the full-screen app (imported only when needed)."""

from __future__ import annotations

import argparse

from anton_tui import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="anton-tui", description="A full-screen terminal app for the Anton agent.")
    parser.add_argument("--version", action="version", version=f"anton-tui {__version__}")
    return parser


def main(argv: list[str] | None = None) -> int:
    build_parser().parse_args(argv)
    return 0
