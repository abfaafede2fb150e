"""Recall finds the turn that answers a question more often than textbook BM25 over the same turns.

Scored on the held-out part of the generated evaluation set (`benchmarks/recall_eval_set.py`), which nothing in
recall was tuned on; `make bench` prints the same figures for both parts.
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.bench_recall_quality import evaluate
from benchmarks.recall_eval_set import HELD_OUT, TUNING, write_part


def test_recall_finds_more_answers_than_textbook_bm25_on_the_held_out_questions(tmp_path: Path) -> None:
    result = evaluate(HELD_OUT, tmp_path)
    ours, baseline = result["recall"], result["bm25"]
    assert ours.asked > 100
    assert ours.at(10) >= baseline.at(10) + 5, (ours.at(10), baseline.at(10))
    assert ours.at(5) >= baseline.at(5), (ours.at(5), baseline.at(5))


def test_the_two_parts_share_no_subject_and_each_question_points_at_a_turn_that_exists(tmp_path: Path) -> None:
    tuning = write_part(tmp_path / "tuning", TUNING)
    held_out = write_part(tmp_path / "held-out", HELD_OUT)
    assert not {q.subject for q in tuning} & {q.subject for q in held_out}
    for folder, questions in ((tmp_path / "tuning", tuning), (tmp_path / "held-out", held_out)):
        text = {path.stem: path.read_text(encoding="utf-8") for path in folder.glob("*.jsonl")}
        for question in questions:
            for session, turn in question.evidence:
                assert f'"turn": {turn}, "role": "user"' in text[session]
