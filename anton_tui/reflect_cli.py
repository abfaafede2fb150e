"""``anton-tui reflect`` and ``anton-tui recall``: reflection and recall from a shell, for cron, CI or a script.

``reflect`` writes the reflections that are due (the same chain the app writes in the background: days, ISO weeks,
months, catching up at most 35 days) and submits their proposals to the review, as the settings say
(`ANTON_REVIEW_LEVEL`, `ANTON_REVIEW_TAINTED`, `ANTON_REVIEW_MAX_PER_DAY`); what the review holds waits for the user
in the app. ``--json`` prints one object: `written` (paths), `quiet` (the periods below the activity threshold),
`proposals` (each with `id`, `kind`, `target`, `status`, `why`, `reflection`) and `failed`. The exit code is 1 when a
period could not be written (no model, a model error: it is tried again next time), 2 for a bad setting.

``recall QUERY`` searches what the agent's own `recall` searches: the conversation summaries and reflections, then
the turns of the episode log, best first. It needs no model and no valid settings beyond the folders.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from datetime import date
from pathlib import Path
from typing import Any

from anton_tui.memory.reflection.periods import KINDS


def build_reflect_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="anton-tui reflect",
        description="Write the daily, weekly and monthly reflections that are due, and review what they propose.",
    )
    parser.add_argument("--period", choices=KINDS, help="only this kind (with the reflections below it it needs)")
    parser.add_argument("--force", action="store_true",
                        help="write the last ended period again, even when written or quiet")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="one JSON object, for scripts")
    parser.add_argument("--date", type=date.fromisoformat, metavar="YYYY-MM-DD",
                        help="reflect as on this day: the periods that ended before it (default: today)")  # fmt: skip
    return parser


def build_recall_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="anton-tui recall",
        description="Search past conversations, their summaries and the reflections of this project.",
    )
    parser.add_argument("query", nargs="+", help="the words to look for")
    parser.add_argument("--json", action="store_true", help="one JSON array, for scripts")
    parser.add_argument("--max", type=int, default=20, metavar="N", help="at most N exchanges (default 20)")
    parser.add_argument("--days", type=int, metavar="N", help="only the last N days")
    return parser


def run(command: str, argv: list[str], folder: Path | None) -> int:
    if command == "recall":
        return _recall(build_recall_parser().parse_args(argv), folder)
    return _reflect(build_reflect_parser().parse_args(argv), folder)


def _reflect(args: argparse.Namespace, folder: Path | None) -> int:
    from anton_tui.agent.factory import make_redactor
    from anton_tui.config import load_settings
    from anton_tui.memory.engrams.cortex import Cortex
    from anton_tui.memory.reflection.wiring import ReflectionParts
    from anton_tui.memory.stores import MemoryStores

    settings = load_settings(folder)
    stores = MemoryStores.from_settings(settings)
    if stores.recorder is not None:
        stores.recorder.start()
    cortex = Cortex(stores.global_hc, stores.project_hc, mode=settings.effective_memory_mode,
                    managed_hc=stores.managed, shared=stores.shared)  # fmt: skip
    cortex.redactor = make_redactor(settings)
    llm: Any = None
    if settings.has_api_key("planning"):
        from anton_tui.llm.client import LLMClient

        llm = LLMClient.from_settings(settings)
    parts = ReflectionParts.build(stores, cortex, settings, lambda: llm)
    kinds = (args.period,) if args.period else KINDS

    async def reflect() -> Any:
        try:
            return await parts.reflector.run(kinds, force=args.force, today=args.date)
        finally:
            if llm is not None:
                await llm.aclose()

    try:
        report = asyncio.run(reflect())
    finally:
        if stores.recorder is not None:
            stores.recorder.flush()
    if args.json:
        print(json.dumps(report.to_json(), ensure_ascii=False))
    else:
        _say(report)
    return 1 if report.failed else 0


def _say(report: Any) -> None:
    for path in report.written:
        print(f"Wrote {path}")
    for label in report.quiet:
        print(f"Quiet: {label} (a one-line note, no model call)")
    for outcome in report.proposals:
        print(f"Proposal {outcome.id} ({outcome.kind} → {outcome.target}): {outcome.status}: {outcome.why}")
    for problem in report.failed:
        print(f"Not written: {problem}", file=sys.stderr)
    if not (report.written or report.quiet or report.failed):
        print("Nothing was due: every period that ended has its reflection.")


def _recall(args: argparse.Namespace, folder: Path | None) -> int:
    from anton_tui.memory.episodes.documents import DocumentRecall
    from anton_tui.memory.episodes.record import DOCUMENT_KINDS, format_recall
    from anton_tui.memory.episodes.store import EpisodicMemory
    from anton_tui.paths import AntonPaths
    from anton_tui.settings_sources import read_env_layers

    layers = read_env_layers(project_dir=folder)  # only the folders are needed: no validation of the rest
    paths = AntonPaths(Path(layers.home), Path(layers.project_dir))
    episodic = EpisodicMemory(paths.episodes, documents=DocumentRecall(paths.conversations, paths.reflections))
    query = " ".join(args.query)
    try:
        episodes = episodic.recall(query, max_results=max(args.max, 0), days_back=args.days)
    finally:
        episodic.close()
    if not args.json:
        print(format_recall(episodes, query))
        return 0
    found = []
    for episode in episodes:
        item: dict[str, Any] = {"source": episode.role if episode.role in DOCUMENT_KINDS else "episode",
                                "ts": episode.ts, "session": episode.session, "turn": episode.turn,
                                "role": episode.role, "content": episode.content}  # fmt: skip
        if episode.role in DOCUMENT_KINDS:
            item["path"] = str(episode.meta.get("source", ""))
            item["title"] = str(episode.meta.get("title", ""))
        if episode.meta.get("trust") == "untrusted":
            item["untrusted"] = True
        found.append(item)
    print(json.dumps(found, ensure_ascii=False))
    return 0
