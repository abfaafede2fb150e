"""A fixed episode corpus for the recall ranking tests, and the queries asked of it.

The corpus is generated from a seeded random source, so it is the same on every run: six sessions of 120 turns
(about 4,000 lines), a small vocabulary with a few very common words (held by most turns, so they tie), word forms
("invoice", "invoices", "invoicing"), words inside words ("CoinGecko"), punctuation and a few non-ASCII words. `QUERIES` covers every path of the ranking: one word, several words, no line with every word, a
substring inside a word, across words, punctuation only, non-ASCII text and `days_back`.
"""

from __future__ import annotations

import random
from pathlib import Path

from anton_tui.memory.episodes.store import Episode, format_episode_line

SESSIONS = ["20250103_090000", "20250211_101500", "20250320_140000", "20250402_083000", "20250517_170000",
            "20250630_120000"]
ROLES = ("user", "assistant", "tool_call", "scratchpad", "tool_result")
COMMON = ["the", "data", "report", "value", "table", "query", "chart", "result"]
TOPICAL = ["invoice", "invoices", "invoicing", "revenue", "customer", "latency", "timeout", "dashboard", "export",
           "running", "runs", "forecast", "pandas", "merge", "price", "prices", "zebra", "CoinGecko", "rate",
           "limit", "über", "café", "naïve", "a_b", "50%", "x-ray", "region_id", "retry"]
QUERIES = [
    "the", "data report", "invoice", "invoices", "invoicing", "running", "runs", "revenue customer", "zebra",
    "coingecko", "gecko", "oinGe", "rate limit", "limit rate", "dashboard export", "50%", "%", "_", "a_b", "über",
    "ÜBER", "ü", "café", "naive", "x-ray", "ray", "region", "pandas zebra", "prices", "price", "tim", "ti", "t",
    "nothing-matches-this", "export timeout forecast", "query", "e", "ta",
]


def write_corpus(folder: Path) -> None:
    rng = random.Random(20250101)
    folder.mkdir(parents=True, exist_ok=True)
    for index, session in enumerate(SESSIONS):
        rows = []
        for turn in range(1, 121):
            lines = 2 + rng.randrange(5)
            for n in range(lines):
                words = [rng.choice(COMMON) for _ in range(rng.randrange(2, 9))]
                words += [rng.choice(TOPICAL) for _ in range(rng.randrange(0, 3))]
                rng.shuffle(words)
                role = ROLES[n % len(ROLES)]
                ts = f"2025-0{index + 1}-0{1 + turn % 9}T10:{turn % 60:02d}:{n:02d}+00:00"
                rows.append(format_episode_line(Episode(ts, session, turn, role, " ".join(words), {})))
            if turn % 40 == 0:
                rows.append(format_episode_line(Episode(ts, session, 0, "memory_write", "the invoice zebra", {})))
        (folder / f"{session}.jsonl").write_bytes(b"".join(rows))


def ranking(recalled: list[Episode]) -> list[list[object]]:
    """The (session, turn) of each recalled turn, in order."""
    return [list(key) for key in dict.fromkeys((ep.session, ep.turn) for ep in recalled)]
