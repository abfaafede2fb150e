"""Choosing the memory budget (ANTON_MEMORY_BUDGET_TOKENS): 2,000 learned rules on 200 topics, rules of the length
the ACC and the learners write (20 to 60 tokens), and turns that ask about one topic while the two turns before were
about two others. For each budget: how many of the asked topic's rules the prompt carries, how many of the recent
topics', how much of the budget the ranked rules take, and how long choosing takes (warm, median of the turns).
The default is the smallest budget that carries all of the asked topic's rules and nearly all of the recent ones'."""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from pathlib import Path

from anton_tui.memory.engrams.cortex import Cortex
from anton_tui.memory.engrams.hippocampus import Hippocampus
from anton_tui.memory.engrams.ranking import TurnQuery

TOPICS = 200
PER_TOPIC = 10
BUDGETS = (500, 1000, 1500, 2000, 3000, 4000, 6000)
TURNS = 40
CLAUSES = (
    "restart the workers before a deploy and wait for the health check to pass",
    "read the newest log file under the service folder before changing any setting",
    "pin the client library to the version in the lock file, because newer ones change the retry behaviour",
    "run the smoke tests after every change and say which of them failed",
    "never edit the generated files by hand; change the template and generate them again",
    "ask the user before dropping or truncating a table, even in staging",
    "keep the retry count at three with a backoff, because the upstream service throttles bursts",
    "use the read-only credentials unless the user asks for a write",
    "write each schema migration as a new file and never edit one that has run",
    "check the error dashboard ten minutes after a release and report anything new",
)


def topic_names(rng: random.Random) -> list[str]:
    names: set[str] = set()
    while len(names) < TOPICS:
        names.add("".join(rng.choice("bdfgklmnprstvz") + rng.choice("aeiou") for _ in range(3)) + "ix")
    return sorted(names)


def seed(memory: Path, topics: list[str], rng: random.Random) -> dict[str, set[str]]:
    by_topic: dict[str, set[str]] = {topic: set() for topic in topics}
    lines = ["# Rules\n", "\n## When\n"]
    for number in range(TOPICS * PER_TOPIC):
        topic = topics[number % TOPICS]
        extra = rng.choice(("", " Mention it in the summary.", " This came up in the March incident review."))
        text = f"When working on {topic}, {CLAUSES[number // TOPICS]}.{extra}"
        lines.append(f"- {text} <!-- confidence:high source:consolidation ts:2026-{1 + number % 12:02d}-01 -->\n")
        by_topic[topic].add(text)
    memory.mkdir(parents=True, exist_ok=True)
    (memory / "rules.md").write_text("".join(lines), encoding="utf-8")
    return by_topic


def main() -> None:
    rng = random.Random(11)
    with tempfile.TemporaryDirectory(prefix="anton-bench-budget-") as scratch:
        topics = topic_names(rng)
        by_topic = seed(Path(scratch) / "global", topics, rng)
        cortex = Cortex(Hippocampus(Path(scratch) / "global", scope="global"), Hippocampus(Path(scratch) / "project"))
        turns = [rng.sample(topics, 3) for _ in range(TURNS)]
        print(f"{TOPICS * PER_TOPIC:,} rules on {TOPICS} topics; {TURNS} turns (asked topic + 2 recent ones)")
        print(f"{'budget':>7}  {'asked topic':>11}  {'recent topics':>13}  {'ranked tokens':>13}  {'choose (ms)':>11}")
        for budget in BUDGETS:
            asked_share, recent_share, used, times = [], [], [], []
            for asked, first, second in turns:
                query = TurnQuery(
                    f"The {asked} deploy is failing again, what should I check?",
                    (f"Can you look at {first} logs?", f"And why is {second} slow today?"),
                )
                began = time.perf_counter()
                selection = cortex.select_memory(query, budget)
                times.append((time.perf_counter() - began) * 1000)
                loaded = {item.text for item in selection.of("loaded")}
                asked_share.append(len(by_topic[asked] & loaded) / PER_TOPIC)
                recent_share.append(len((by_topic[first] | by_topic[second]) & loaded) / (2 * PER_TOPIC))
                used.append(selection.ranked_tokens)
            print(
                f"{budget:>7,}  {statistics.mean(asked_share):>10.0%}  {statistics.mean(recent_share):>12.0%}  "
                f"{statistics.mean(used):>13,.0f}  {statistics.median(times[1:]):>11.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
