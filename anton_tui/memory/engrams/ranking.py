"""Scores learned rules and lessons against the turn at hand, by BM25, so the prompt carries the ones that matter.

`RuleRanker` keeps a small in-memory tantivy index of the candidate entries (the rules and lessons of both scopes).
It is brought up to date only when the set of candidates changes (`sync`: a changed file adds and removes the entries
that changed, the others stay), and `scores` asks one disjunction of the turn's words: the user's message counts
fully, the recent turns and the skills in play count less (`RECENT_WEIGHT`, `SKILL_WEIGHT`). Words are split at
anything not a letter or digit, lowercased, folded to ASCII, English stop words left out and English endings taken
off, so "deploying invoices" finds a rule about "deploy" and "invoice". tantivy is imported on first use.

Brain analogy: the prefrontal cortex's top-down selection: of everything known, only what bears on the current goal
is brought into working memory.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import tantivy

TOKENIZER = "memory"
RECENT_WEIGHT = 0.5  # a word of the recent turns against one of the user's message
SKILL_WEIGHT = 0.5  # a word of a skill in play (its label and description)
MAX_QUERY_WORDS = 96  # distinct words asked per part of the turn (a pasted log should not make a huge query)
MAX_WORD = 40  # longer "words" (hashes, base64) are left out
WRITER_HEAP = 15_000_000  # tantivy's smallest indexing buffer


@dataclass(frozen=True, slots=True)
class TurnQuery:
    """What a turn is about: the user's message, the recent turns before it, and the skills in play."""

    message: str
    recent: tuple[str, ...] = ()
    skills: tuple[str, ...] = ()

    def parts(self) -> list[tuple[str, float]]:
        return [
            (self.message, 1.0),
            ("\n".join(self.recent), RECENT_WEIGHT),
            ("\n".join(self.skills), SKILL_WEIGHT),
        ]


def _tantivy() -> Any:
    import tantivy

    return tantivy


@functools.cache
def analyzer() -> tantivy.TextAnalyzer:
    """How text becomes words, for the index and the query alike (see the module docstring)."""
    tv = _tantivy()
    builder = tv.TextAnalyzerBuilder(tv.Tokenizer.simple()).filter(tv.Filter.remove_long(MAX_WORD))
    builder = builder.filter(tv.Filter.lowercase()).filter(tv.Filter.ascii_fold())
    builder = builder.filter(tv.Filter.stopword("english")).filter(tv.Filter.stemmer("english"))
    return builder.build()


def words_of(text: str) -> list[str]:
    """The distinct indexed words of `text`, in order of first use."""
    return list(dict.fromkeys(analyzer().analyze(text)))


class RuleRanker:
    """A BM25 index over candidate entries, each named by a hashable key (see the module docstring)."""

    def __init__(self) -> None:
        tv = _tantivy()
        builder = tv.SchemaBuilder()
        builder.add_unsigned_field("doc", stored=True, indexed=True)
        builder.add_text_field("text", tokenizer_name=TOKENIZER, index_option="freq")
        self._schema = builder.build()
        self._index = tv.Index(self._schema)
        self._index.register_tokenizer(TOKENIZER, analyzer())
        self._docs: dict[Hashable, int] = {}  # key -> document number
        self._keys: dict[int, Hashable] = {}  # document number -> key
        self._numbers = itertools.count(1)

    def __len__(self) -> int:
        return len(self._docs)

    def sync(self, texts: Mapping[Hashable, str]) -> None:
        """Make the index hold exactly `texts` (key -> text): entries gone are removed, new ones added."""
        gone = [key for key in self._docs if key not in texts]
        new = [key for key in texts if key not in self._docs]
        if not gone and not new:
            return
        tv = _tantivy()
        writer = self._index.writer(WRITER_HEAP, 1)
        for key in gone:
            number = self._docs.pop(key)
            del self._keys[number]
            writer.delete_documents_by_term("doc", number)
        for key in new:
            number = next(self._numbers)
            document = tv.Document()
            document.add_unsigned("doc", number)
            document.add_text("text", texts[key])
            writer.add_document(document)
            self._docs[key], self._keys[number] = number, key
        writer.commit()
        writer.wait_merging_threads()
        self._index.reload()

    def scores(self, query: TurnQuery, limit: int) -> dict[Hashable, float]:
        """BM25 scores of the best `limit` entries for the turn; entries sharing no word with it are left out."""
        tv = _tantivy()
        clauses: list[tuple[Any, Any]] = []
        for text, weight in query.parts():
            for word in words_of(text)[:MAX_QUERY_WORDS]:
                term = tv.Query.term_query(self._schema, "text", word, index_option="freq")
                clauses.append((tv.Occur.Should, tv.Query.boost_query(term, weight) if weight != 1.0 else term))
        if not clauses or not self._docs:
            return {}
        searcher = self._index.searcher()
        found = searcher.search(tv.Query.boolean_query(clauses), limit)
        scores: dict[Hashable, float] = {}
        for score, address in found.hits:
            key = self._keys.get(searcher.doc(address)["doc"][0])
            if key is not None:
                scores[key] = float(score)
        return scores


def rank_keys(scores: Mapping[Hashable, float], newer: Mapping[Hashable, float], keys: Iterable[Hashable]) -> list:
    """`keys` best first: by score, and between equal scores the newer entry first (`newer`: larger is newer)."""
    return sorted(keys, key=lambda key: (-round(scores.get(key, 0.0), 6), -newer.get(key, 0.0)))
