"""Reflection's costs: gathering a daily reflection's input from a million-line episode log, and recall over the
episodes plus 1,000 reflections and their conversation summaries.

Gathering: a million episode lines in 2,000 session files (written as Anton writes them, each file's time set to its
last line's, as a real log's are). A day's input (its episodes, the ACC's journal, the memory history) is gathered
for days of the log, and again after the log is cut to a tenth (the day's time should not follow the log's length)
and for one day made twenty times busier (the time should follow the day's lines). Target: under 2 s.

Recall: the same queries over the episode log alone (recall as it was) and with 1,000 daily reflections and 300
conversation summaries beside it (recall now), warm, median of the queries; and the first recall that reads the
documents. Run alone with ``python -m benchmarks.bench_reflection`` (``ANTON_BENCH_SCALE`` scales the recall part's
100,000 episode lines).
"""

from __future__ import annotations

import json
import os
import random
import statistics
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from benchmarks.memory_seed import TYPICAL_QUERIES, Prose, seed_episodes

LINES = 1_000_000
SESSIONS = 2_000
REFLECTIONS = 1_000
SUMMARIES = 300
TARGET_S = 2.0


def _set_mtimes(folder: Path) -> None:
    """Each session file's time is its last line's (the log as a real one looks)."""
    for path in folder.iterdir():
        with path.open("rb") as handle:
            handle.seek(max(0, path.stat().st_size - 4096))
            last = handle.read().splitlines()[-1]
        stamp = datetime.fromisoformat(json.loads(last)["ts"]).timestamp()
        os.utime(path, (stamp, stamp))


def _gather(folder: Path, day: date) -> tuple[float, int]:
    from anton_tui.memory.reflection.activity import gather_day
    from anton_tui.memory.reflection.periods import Period

    began = time.perf_counter()
    activity = gather_day(Period.containing("daily", day), UTC, episodes_dir=folder)
    return time.perf_counter() - began, int(activity.inputs["episode_lines"])


def _busy_day(folder: Path, day: date, lines: int, prose: Prose) -> None:
    """One more session on `day` with `lines` lines (a very busy day)."""
    began = datetime(day.year, day.month, day.day, 1, 0, tzinfo=UTC)
    session = began.strftime("%Y%m%d_%H%M%S")
    rows = [json.dumps({"ts": (began + timedelta(seconds=n * 3)).isoformat(), "session": session, "turn": n // 5 + 1,
                        "role": "user" if n % 5 == 0 else "assistant", "content": text, "meta": {}}) + "\n"
            for n, text in enumerate(prose.sentences(lines, 20))]  # fmt: skip
    path = folder / f"{session}.jsonl"
    path.write_text("".join(rows))
    stamp = (began + timedelta(seconds=lines * 3)).timestamp()
    os.utime(path, (stamp, stamp))


def gathering(scratch: Path) -> bool:
    prose = Prose(random.Random(11))
    folder = scratch / "gather" / "episodes"
    began = time.perf_counter()
    seed_episodes(folder, LINES, SESSIONS, prose)
    _set_mtimes(folder)
    print(f"seeded {LINES:,} episode lines in {SESSIONS:,} files in {time.perf_counter() - began:.1f} s")
    first = datetime(2024, 1, 1, tzinfo=UTC).date()
    days = [first + timedelta(days=n) for n in (30, 200, 400, 600, 740)]
    rows = [(day, *_gather(folder, day)) for day in days]
    for day, seconds, lines in rows:
        print(f"  a day of the 1M-line log ({day}): {lines:,} lines in {seconds * 1000:.0f} ms")
    worst = max(seconds for _day, seconds, _lines in rows)
    files = sorted(folder.iterdir())
    for path in files[SESSIONS // 10 :]:  # the log cut to its first tenth: the same early days, 100k lines
        path.unlink()
    cut = [(day, *_gather(folder, day)) for day in days[:1]]
    print(f"  the same day when the log holds {LINES // 10:,} lines: {cut[0][2]:,} lines in {cut[0][1] * 1000:.0f} ms"
          f" (in the 1M-line log: {rows[0][1] * 1000:.0f} ms)")  # fmt: skip
    busy = days[0]
    _busy_day(folder, busy, 20 * max(rows[0][2], 500), prose)
    seconds, lines = _gather(folder, busy)
    print(f"  that day made busier: {lines:,} lines in {seconds * 1000:.0f} ms")
    ok = worst < TARGET_S and seconds < TARGET_S
    print(f"gathering a day: worst {worst * 1000:.0f} ms over the 1M-line log (target < {TARGET_S:.0f} s): "
          f"{'ok' if ok else 'TOO SLOW'}")  # fmt: skip
    return ok


def _documents(project: Path, prose: Prose) -> None:
    reflections = project / ".anton" / "reflections" / "daily"
    reflections.mkdir(parents=True)
    day = date(2024, 1, 1)
    for n in range(REFLECTIONS):
        label = (day + timedelta(days=n)).isoformat()
        notes = "\n\n".join(prose.sentences(6, 25))
        (reflections / f"{label}.md").write_text(
            f"---\nperiod: daily\nlabel: '{label}'\nquiet: false\nstatistics:\n  user_messages: 12\n---\n"
            f"# Daily reflection: {label} — {prose.sentence(4)}\n\n{notes}\n"
        )
    summaries = project / ".anton" / "conversations"
    summaries.mkdir(parents=True)
    for n in range(SUMMARIES):
        session = (datetime(2024, 1, 1, 9, tzinfo=UTC) + timedelta(days=n * 3)).strftime("%Y%m%d_%H%M%S")
        body = "\n".join(f"- {text}" for text in prose.sentences(8, 12))
        (summaries / f"{session}.md").write_text(
            f"---\nsession: '{session}'\ntitle: {prose.sentence(4)}\nended: '2024-01-01T10:00:00+00:00'\n---\n"
            f"# {prose.sentence(4)}\n\n## Topics\n{body}\n"
        )


def _median_recall(episodic, queries: list[str]) -> float:
    times = []
    for query in queries:
        began = time.perf_counter()
        episodic.recall(query, max_results=20)
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def recall(scratch: Path) -> bool:
    from anton_tui.memory.episodes.documents import DocumentRecall
    from anton_tui.memory.episodes.store import EpisodicMemory

    scale = int(os.environ.get("ANTON_BENCH_SCALE", "1"))
    prose = Prose(random.Random(7))
    project = scratch / "recall"
    episodes = project / ".anton" / "episodes"
    seed_episodes(episodes, 100_000 * scale, 200 * scale, prose)
    _documents(project, prose)
    before = EpisodicMemory(episodes)
    before.index.refresh()
    queries = [*TYPICAL_QUERIES, prose.word_at(150), prose.word_at(900)] * 3
    _median_recall(before, queries[:3])  # warm
    alone = _median_recall(before, queries)
    documents = DocumentRecall(project / ".anton" / "conversations", project / ".anton" / "reflections")
    now = EpisodicMemory(episodes, documents=documents)
    began = time.perf_counter()
    now.recall(queries[0], max_results=20)
    first = time.perf_counter() - began
    with_documents = _median_recall(now, queries)
    extra = with_documents - alone
    print(f"recall over {100_000 * scale:,} episode lines: {alone * 1000:.1f} ms (median, warm)")
    print(f"  with {REFLECTIONS:,} reflections and {SUMMARIES} summaries: {with_documents * 1000:.1f} ms "
          f"({extra * 1000:+.1f} ms); the first recall, which reads them: {first * 1000:.0f} ms")  # fmt: skip
    before.close()
    now.close()
    return True


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="anton-bench-reflection-") as folder:
        scratch = Path(folder)
        ok = gathering(scratch)
        recall(scratch)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
