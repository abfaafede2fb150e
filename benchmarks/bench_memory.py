"""How fast memory answers when it is big: prompt context, skill list and episode recall on a well-used home.

Seeds a throw-away home and project (never the user's own) with 1,000 skills, 5,000 lessons, 500 rules and
100,000 episode lines over 200 sessions, written straight in the on-disk formats anton-agent uses, then times
the calls the app makes on every turn. Run alone with ``python -m benchmarks.bench_memory``.
"""

from __future__ import annotations

import itertools
import json
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path

SKILLS = 1_000
LESSONS = 5_000
RULES = 500
EPISODE_LINES = 100_000
SESSIONS = 200
WARM_REPEATS = 30

TOPICS = ["api", "pandas", "scratchpad", "plotting", "sql", "csv", "auth", "billing", "geo", "weather"]
DOMAIN_WORDS = (
    "price revenue customer invoice chart latency retry pagination token cache region forecast schema "
    "dataframe merge timeout quota report dashboard export import column missing duplicate currency"
).split()
TYPICAL_QUERIES = ["coingecko", "invoice", "rate limit", "dashboard export", "timeout"]
VOCABULARY = 4_000


class _Prose:
    """Word soup with a natural (Zipf) word frequency: a few words everywhere, most words rare.

    The domain words sit at ranks 100-600, so each appears in roughly 0.5-2% of lines, as a topic word would.
    """

    def __init__(self, rng: random.Random) -> None:
        syllables = ["ka", "lo", "mi", "ne", "ru", "ta", "po", "se", "di", "va", "zu", "ho"]
        words = sorted({"".join(rng.choices(syllables, k=rng.randint(2, 4))) for _ in range(20_000)})
        rng.shuffle(words)
        vocab = words[:VOCABULARY]
        for i, word in enumerate(DOMAIN_WORDS):
            vocab[100 + i * 20] = word
        self.common_word = vocab[0]
        self._rng, self._vocab = rng, vocab
        self._cumulative = list(itertools.accumulate(1 / rank for rank in range(1, len(vocab) + 1)))

    def sentence(self, n: int = 9) -> str:
        return " ".join(self._rng.choices(self._vocab, cum_weights=self._cumulative, k=n))


def _seed_rules(path: Path, count: int, prose: _Prose) -> None:
    sections: dict[str, list[str]] = {"Always": [], "Never": [], "When": []}
    for i in range(count):
        heading = ("Always", "Never", "When")[i % 3]
        text = f"{'If ' if heading == 'When' else ''}{prose.sentence()} (rule {i})"
        if heading == "When" and i % 9 == 2:
            text += " in the scratchpad"
        confidence = ("high", "medium", "low")[i % 3]
        sections[heading].append(f"- {text} <!-- confidence:{confidence} source:llm ts:2026-01-{i % 28 + 1:02d} -->\n")
    parts = ["# Rules\n"]
    for heading, lines in sections.items():
        parts.append(f"\n## {heading}\n")
        parts.extend(lines)
    path.write_text("".join(parts))


def _seed_lessons(path: Path, count: int, prose: _Prose) -> None:
    lines = ["# Lessons\n"]
    for i in range(count):
        topic = TOPICS[i % len(TOPICS)]
        lines.append(f"- {prose.sentence(14)} (lesson {i}) <!-- topic:{topic} ts:2026-02-{i % 28 + 1:02d} -->\n")
    path.write_text("".join(lines))


def _seed_skills(root: Path, count: int) -> None:
    for i in range(count):
        if i % 3:  # anton-agent's multi-stage folder
            folder = root / f"skill_{i:04d}"
            folder.mkdir(parents=True)
            meta = {
                "label": folder.name,
                "name": f"Skill {i}",
                "description": f"Does task number {i}",
                "when_to_use": f"the user asks for task {i}",
                "created_at": "2026-03-01T10:00:00+00:00",
                "provenance": "manual",
                "stage_1_present": True,
                "stage_2_present": False,
                "stage_3_present": False,
            }
            (folder / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
            (folder / "declarative.md").write_text(f"1. Load the data\n2. Do task {i}\n3. Report")
        else:  # SKILL.md folder
            folder = root / f"skill-md-{i:04d}"
            folder.mkdir(parents=True)
            (folder / "SKILL.md").write_text(
                f"---\nname: {folder.name}\ndescription: Does task number {i}. Use when the user asks for task {i}\n"
                f"metadata:\n  display_name: Skill {i}\n  provenance: manual\n  created_at: '2026-03-01T10:00:00+00:00'\n"
                f"---\n1. Load the data\n2. Do task {i}\n"
            )


def _seed_episodes(folder: Path, lines_total: int, sessions: int, prose: _Prose) -> None:
    folder.mkdir(parents=True)
    per_session = lines_total // sessions
    roles = ("user", "assistant", "tool_call", "tool_result", "scratchpad")
    start = datetime(2026, 1, 1, 9, 0, tzinfo=timezone.utc)
    for s in range(sessions):
        began = start + timedelta(days=s, minutes=s)
        session = began.strftime("%Y%m%d_%H%M%S")
        rows = []
        for n in range(per_session):
            turn, role = n // len(roles) + 1, roles[n % len(roles)]
            content = prose.sentence(20)
            if n % 500 == 123:
                content += " CoinGecko rate limit hit"
            meta = {"tool": "scratchpad"} if role in ("tool_call", "tool_result") else {}
            ts = (began + timedelta(seconds=n * 7)).isoformat()
            episode = {"ts": ts, "session": session, "turn": turn, "role": role, "content": content, "meta": meta}
            rows.append(json.dumps(episode, ensure_ascii=False) + "\n")
        (folder / f"{session}.jsonl").write_text("".join(rows))


def seed(home: Path, project: Path) -> _Prose:
    prose = _Prose(random.Random(7))
    global_memory, project_memory = home / "memory", project / ".anton" / "memory"
    global_memory.mkdir(parents=True)
    project_memory.mkdir(parents=True)
    (global_memory / "profile.md").write_text("# Profile\n" + "".join(f"- Fact {i}: value {i}\n" for i in range(12)))
    for folder in (global_memory, project_memory):
        _seed_rules(folder / "rules.md", RULES // 2, prose)
        _seed_lessons(folder / "lessons.md", LESSONS // 2, prose)
    _seed_skills(home / "skills", SKILLS)
    _seed_episodes(project / ".anton" / "episodes", EPISODE_LINES, SESSIONS, prose)
    return prose


def _ms(call: Callable[[], object]) -> float:
    began = time.perf_counter()
    call()
    return (time.perf_counter() - began) * 1000


def _warm_median(call: Callable[[], object], repeats: int = WARM_REPEATS) -> float:
    return statistics.median(_ms(call) for _ in range(repeats))


def report(name: str, value_ms: float, target_ms: float | None = None) -> None:
    target = f"target < {target_ms:g} ms" if target_ms is not None else "no target"
    verdict = " MISSED" if target_ms is not None and value_ms >= target_ms else ""
    print(f"{name}: {value_ms:.2f} ms ({target}){verdict}", flush=True)


def main() -> None:
    from anton_tui.memory.cortex import Cortex
    from anton_tui.memory.episodes import EpisodicMemory
    from anton_tui.memory.hippocampus import Hippocampus
    from anton_tui.memory.skills import SkillStore

    with tempfile.TemporaryDirectory(prefix="anton-bench-") as scratch:
        home, project = Path(scratch) / "home", Path(scratch) / "project"
        began = time.perf_counter()
        prose = seed(home, project)
        print(
            f"memory seed ({SKILLS} skills, {LESSONS} lessons, {RULES} rules, {EPISODE_LINES} episode lines in "
            f"{SESSIONS} sessions): {(time.perf_counter() - began) * 1000:.0f} ms (setup, no target)",
            flush=True,
        )

        cortex = Cortex(Hippocampus(home / "memory", scope="global"), Hippocampus(project / ".anton" / "memory"))
        report("memory context, first call", _ms(cortex.build_memory_context))
        report("memory context, warm median", _warm_median(cortex.build_memory_context), 10)

        skills = SkillStore(home / "skills")
        report("skill summaries, first call", _ms(skills.list_summaries))
        report("skill summaries, warm median", _warm_median(skills.list_summaries), 20)

        episodes = EpisodicMemory(project / ".anton" / "episodes")
        report("recall, first call (builds the index)", _ms(lambda: episodes.recall(TYPICAL_QUERIES[0])))
        queries = itertools.cycle(TYPICAL_QUERIES)
        report("recall, warm median", _warm_median(lambda: episodes.recall(next(queries))), 30)
        common = prose.common_word
        report(f"recall of the commonest word ({common!r}), warm median", _warm_median(lambda: episodes.recall(common), 5))
        hits = len(episodes.recall("coingecko"))
        print(f"recall hits for 'coingecko': {hits} episodes (sanity check, no target)", flush=True)
        episodes.close()


if __name__ == "__main__":
    main()
