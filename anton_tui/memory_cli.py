"""``anton-tui memory log|show|undo``: the memory history from a shell, without the full-screen app.

Runs on the same engine as the app (`memory.history_ops` over the project's `MemoryStores`), with no Textual and no
model. Before answering it records whatever changed on disk since the last recorded change, as "external".
``log`` loads only the history's recorder (not the memory stores), and reads the list of changes kept beside each
repository (`memory.history_index`), so listing 10,000 changes in a fresh process takes a fraction of a second.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="anton-tui memory", description="The history of memory changes.")
    sub = parser.add_subparsers(dest="action", required=True)
    log = sub.add_parser("log", help="list the changes, newest first")
    log.add_argument("--scope", choices=("global", "project"), help="only this scope")
    log.add_argument("--json", action="store_true", help="one JSON array, for scripts")
    log.add_argument("-n", "--limit", type=int, metavar="N", help="at most N changes")
    show = sub.add_parser("show", help="one change and its diff")
    show.add_argument("change", help="the change's id (at least 4 characters)")
    undo = sub.add_parser("undo", help="undo a change by a new change")
    undo.add_argument("change", help="the change's id (at least 4 characters)")
    return parser


def _paths(folder: Path | None) -> Any:
    from anton_tui.paths import AntonPaths
    from anton_tui.settings_sources import read_env_layers

    layers = read_env_layers(project_dir=folder)  # only the two folders are needed: no validation of the rest
    return AntonPaths(Path(layers.home), Path(layers.project_dir))


def _stores(folder: Path | None) -> Any:
    from anton_tui.memory.stores import MemoryStores

    stores = MemoryStores.from_paths(_paths(folder))
    stores.recorder.start()  # what changed while nothing was watching
    return stores


def _line(change: Any) -> str:
    from anton_tui.memory.history import format_time

    return f"{change.short}  {format_time(change.time)}  {change.scope:<7}  {change.producer:<12}  {change.summary}"


def _log(args: argparse.Namespace, folder: Path | None) -> int:
    """List the changes with the recorder alone: no memory stores, and no git library when nothing changed."""
    from anton_tui.memory.history_recorder import MemoryRecorder

    recorder = MemoryRecorder.from_paths(_paths(folder))
    recorder.start()  # what changed while nothing was watching
    changes = recorder.log(args.scope, args.limit)
    if args.json:
        import msgspec

        sys.stdout.buffer.write(msgspec.json.encode(changes) + b"\n")
    elif not changes:
        print("No memory changes recorded yet.")
    else:
        sys.stdout.write("".join(_line(change) + "\n" for change in changes))
    return 0


def run(argv: list[str], folder: Path | None = None) -> int:
    from anton_tui.memory.history import HistoryError

    args = build_parser().parse_args(argv)
    if args.action == "log":
        try:
            return _log(args, folder)
        except HistoryError as exc:
            print(f"anton-tui memory: {exc}", file=sys.stderr)
            return 1
    from anton_tui.memory import history_ops

    stores = _stores(folder)
    try:
        if args.action == "show":
            change, diff = history_ops.show(stores, args.change)
            print(f"change {change.id}\n{_line(change)}")
            for key in ("session", "turn", "why", "trust"):
                if getattr(change, key) not in ("", None):
                    print(f"{key.capitalize()}: {getattr(change, key)}")
            print()
            sys.stdout.write(diff)
        else:
            outcome = history_ops.undo(stores, args.change)
            if not outcome.done:
                print(f"Change {outcome.target.short} cannot be undone automatically; nothing was changed.")
                for conflict in outcome.conflicts:
                    print(conflict.describe())
                return 1
            if outcome.change is None:
                print(f"Nothing to undo: memory already reads as before change {outcome.target.short}.")
            else:
                print(f"Undid {outcome.target.short} by a new change:\n{_line(outcome.change)}")
    except HistoryError as exc:
        print(f"anton-tui memory: {exc}", file=sys.stderr)
        return 1
    finally:
        stores.recorder.flush()
    return 0
