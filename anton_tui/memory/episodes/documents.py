"""Recall's second kind of source: the conversation summaries (``.anton/conversations``) and the reflections
(``.anton/reflections``), searched with the same words and the same BM25 as the turns of the episode log.

The documents are few (one per conversation, one per day, week and month) and short, so they are kept in a tantivy
index in memory, made with the turn index's own analyzer and read with recall's own reading of a query
(`recall_rank.query_words`: stop words and the words of asking left out, the rest stemmed): the ranking is the same,
over a smaller corpus. The index is made again when one of the folders changes (a summary or a reflection is written
by replacing its file, which changes its folder). Nothing is parsed as YAML: a document's title is its first
heading, its date comes from its name or its front matter's first date. A hit comes back as an `Episode` whose role
names its kind ("summary", "reflection"), so the recall tool and the Episodes tab show it as such; one made from
untrusted input carries the trust mark, so recalling it taints the turn as an untrusted episode does.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from anton_tui.memory.episodes.record import Episode

SUMMARY, REFLECTION = "summary", "reflection"  # the roles of the episodes that stand for them (`DOCUMENT_KINDS`)
REFLECTION_KINDS = ("daily", "weekly", "monthly")
EXCERPT_CHARS = 1500
_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})")
_WEEK = re.compile(r"^(\d{4})-W(\d{2})$")


@dataclass(frozen=True)
class Document:
    kind: str
    name: str
    path: Path
    title: str
    date: str
    text: str
    untrusted: bool

    def episode(self) -> Episode:
        meta: dict[str, Any] = {"source": str(self.path), "title": self.title}
        if self.untrusted:
            meta["trust"] = "untrusted"
        excerpt = self.text if len(self.text) <= EXCERPT_CHARS else self.text[: EXCERPT_CHARS - 1] + "…"
        return Episode(self.date, self.name, 0, self.kind, f"{self.title}\n{excerpt}".strip(), meta)


def _split(raw: str) -> tuple[str, str]:
    """(front matter, body) of a Markdown file with front matter; ("", raw) without one."""
    if raw.startswith("---\n"):
        front, sep, body = raw[4:].partition("\n---\n")
        if sep:
            return front, body
    return "", raw


def read_document(kind: str, name: str, path: Path) -> Document | None:
    try:
        raw = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    front, body = _split(raw)
    body = body.strip()
    heading = next((line[2:].strip() for line in body.splitlines() if line.startswith("# ")), "")
    if kind == REFLECTION:
        label = name.rpartition("/")[2]
        week = _WEEK.match(label)
        if week:
            date = datetime.fromisocalendar(int(week.group(1)), int(week.group(2)), 7).date().isoformat()
        else:
            date = label if len(label) == 10 else f"{label}-01"
    else:
        ended = next((line for line in front.splitlines() if line.startswith("ended:")), "")
        found = _DATE.search(ended) or _DATE.search(front)
        date = found.group(1) if found else ""
    untrusted = "\ntainted:" in f"\n{front}"
    return Document(kind, name, path, heading or name, date, body, untrusted)


def _listing(folder: Path) -> list[str]:
    try:
        return sorted(name for name in os.listdir(folder) if name.endswith(".md") and not name.startswith("."))
    except (FileNotFoundError, NotADirectoryError):
        return []


class DocumentRecall:
    """Search over one project's conversation summaries and reflections (see the module docstring)."""

    def __init__(self, summaries_dir: Path, reflections_dir: Path) -> None:
        self.summaries_dir = Path(summaries_dir)
        self.reflections_dir = Path(reflections_dir)
        self._lock = threading.Lock()
        self._signature: tuple[int, ...] | None = None
        self._documents: list[Document] = []
        self._index: Any = None
        self._searcher: Any = None
        self._lowered: list[str] = []  # each document's text in lower case, for the exact-text fallback
        self._newest: list[int] = []  # positions, newest document first

    def _folders(self) -> list[Path]:
        return [self.summaries_dir, *(self.reflections_dir / kind for kind in REFLECTION_KINDS)]

    def _current_signature(self) -> tuple[int, ...]:
        signature = []
        for folder in self._folders():
            try:
                info = os.stat(folder)
                signature += [info.st_ino, info.st_mtime_ns]
            except OSError:
                signature += [0, 0]
        return tuple(signature)

    def documents(self) -> list[Document]:
        """Every document, read again when a folder changed (blocking)."""
        with self._lock:
            self._refresh()
            return list(self._documents)

    def _refresh(self) -> None:
        signature = self._current_signature()
        if signature == self._signature:
            return
        documents = []
        for name in _listing(self.summaries_dir):
            found = read_document(SUMMARY, name[:-3], self.summaries_dir / name)
            if found is not None:
                documents.append(found)
        for kind in REFLECTION_KINDS:
            folder = self.reflections_dir / kind
            for name in _listing(folder):
                found = read_document(REFLECTION, f"{kind}/{name[:-3]}", folder / name)
                if found is not None:
                    documents.append(found)
        self._documents = documents
        self._index = _build(documents) if documents else None
        self._searcher = self._index.searcher() if self._index is not None else None
        self._lowered = [f"{document.title}\n{document.text}".lower() for document in documents]
        self._newest = sorted(range(len(documents)), key=lambda position: documents[position].date, reverse=True)
        self._signature = signature

    def search(self, query: str, limit: int, since: datetime | None = None) -> list[Episode]:
        """The best `limit` documents for `query`, as episodes (best first); those dated before `since` left out."""
        if limit <= 0 or not query.strip():
            return []
        with self._lock:
            self._refresh()
            documents, index, searcher = self._documents, self._index, self._searcher
            lowered, newest = self._lowered, self._newest
        if not documents:
            return []
        day = since.date().isoformat() if since is not None else ""

        def allowed(position: int) -> bool:
            return not day or documents[position].date >= day

        ranked = _ranked(index, searcher, query, limit * 4 if not day else len(documents)) if index is not None else []
        chosen = [position for position in ranked if allowed(position)][:limit]
        if len(chosen) < limit:  # the exact text, for what the words cannot find (part of a word, punctuation)
            needle = query.strip().lower()
            for position in newest:
                if len(chosen) >= limit:
                    break
                if position not in chosen and allowed(position) and needle in lowered[position]:
                    chosen.append(position)
        return [documents[position].episode() for position in chosen]


def _build(documents: list[Document]) -> Any:
    import tantivy

    from anton_tui.memory.episodes.turn_index import TOKENIZER, analyzer

    builder = tantivy.SchemaBuilder()
    builder.add_unsigned_field("key", indexed=True, fast=True)
    builder.add_text_field("own", tokenizer_name=TOKENIZER, index_option="freq")
    index = tantivy.Index(builder.build())
    index.register_tokenizer(TOKENIZER, analyzer())
    writer = index.writer(15_000_000, 1)
    for position, document in enumerate(documents):
        doc = tantivy.Document()
        doc.add_unsigned("key", position)
        doc.add_text("own", f"{document.title}\n{document.text}")
        writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    return index


def _ranked(index: Any, searcher: Any, query: str, depth: int) -> list[int]:
    """Positions of the documents holding the query's words, by BM25 (best first)."""
    import tantivy

    from anton_tui.memory.episodes.recall_rank import query_words
    from anton_tui.memory.episodes.turn_index import analyzer

    stemmer = analyzer()
    stems = list(dict.fromkeys(stem for word in query_words(query) for stem in stemmer.analyze(word)))
    if not stems:
        return []
    schema = index.schema
    clauses = [(tantivy.Occur.Should, tantivy.Query.term_query(schema, "own", stem, "freq")) for stem in stems]
    hits = searcher.search(tantivy.Query.boolean_query(clauses), depth, count=False).hits
    if not hits:
        return []
    keys = searcher.fast_field_values("key", [address for _score, address in hits])
    return [int(key) for key in keys if key is not None]
