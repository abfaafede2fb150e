"""A well-used home for the benchmarks, written straight in the on-disk formats anton-agent uses.

`Scale` 1 is 1,000 skills, 5,000 lessons, 500 rules and 100,000 episode lines over 200 sessions; scale 10 is ten
times each (a million lines: about two years of daily use). Episode lines are written as JSONL text directly, so
seeding a million of them takes seconds, not minutes.
"""

from __future__ import annotations

import itertools
import json
import random
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

TOPICS = ["api", "pandas", "scratchpad", "plotting", "sql", "csv", "auth", "billing", "geo", "weather"]
DOMAIN_WORDS = (
    "price revenue customer invoice chart latency retry pagination token cache region forecast schema "
    "dataframe merge timeout quota report dashboard export import column missing duplicate currency"
).split()
TYPICAL_QUERIES = ["coingecko", "invoice", "rate limit", "dashboard export", "timeout"]
RARE_WORD = "zanzibar"  # in one line of every 100,000: Anton's scan must read every file to answer it
VOCABULARY = 4_000
ROLES = ("user", "assistant", "tool_call", "tool_result", "scratchpad")


@dataclass(frozen=True)
class Scale:
    factor: int = 1

    @property
    def skills(self) -> int:
        return 1_000 * self.factor

    @property
    def lessons(self) -> int:
        return 5_000 * self.factor

    @property
    def rules(self) -> int:
        return 500 * self.factor

    @property
    def episode_lines(self) -> int:
        return 100_000 * self.factor

    @property
    def sessions(self) -> int:
        return 200 * self.factor


class Prose:
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

    def word_at(self, rank: int) -> str:
        """The word of this Zipf rank (0 is the commonest)."""
        return self._vocab[rank]

    def sentence(self, n: int = 9) -> str:
        return " ".join(self._rng.choices(self._vocab, cum_weights=self._cumulative, k=n))

    def sentences(self, count: int, n: int) -> list[str]:
        """`count` sentences of `n` words, drawn in one go (much quicker than one call each)."""
        words = self._rng.choices(self._vocab, cum_weights=self._cumulative, k=count * n)
        return [" ".join(words[i : i + n]) for i in range(0, count * n, n)]


def seed_rules(path: Path, count: int, prose: Prose) -> None:
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


def seed_lessons(path: Path, count: int, prose: Prose) -> None:
    lines = ["# Lessons\n"]
    for i, text in enumerate(prose.sentences(count, 14)):
        topic = TOPICS[i % len(TOPICS)]
        lines.append(f"- {text} (lesson {i}) <!-- topic:{topic} ts:2026-02-{i % 28 + 1:02d} -->\n")
    path.write_text("".join(lines))


def seed_skills(root: Path, count: int) -> None:
    for i in range(count):
        if i % 3:  # anton-agent's multi-stage folder
            folder = root / f"skill_{i:05d}"
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
            folder = root / f"skill-md-{i:05d}"
            folder.mkdir(parents=True)
            (folder / "SKILL.md").write_text(
                f"---\nname: {folder.name}\ndescription: Does task number {i}. Use when the user asks for task {i}\n"
                f"metadata:\n  display_name: Skill {i}\n  provenance: manual\n  created_at: '2026-03-01T10:00:00+00:00'\n"
                f"---\n1. Load the data\n2. Do task {i}\n"
            )


def seed_episodes(folder: Path, lines_total: int, sessions: int, prose: Prose) -> None:
    """`lines_total` lines over `sessions` daily session files, exactly as Anton writes them."""
    folder.mkdir(parents=True)
    per_session = lines_total // sessions
    start = datetime(2024, 1, 1, 9, 0, tzinfo=timezone.utc)
    number = 0
    for s in range(sessions):
        began = start + timedelta(hours=s * 9, minutes=s)
        session = began.strftime("%Y%m%d_%H%M%S")
        rows = []
        for n, content in enumerate(prose.sentences(per_session, 20)):
            number += 1
            turn, role = n // len(ROLES) + 1, ROLES[n % len(ROLES)]
            if n % 500 == 123:
                content += " CoinGecko rate limit hit"
            if number % 100_000 == 50_000:
                content += f" {RARE_WORD} trip"
            meta = '{"tool": "scratchpad"}' if role in ("tool_call", "tool_result") else "{}"
            ts = (began + timedelta(seconds=n * 7)).isoformat()
            rows.append(
                f'{{"ts": "{ts}", "session": "{session}", "turn": {turn}, "role": "{role}", '
                f'"content": "{content}", "meta": {meta}}}\n'
            )
        (folder / f"{session}.jsonl").write_text("".join(rows))


def seed(home: Path, project: Path, scale: Scale) -> Prose:
    prose = Prose(random.Random(7))
    global_memory, project_memory = home / "memory", project / ".anton" / "memory"
    global_memory.mkdir(parents=True)
    project_memory.mkdir(parents=True)
    (global_memory / "profile.md").write_text("# Profile\n" + "".join(f"- Fact {i}: value {i}\n" for i in range(12)))
    for folder in (global_memory, project_memory):
        seed_rules(folder / "rules.md", scale.rules // 2, prose)
        seed_lessons(folder / "lessons.md", scale.lessons // 2, prose)
    seed_skills(home / "skills", scale.skills)
    seed_episodes(project / ".anton" / "episodes", scale.episode_lines, scale.sessions, prose)
    return prose
