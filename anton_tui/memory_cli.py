"""``anton-tui memory log|show|undo|remote|sync|resolve``: the memory history and its sharing, from a shell;
``anton-tui memory context "MESSAGE"``: what a new conversation's first turn with that message would be given.

Runs on the same engine as the app (`memory.history_ops` and `memory.sync` over the project's `MemoryStores`), with
no Textual and no model. Before answering it records whatever changed on disk since the last recorded change, as
"external". ``log`` loads only the history's recorder (not the memory stores), and reads the list of changes kept
beside each repository (`memory.history_index`), so listing 10,000 changes in a fresh process takes a fraction of a
second.
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
    remote = sub.add_parser("remote", help="share a memory scope through a git remote")
    remote_sub = remote.add_subparsers(dest="remote_action", required=True)
    add = remote_sub.add_parser("add", help="share a scope through a git URL (a bare folder, ssh, https)")
    add.add_argument("scope", choices=("global", "project"))
    add.add_argument("url")
    add.add_argument("--without-profile", action="store_true",
                     help="keep profile.md on this machine: share only the rules and lessons")  # fmt: skip
    remote_sub.add_parser("list", help="the scopes that are shared, and where")
    remove = remote_sub.add_parser("remove", help="stop sharing a scope (its memory stays)")
    remove.add_argument("scope", choices=("global", "project"))
    sync = sub.add_parser("sync", help="fetch, merge by entries, push (every shared scope by default)")
    sync.add_argument("scope", nargs="?", choices=("global", "project"))
    sync.add_argument("--keep-local", action="store_true",
                      help="keep the entries that hold a secret on this machine only (never pushed), share the rest")  # fmt: skip
    resolve = sub.add_parser("resolve", help="finish a sync that waits for a choice")
    resolve.add_argument("scope", choices=("global", "project"))
    resolve.add_argument("side", choices=("mine", "theirs"), help="keep this machine's version, or take theirs")
    context = sub.add_parser("context", help="what the first turn of a new conversation with MESSAGE would be given")
    context.add_argument("message")
    context.add_argument("--json", action="store_true", help="one JSON object, for scripts")
    context.add_argument("--skill", action="append", default=[], metavar="NAME", help="preload a skill (repeatable)")
    return parser


def _context(args: argparse.Namespace, folder: Path | None) -> int:
    """`memory context`: the memory, memory files and preloaded skills the first request would carry."""
    import json

    from anton_tui.agent.memory_context import describe, first_turn_context
    from anton_tui.config import load_settings

    try:
        found = first_turn_context(load_settings(project_dir=folder), args.message, tuple(args.skill))
    except ValueError as exc:
        print(f"anton-tui memory context: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(found, ensure_ascii=False) if args.json else describe(found))
    return 0


def _paths(folder: Path | None) -> Any:
    from anton_tui.paths import AntonPaths
    from anton_tui.settings_sources import read_env_layers

    layers = read_env_layers(project_dir=folder)  # only the folders are needed: no validation of the rest
    return AntonPaths(Path(layers.home), Path(layers.project_dir)), layers


def _stores(folder: Path | None) -> Any:
    from anton_tui.memory.stores import MemoryStores
    from anton_tui.paths import managed_dir

    paths, layers = _paths(folder)
    managed = next((v["ANTON_MANAGED_MEMORY"] for _w, v in reversed(layers.layers) if v.get("ANTON_MANAGED_MEMORY")),
                   None)  # fmt: skip
    stores = MemoryStores.from_paths(paths, managed_dir=managed_dir(managed))
    if stores.recorder is not None:
        stores.recorder.start()  # what changed while nothing was watching
    return stores


def _line(change: Any) -> str:
    from anton_tui.memory.history.repo import format_time

    return f"{change.short}  {format_time(change.time)}  {change.scope:<7}  {change.producer:<12}  {change.summary}"


def _log(args: argparse.Namespace, folder: Path | None) -> int:
    """List the changes with the recorder alone: no memory stores, and no git library when nothing changed."""
    from anton_tui.memory.history.recorder import MemoryRecorder

    recorder = MemoryRecorder.from_paths(_paths(folder)[0])
    try:
        recorder.start()  # what changed while nothing was watching
        changes = recorder.log(args.scope, args.limit)
    finally:
        recorder.close()
    if args.json:
        import msgspec

        sys.stdout.buffer.write(msgspec.json.encode(changes) + b"\n")
    elif not changes:
        print("No memory changes recorded yet.")
    else:
        sys.stdout.write("".join(_line(change) + "\n" for change in changes))
    return 0


def run(argv: list[str], folder: Path | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.action == "context":
        return _context(args, folder)
    try:
        return _log(args, folder) if args.action == "log" else _act(args, folder)
    except Exception as exc:
        message = _one_line(exc)
        if message is None:
            raise
        print(f"anton-tui memory: {message}", file=sys.stderr)
        return 1


def _one_line(exc: Exception) -> str | None:
    """What went wrong, in one line, for the failures a user can meet (a broken history, a home that cannot be
    written, a full disk); None for anything else, which is a bug and shown as one."""
    from anton_tui.memory.engrams.engram import MemoryFileError
    from anton_tui.memory.history.writer import HistoryError, describe
    from anton_tui.memory.sync.syncer import SyncError

    if isinstance(exc, (HistoryError, SyncError, MemoryFileError)):
        return str(exc)
    if isinstance(exc, OSError):
        return f"memory cannot be changed here: {describe(exc)}"
    return None


def _act(args: argparse.Namespace, folder: Path | None) -> int:
    from anton_tui.memory.history import ops as history_ops

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
        elif args.action in ("remote", "sync", "resolve"):
            return _sharing(stores, args)
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
    finally:
        stores.recorder.close()  # everything committed, and the repositories' pack files closed before Python exits
    return 0


def _sharing(stores: Any, args: argparse.Namespace) -> int:
    from anton_tui.memory.sync import syncer as sync

    if args.action == "remote":
        if args.remote_action == "add":
            url = sync.add_remote(stores, args.scope, args.url, profile=not args.without_profile)
            files = ", ".join(sync.shared_file_names(stores, args.scope))
            print(f"The {args.scope} memory is shared through {url}; `anton-tui memory sync` syncs it.")
            print(f"Files it shares: {files}.")
        elif args.remote_action == "remove":
            said = "no longer shared" if sync.remove_remote(stores, args.scope) else "was not shared"
            print(f"The {args.scope} memory {said}.")
        else:
            shared = sync.shared_scopes(stores)
            for scope, url in shared.items():
                print(f"{scope:<8} {url} ({', '.join(sync.shared_file_names(stores, scope))})")
            if stores.managed_dir is not None:
                print(f"{'managed':<8} {stores.managed_dir} (read-only)")
            if not shared and stores.managed_dir is None:
                print("No memory is shared: `anton-tui memory remote add <scope> <url>` shares one.")
        return 0
    if args.action == "resolve":
        outcomes = [sync.resolve(stores, args.scope, "ours" if args.side == "mine" else "theirs")]
    else:
        scopes = [args.scope] if args.scope else list(sync.shared_scopes(stores))
        if not scopes and stores.managed_dir is None:
            print("No memory is shared: `anton-tui memory remote add <scope> <url>` shares one.")
            return 1
        outcomes = [sync.sync(stores, scope) for scope in scopes]
        if args.keep_local:
            outcomes = [_kept_local(stores, outcome) for outcome in outcomes]
        managed = stores.managed_dir
        if args.scope is None and managed is not None and (managed / ".git").exists():
            outcomes.append(sync.managed_pull(managed))
    for outcome in outcomes:
        print(f"{outcome.scope}: {outcome.status}: {outcome.message}")
        for note in outcome.notes:
            print(f"  {note}")
        for conflict in outcome.conflicts:
            print("  " + conflict.describe().replace("\n", "\n  "))
        for hit in outcome.secrets:
            print(f"  {hit.describe()}")
        if outcome.conflicts:
            print(f"  `anton-tui memory resolve {outcome.scope} mine|theirs` decides them.")
        if outcome.secrets:
            print(f"  Edit the entry in {_memory_folder(stores, outcome.scope)}, or keep it on this machine only: "
                  f"`anton-tui memory sync {outcome.scope} --keep-local`.")  # fmt: skip
    return 0 if all(o.ok for o in outcomes) else 1


def _kept_local(stores: Any, outcome: Any) -> Any:
    """After a sync that held entries back for their secrets: note them as this machine's own and sync again."""
    from anton_tui.memory.sync import syncer as sync

    entries = [hit.entry_id for hit in outcome.secrets if hit.entry_id]
    if not entries:
        return outcome
    sync.keep_local(stores, outcome.scope, entries)
    print(f"{outcome.scope}: {len(entries)} entr{'y' if len(entries) == 1 else 'ies'} kept on this machine only.")
    return sync.sync(stores, outcome.scope)


def _memory_folder(stores: Any, scope: str) -> Path:
    return Path(stores.paths.global_memory if scope == "global" else stores.paths.project_memory)
