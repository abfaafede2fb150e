"""How often recall finds the answer to a question about past conversations, beside a textbook BM25.

The questions and conversations come from `recall_eval_set` (generated, labelled with the turn that answers each
question). Recall is asked each question as written, through `EpisodicMemory.recall`; a question counts as found at
k when a turn that answers it is among the first k turns recalled (recall@5 and recall@10). The baseline is textbook
BM25 (`rank_bm25.BM25Okapi`, k1 1.5, b 0.75) over the same turns: each turn one document of all its lines, words
lowercased, no windows, no stemming, no stop words. Beside it, for reference, the same BM25 with English stop words
left out and words stemmed as recall stems them (what recall adds beyond that is mostly the neighbours' words).

Two parts: the tuning part (recall's choices may be tuned on it) and the held-out part (never tuned on). Run alone with
``python -m benchmarks.bench_recall_quality``.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchmarks.recall_eval_set import HELD_OUT, TUNING, Question, write_part

KS = (5, 10)
_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


@dataclass
class Scores:
    found: dict[int, int]
    asked: int

    def at(self, k: int) -> float:
        return 100.0 * self.found[k] / self.asked if self.asked else 0.0


def turn_documents(folder: Path) -> tuple[list[tuple[str, int]], list[str]]:
    """Every turn of the folder's session files, as (session, turn) and the text of all its lines."""
    keys: list[tuple[str, int]] = []
    texts: dict[tuple[str, int], list[str]] = {}
    for path in sorted(folder.glob("*.jsonl")):
        for raw in path.read_text(encoding="utf-8").splitlines():
            line = json.loads(raw)
            if line["role"] in ("memory_read", "memory_write"):
                continue
            key = (line["session"], line["turn"])
            if key not in texts:
                keys.append(key)
                texts[key] = []
            texts[key].append(line["content"])
    return keys, [" ".join(texts[key]) for key in keys]


def score(ranked: list[list[tuple[str, int]]], questions: list[Question]) -> Scores:
    found = dict.fromkeys(KS, 0)
    for turns, question in zip(ranked, questions, strict=True):
        evidence = set(question.evidence)
        for k in KS:
            found[k] += any(turn in evidence for turn in turns[:k])
    return Scores(found, len(questions))


def stemmed_words(text: str) -> list[str]:
    """Words as recall's index keeps them, English stop words left out."""
    from anton_tui.memory.episodes.recall_rank import STOP_WORDS
    from anton_tui.memory.episodes.turn_index import analyzer

    kept = " ".join(word for word in analyzer(stem=False).analyze(text) if word not in STOP_WORDS)
    return list(analyzer().analyze(kept))


def baseline_rankings(
    folder: Path, questions: list[Question], depth: int = max(KS), *, tokens: Callable[[str], list[str]] = words
) -> list[list[tuple[str, int]]]:
    from rank_bm25 import BM25Okapi

    keys, texts = turn_documents(folder)
    bm25 = BM25Okapi([tokens(text) for text in texts])
    out = []
    for question in questions:
        scores = bm25.get_scores(tokens(question.text))
        best = sorted(range(len(keys)), key=lambda n: -scores[n])[:depth]
        out.append([keys[n] for n in best])
    return out


def recall_rankings(folder: Path, questions: list[Question], depth: int = max(KS)) -> list[list[tuple[str, int]]]:
    from anton_tui.memory.episodes.store import EpisodicMemory

    memory = EpisodicMemory(folder)
    try:
        memory.index.refresh()
        return [
            list(dict.fromkeys((e.session, e.turn) for e in memory.recall(q.text, max_results=depth)))
            for q in questions
        ]
    finally:
        memory.close()


def evaluate(part: str, root: Path, **sizes: int) -> dict[str, Scores]:
    folder = root / part
    questions = write_part(folder, part, **sizes)
    return {
        "recall": score(recall_rankings(folder, questions), questions),
        "bm25": score(baseline_rankings(folder, questions), questions),
        "bm25 stemmed": score(baseline_rankings(folder, questions, tokens=stemmed_words), questions),
    }


def main(argv: list[str] | None = None) -> None:
    del argv
    with tempfile.TemporaryDirectory(prefix="anton-recall-eval-") as scratch:
        for part in (TUNING, HELD_OUT):
            began = time.perf_counter()
            result = evaluate(part, Path(scratch))
            ours, base = result["recall"], result["bm25"]
            label = "tuning part" if part == TUNING else "held-out part, never tuned on"
            for k in KS:
                gain = ours.at(k) - base.at(k)
                print(
                    f"recall quality, {label} ({ours.asked} questions): recall@{k} {ours.at(k):.1f}% "
                    f"vs textbook BM25 {base.at(k):.1f}% ({gain:+.1f} points"
                    + (", target >= +5" if k == 10 else "")
                    + (")" if k != 10 or gain >= 5 else ") MISSED"),
                    flush=True,
                )
            reference = result["bm25 stemmed"]
            print(
                f"recall quality, {label}: BM25 with stop words left out and words stemmed (for reference): "
                f"recall@5 {reference.at(5):.1f}%, recall@10 {reference.at(10):.1f}%; scored in "
                f"{time.perf_counter() - began:.1f} s",
                flush=True,
            )


if __name__ == "__main__":
    main(sys.argv[1:])
