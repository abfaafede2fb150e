"""``anton-tui conversation list|show|rename|delete|restore|fork|export``: the project's saved conversations, from a
shell.

Works on the same files as the app, through the same `ConversationShelf`, with no model and no Textual. ``--json``
prints one JSON document for scripts. Exit status: 0 when done, 1 when the conversation named is not there or cannot
be read, 2 for a usage problem (among them ``delete`` without ``--yes`` and no terminal to ask on).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from anton_tui.agent.conversation_shelf import ConversationShelf, ConversationView
    from anton_tui.agent.history_store import SavedSession

USAGE_EXIT = 2
PROG = "anton-tui conversation"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="The project's saved conversations.")
    sub = parser.add_subparsers(dest="action", required=True)
    listing = sub.add_parser("list", help="the saved conversations, newest first, forks under their parent")
    listing.add_argument("--json", action="store_true", help="one JSON array, for scripts")
    listing.add_argument("--trash", action="store_true", help="the deleted ones, kept 30 days")
    show = sub.add_parser("show", help="one conversation: its messages, summary and ledgers")
    show.add_argument("id")
    show.add_argument("--json", action="store_true", help="one JSON object, ledgers under `ledger`")
    rename = sub.add_parser("rename", help='give a conversation a title ("" takes it away)')
    rename.add_argument("id")
    rename.add_argument("title", nargs="+")
    delete = sub.add_parser("delete", help="move a conversation to the trash (kept 30 days)")
    delete.add_argument("id")
    delete.add_argument("--yes", action="store_true", help="do not ask first")
    restore = sub.add_parser("restore", help="bring a deleted conversation back from the trash")
    restore.add_argument("id")
    fork = sub.add_parser("fork", help="a new conversation holding this one up to one of your messages")
    fork.add_argument("id")
    fork.add_argument("--at", type=int, metavar="N", help="your Nth message, 1-based (default: the last)")
    export = sub.add_parser("export", help="the conversation as Markdown")
    export.add_argument("id")
    export.add_argument("-o", "--output", type=Path, metavar="FILE", help="write it here instead of to stdout")
    return parser


def _shelf(folder: Path | None) -> ConversationShelf:
    from anton_tui.agent.conversation_shelf import ConversationShelf
    from anton_tui.paths import AntonPaths
    from anton_tui.settings_sources import read_env_layers

    layers = read_env_layers(project_dir=folder)  # only the folders are needed: no validation of the rest
    return ConversationShelf(AntonPaths(Path(layers.home), Path(layers.project_dir)).episodes)


def row_json(row: SavedSession, depth: int = 0) -> dict[str, Any]:
    return {
        "id": row.session_id,
        "title": row.title,
        "preview": row.preview,
        "date": row.date,
        "started": row.started.isoformat() if row.started else None,
        "turns": row.turns,
        "model": row.model,
        "source": row.source,
        "broken": row.broken,
        "parent": row.parent,
        "forked_at": row.forked_at,
        "depth": depth,
    }


def view_json(view: ConversationView) -> dict[str, Any]:
    from anton_tui.agent.ledger import merged

    messages = []
    number = 0
    for entry in view.entries:
        item: dict[str, Any] = {"kind": entry.kind, "text": entry.text}
        if entry.kind == "user":
            number += 1
            item["number"] = number
        if entry.kind == "tool":
            item |= {"tool": entry.tool, "input": entry.input, "success": entry.success}
        messages.append(item)
    return {
        **row_json(view.row),
        "summary": view.summary,
        "messages": messages,
        "ledgers": len(view.ledgers),
        "ledger": merged(view.ledgers),
    }


def _title(row: SavedSession) -> str:
    if row.source == "broken":
        return f"broken: {row.broken}"
    return row.title or row.preview or "(no message)"


def _list(shelf: ConversationShelf, args: argparse.Namespace) -> int:
    if args.trash:
        items = shelf.trash.items()
        if args.json:
            print(
                json.dumps(
                    [
                        {
                            "id": item.session_id,
                            "deleted": item.deleted.isoformat(),
                            "expires": item.expires.isoformat(),
                            "files": list(item.files),
                        }
                        for item in items
                    ]
                )
            )
        elif not items:
            print("The trash is empty.")
        for item in [] if args.json else items:
            print(f"{item.session_id}  deleted {item.deleted:%Y-%m-%d %H:%M}, kept until {item.expires:%Y-%m-%d}")
        return 0  # fmt: skip
    tree = shelf.tree()
    if args.json:
        print(json.dumps([row_json(row, depth) for row, depth in tree], ensure_ascii=False))
        return 0
    if not tree:
        print("No saved conversations in this project.")
    for row, depth in tree:
        branch = "  " * (depth - 1) + "└ " if depth else ""
        fork = f" (fork at message {row.forked_at})" if row.parent and row.forked_at else ""
        print(f"{row.session_id}  {row.date:<16}  {row.turns:>4} turns  {branch}{_title(row)}{fork}")
    return 0


def _show(shelf: ConversationShelf, args: argparse.Namespace) -> int:
    view = shelf.show(args.id)
    if args.json:
        print(json.dumps(view_json(view), ensure_ascii=False, default=str))
        return 0
    row = view.row
    print(f"{row.session_id}  {row.date}  {row.turns} turns  {_title(row)}")
    if row.parent:
        print(f"forked from {row.parent} at message {row.forked_at}")
    if view.ledgers:
        folded = sum(len(ledger.turns) for ledger in view.ledgers)
        print(f"{len(view.ledgers)} ledgers of summarised turns ({folded} turns): "
              f"`{PROG} export {row.session_id}` shows them")  # fmt: skip
    if view.summary is not None:
        print("\n[summary of earlier turns]\n" + view.summary.strip())
    number = 0
    for entry in view.entries:
        if entry.kind == "user":
            number += 1
            print(f"\n[you, message {number}]\n{entry.text.strip()}")
        elif entry.kind == "answer":
            print(f"\n[anton]\n{entry.text.strip()}")
        elif entry.kind in ("goal", "cancelled"):
            print(f"\n[{entry.kind}] {entry.text}")
        elif entry.kind == "tool":
            status = " (cancelled)" if entry.cancelled else "" if entry.success else " (failed)"
            print(f"\n[tool {entry.tool}{status}] {json.dumps(entry.input, ensure_ascii=False, default=str)}")
    return 0


def _delete(shelf: ConversationShelf, args: argparse.Namespace) -> int:
    row = shelf.row(args.id)
    if not args.yes:
        if not sys.stdin.isatty():
            print(f"{PROG}: delete asks before it deletes, and there is no terminal to ask on; add --yes.",
                  file=sys.stderr)  # fmt: skip
            return USAGE_EXIT
        answer = input(f"Delete {row.session_id} ({_title(row)[:60]})? It stays in the trash 30 days. [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("Nothing was deleted.")
            return 0
    trashed = shelf.delete(args.id)
    print(f"Moved {args.id} to the trash, kept until {trashed.expires:%Y-%m-%d}; `{PROG} restore {args.id}` "
          "brings it back.")  # fmt: skip
    return 0


def run(argv: list[str], folder: Path | None = None) -> int:
    from anton_tui.agent.history_store import HistoryBroken

    args = build_parser().parse_args(argv)
    shelf = _shelf(folder)
    try:
        if args.action == "list":
            return _list(shelf, args)
        if args.action == "show":
            return _show(shelf, args)
        if args.action == "rename":
            about = shelf.rename(args.id, " ".join(args.title))
            print(f"{args.id} is now titled {about.title!r}." if about.title else f"{args.id} has no title now.")
        elif args.action == "delete":
            return _delete(shelf, args)
        elif args.action == "restore":
            shelf.restore(args.id)
            print(f"Restored {args.id}.")
        elif args.action == "fork":
            print(shelf.fork(args.id, args.at).session_id)
        elif args.action == "export":
            text = shelf.export(args.id)
            if args.output is None:
                sys.stdout.write(text)
            else:
                args.output.write_text(text, encoding="utf-8")
                print(f"Wrote {args.output}.", file=sys.stderr)
    except (LookupError, FileExistsError, HistoryBroken, ValueError, OSError) as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        usage = isinstance(exc, ValueError) and not isinstance(exc, HistoryBroken)  # a bad id or message number
        return USAGE_EXIT if usage else 1
    return 0
