"""The ranked part of the recall index: one document per turn, searched by BM25 for the best turns of all matches.

Each turn of the episode files is a document in a tantivy index (``.recall-index.turns/`` beside the SQLite file;
tantivy is a search library made for ranked top-k, compiled: a word held by ten thousand turns of a million lines is
ranked over all of them in a fraction of a millisecond, where SQLite's FTS5 took over ten). A document holds no
text, only its words, stemmed and with accents folded, in two fields: the turn's own lines (`own`), and the start of
the turn before and the turn after it (`near`), so a question whose words are spread over a turn and its neighbour
still finds the turn. A turn is an answer only when it holds one of the words itself; its neighbours' words add to
its score (`NEAR_WEIGHT`). Each document carries its turn's key (the SQLite index's turn key, for reading the lines
back), its file's id (so a file's turns are replaced or dropped at once) and where its lines are in the file (`span`:
the byte offset of its first line and the length up to the end of its last), so a turn found is read back with one
read of its file and no lookup of its lines.

The SQLite index is the bookkeeping: a build step writes both, committing this one first; a half-written step leaves
the SQLite file marked so, and both are built afresh. Anything wrong with this part (missing, unreadable) is reported
as `TurnIndexDamaged`, which the caller treats like a damaged database.

Brain analogy: pattern completion in CA3 — a partial cue (a few words of a question) settles on the stored episode
that best fits it, and on the moments around it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import tantivy

TURNS_NAME = ".recall-index.turns"
TOKENIZER = "recall"
NEAR_CHARS = 250  # how much of each neighbouring turn a turn's document holds (its start: the user's message)
NEAR_WEIGHT = 1.0  # what a word in the neighbours counts against one in the turn (chosen on the tuning part)
WRITER_HEAP = 40_000_000  # bytes of indexing buffer per writer thread: a build step's documents fit, one segment each
# (with tantivy's least, 15 MB, a step of a big build flushed several: a million lines took 12 s and 93 MB to index,
# merging them; with this, 10-10.6 s and 68-75 MB, measured with the writer's page cache at 2 MB)
WRITER_THREADS = 1  # tantivy indexes in a thread of its own, beside the Python thread that reads the files
MAX_WORD = 40  # longer "words" (hashes, base64) are left out, as tantivy's own tokenizers do
SPAN_BITS = 24  # a span is (offset << SPAN_BITS) | length; a length that does not fit is stored as 0 (unknown)
SPAN_TOP = (1 << SPAN_BITS) - 1


class TurnIndexDamaged(Exception):
    """The turn index is missing or cannot be read: the whole recall index is built afresh."""


class TurnIndexBusy(Exception):
    """Another process is writing the turn index."""


def _tantivy() -> Any:
    import tantivy

    return tantivy


@functools.cache
def analyzer(*, stem: bool = True) -> tantivy.TextAnalyzer:
    """How text becomes words: split at anything not a letter or digit, lowercased, accents folded, and (`stem`)
    English word endings taken off, so "invoices" and "invoicing" are one word."""
    tv = _tantivy()
    builder = tv.TextAnalyzerBuilder(tv.Tokenizer.simple()).filter(tv.Filter.remove_long(MAX_WORD))
    builder = builder.filter(tv.Filter.lowercase()).filter(tv.Filter.ascii_fold())
    if stem:
        builder = builder.filter(tv.Filter.stemmer("english"))
    return builder.build()


def _schema() -> tantivy.Schema:
    tv = _tantivy()
    builder = tv.SchemaBuilder()
    builder.add_unsigned_field("key", indexed=True, fast=True)
    builder.add_unsigned_field("file", indexed=True)
    builder.add_unsigned_field("span", fast=True)
    builder.add_text_field("own", tokenizer_name=TOKENIZER, index_option="freq")
    builder.add_text_field("near", tokenizer_name=TOKENIZER, index_option="freq")
    return builder.build()


def _open(path: Path, *, create: bool) -> tantivy.Index:
    tv = _tantivy()
    if not create and not (path / "meta.json").is_file():
        raise TurnIndexDamaged(f"{path} is missing")
    try:
        if create:
            path.mkdir(parents=True, exist_ok=True)
        index = tv.Index(_schema(), path=str(path), reuse=not create)
        index.register_tokenizer(TOKENIZER, analyzer())
    except (OSError, ValueError) as exc:
        raise TurnIndexDamaged(f"cannot open {path}: {exc}") from exc
    return index


def remove(path: Path) -> None:
    import shutil  # (it loads the bz2 and lzma libraries: only for a rebuild, not for every process that searches)

    shutil.rmtree(path, ignore_errors=True)


@dataclass(frozen=True)
class TurnText:
    """One turn's words for its document: its key, its own lines, its neighbours' starts, and its `span`."""

    key: int
    own: str
    near: str
    span: int = 0


class Hit(NamedTuple):
    """A turn found: its key, its BM25 score, and its document's address in the searcher that found it."""

    key: int
    score: float
    address: Any


def pack_span(start: int, end: int) -> int:
    """The span of a turn whose lines run from byte `start` to byte `end` (its last line's end, no newline)."""
    length = end - start
    return (start << SPAN_BITS) | (length if 0 < length <= SPAN_TOP else 0)


def unpack_span(span: int) -> tuple[int, int]:
    """``(offset, length)`` of a span; a length of 0 means the span is not known."""
    return span >> SPAN_BITS, span & SPAN_TOP


def turn_documents(keys: list[int], texts: list[str], spans: list[int] | None = None) -> list[TurnText]:
    """The documents of one file's turns, given in the order they began (`keys`, the joined text of each, and the
    span of each)."""
    documents = []
    spans = spans or [0] * len(keys)
    for at, (key, own, span) in enumerate(zip(keys, texts, spans, strict=True)):
        before = texts[at - 1][:NEAR_CHARS] if at else ""
        after = texts[at + 1][:NEAR_CHARS] if at + 1 < len(texts) else ""
        documents.append(TurnText(key, own, f"{before}\n{after}", span))
    return documents


class TurnWriter:
    """Adds, replaces and drops turn documents within one build step; `commit` makes them visible."""

    def __init__(self, path: Path, *, create: bool = False) -> None:
        self.index = _open(path, create=create)
        try:
            self.writer = self.index.writer(WRITER_HEAP * WRITER_THREADS, WRITER_THREADS)
        except ValueError as exc:
            if "lock" in str(exc).lower():  # another process writes it (between its steps)
                raise TurnIndexBusy(f"{path} is being written by another process") from exc
            raise TurnIndexDamaged(f"cannot write {path}: {exc}") from exc
        self.changed = False

    def drop_file(self, file_id: int) -> None:
        # (by a query: a term made from a Python int is a signed one, which an unsigned field never holds)
        self.writer.delete_documents_by_query(_tantivy().Query.term_query(self.index.schema, "file", file_id))
        self.changed = True

    def replace_file(self, file_id: int, documents: Iterable[TurnText]) -> None:
        """The file's documents are these from now on (any it had before are dropped)."""
        tv = _tantivy()
        writer = self.writer
        self.drop_file(file_id)
        for document in documents:
            doc = tv.Document()
            doc.add_unsigned("key", document.key)
            doc.add_unsigned("file", file_id)
            doc.add_unsigned("span", document.span)
            doc.add_text("own", document.own)
            doc.add_text("near", document.near)
            writer.add_document(doc)
        self.changed = True

    def commit(self) -> None:
        if self.changed:
            self.writer.commit()
            self.changed = False

    def close(self) -> None:
        """Finish the merges under way (tantivy merges segments in the background) and let the index go."""
        self.writer.wait_merging_threads()


class TurnSearcher:
    """Searches the turn index of one folder; reloaded when the SQLite index says something changed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._index: tantivy.Index | None = None
        self._searcher: tantivy.Searcher | None = None
        self._version: tuple[object, int] | None = None
        self._stems: dict[str, str | None] = {}
        self._held_by_most: dict[str, bool] = {}  # per word, for the searcher of `_version`

    def close(self) -> None:
        self._index = self._searcher = None
        self._version = None
        self._held_by_most = {}

    def _current(self, version: tuple[object, int]) -> tuple[tantivy.Searcher, tantivy.Schema]:
        """The searcher for the index as of `version` (the SQLite file's inode, and its data version): a new file
        means a new index, opened afresh; a new data version, new commits to reload."""
        if self._index is not None and (self._version is None or self._version[0] != version[0]):
            self.close()
        if self._index is None:
            self._index = _open(self.path, create=False)
            self._version = None
        if self._searcher is None or version != self._version:
            try:
                self._index.reload()
                self._searcher = self._index.searcher()
            except (OSError, ValueError) as exc:
                self.close()
                raise TurnIndexDamaged(f"cannot read {self.path}: {exc}") from exc
            self._version = version
            self._held_by_most = {}
        assert self._searcher is not None
        return self._searcher, self._index.schema

    def stems(self, words: list[str]) -> list[str]:
        """Each word as the index holds it (a word that is nothing once analysed is left out)."""
        stemmer = analyzer()
        out = []
        for word in words:
            stem = self._stems.get(word, "")
            if stem == "":
                found = stemmer.analyze(word)
                stem = self._stems[word] = found[0] if len(found) == 1 else None
                if len(self._stems) > 4096:
                    self._stems.clear()
            if stem is not None:
                out.append(stem)
        return out

    def held_by_most(self, version: tuple[object, int], stems: list[str]) -> set[str]:
        """The words held by more than half of the turns: under BM25's idf (Robertson and Spärck Jones) such a word
        weighs nothing, so it cannot tell turns apart."""
        searcher, _schema = self._current(version)
        known = self._held_by_most
        for stem in stems:
            if stem not in known:
                if len(known) > 4096:
                    known.clear()
                known[stem] = searcher.doc_freq("own", stem) > searcher.num_docs / 2
        return {stem for stem in stems if known[stem]}

    def search(
        self,
        version: tuple[object, int],
        stems: list[str],
        limit: int,
        *,
        only_files: Iterable[int] | None = None,
        skip_files: Iterable[int] = (),
    ) -> list[Hit]:
        """The best `limit` turns for these words, best first: turns holding any of them in
        their own lines, scored by BM25 of each word there plus `NEAR_WEIGHT` times that in their neighbours' (a turn
        that holds none itself is not an answer, only context); only turns of `only_files` when given, never of
        `skip_files`."""
        if not stems or limit <= 0:
            return []
        tv = _tantivy()
        searcher, schema = self._current(version)
        query_of, should = tv.Query.term_query, tv.Occur.Should
        words = list(dict.fromkeys(stems))
        own = tv.Query.boolean_query([(should, query_of(schema, "own", stem, "freq")) for stem in words])
        near = [(should, tv.Query.boost_query(query_of(schema, "near", stem, "freq"), NEAR_WEIGHT)) for stem in words]
        # (measured: this is quicker than one disjunction of every clause pruned by block-max WAND, which then has to
        # take out the many turns that matched through their neighbours alone)
        query = tv.Query.boolean_query([(tv.Occur.Must, own), *near])
        skip = list(skip_files)
        if only_files is not None or skip:
            must = [(tv.Occur.Must, query)]
            if only_files is not None:
                must.append((tv.Occur.Must, tv.Query.term_set_query(schema, "file", list(only_files))))
            if skip:
                must.append((tv.Occur.MustNot, tv.Query.term_set_query(schema, "file", skip)))
            query = tv.Query.boolean_query(must)
        hits = searcher.search(query, limit, count=False).hits
        if not hits:
            return []
        keys = searcher.fast_field_values("key", [address for _score, address in hits])
        return [Hit(int(key), float(score), address)
                for (score, address), key in zip(hits, keys, strict=True) if key is not None]  # fmt: skip

    def spans(self, addresses: list[Any]) -> list[int]:
        """The spans of the turns at these addresses (of the searcher of the last `search`; 0 where unknown)."""
        if not addresses or self._searcher is None:
            return [0] * len(addresses)
        return [int(span or 0) for span in self._searcher.fast_field_values("span", addresses)]
