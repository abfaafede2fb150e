"""Which secret shapes a text can hold at all, told by a few substring tests before the shapes' regexes run.

Most shapes contain a fixed piece of text (``sk-ant-``, ``ghp``, ``BEGIN RSA PRIVATE KEY``, ``password``...). A
regex that looks for them over a long text (the first sync of a memory file of thousands of lessons) is tried at
every position, and the set of them costs a few hundred milliseconds on half a megabyte; a substring test costs a
fraction of one. `required` reads a regex's parse tree (the standard library's own parser) for strings one of which
every match must contain; a text holding none of them cannot match, and its regex is not run. Comparisons are made
without regard to case (a superset of what a case-sensitive regex needs), folding first the four characters that
Python's regexes match to ASCII letters when ignoring case.

A shape with no such strings (a 40-character run of base64, a bot token of digits and letters) is run, except over a
long text none of whose words (runs of characters without a space) is as long as the shape's shortest match, when no
match of it can hold a space (`solid_width`). A long text is looked for its strings in its distinct words, which a
file of lessons repeats: each test reads a fraction of it.
"""

from __future__ import annotations

import functools
import re
from importlib import import_module
from typing import Any

# The parser of Python's `re` module: private, but what the module itself compiles with (3.11's `re._parser`, the
# deprecated `sre_parse`); anything it does not give as expected makes `required` answer None (the regex runs).
sre_parse: Any = import_module("re._parser")
sre: Any = import_module("re._constants")

MIN_LENGTH = 2  # strings shorter than this tell too little to be worth a test
_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})  # İ ı ſ K (matched as i, i, s, k)


def folded(text: str) -> str:
    """`text` as the tests compare it: lower case, with the characters regexes match to ASCII letters made those."""
    return text.translate(_FOLD).lower()


LARGE = 64 * 1024
"""A text at least this long is looked for strings in its distinct words (a string with a space in it, in the whole
text) and tells the length of its longest word."""


class Gate:
    """Tells which regexes may match one text; each fixed string is looked for once, however many regexes need it."""

    def __init__(self, text: str) -> None:
        self._folded = folded(text)
        self._found: dict[str, bool] = {}
        self._words: str | None = None  # the distinct words of a long text, one a line (made at the first test)
        self._longest = 0  # and the length of its longest word

    def _distinct_words(self) -> str:
        if self._words is None:
            words = set(self._folded.split())
            self._words = "\n".join(words)
            self._longest = max(map(len, words), default=0)
        return self._words

    def _holds(self, piece: str) -> bool:
        if len(self._folded) < LARGE or any(char.isspace() for char in piece):
            return piece in self._folded
        return piece in self._distinct_words()

    def _long_enough(self, regex: re.Pattern[str]) -> bool:
        """False when `regex` never matches a space and a long text has no word as long as its shortest match."""
        width = solid_width(regex)
        if width is None or len(self._folded) < LARGE:
            return True
        self._distinct_words()
        return self._longest >= width

    def may_match(self, regex: re.Pattern[str]) -> bool:
        """False only when `regex` cannot match the text."""
        needed = required(regex)
        if needed is None:
            return self._long_enough(regex)
        found = self._found
        for piece in needed:
            held = found.get(piece)
            if held is None:
                held = found[piece] = self._holds(piece)
            if held:
                return True
        return False


@functools.cache
def required(regex: re.Pattern[str]) -> tuple[str, ...] | None:
    """Lower-case strings one of which every match of `regex` contains (compare with a `folded` text), or None."""
    try:
        found = _sequence(list(sre_parse.parse(regex.pattern, regex.flags)))
    except Exception:  # (an unexpected parse: no test, the regex runs)
        return None
    if not found or min(len(text) for text in found) < MIN_LENGTH or not all(text.isascii() for text in found):
        return None
    return tuple(sorted({text.lower() for text in found}))


@functools.cache
def solid_width(regex: re.Pattern[str]) -> int | None:
    """The fewest characters a match of `regex` spans, when no match can hold a space (or another character
    `str.split` splits at): every match then lies inside one word at least that long. None for any other regex."""
    try:
        parsed = sre_parse.parse(regex.pattern, regex.flags)
        if not _solid(list(parsed)):
            return None
        return int(parsed.getwidth()[0])
    except Exception:  # (an unexpected parse: no test, the regex runs)
        return None


_SOLID_CATEGORIES = frozenset((sre.CATEGORY_DIGIT, sre.CATEGORY_WORD, sre.CATEGORY_NOT_SPACE, sre.CATEGORY_UNI_DIGIT,
                               sre.CATEGORY_UNI_WORD, sre.CATEGORY_UNI_NOT_SPACE))  # fmt: skip


def _solid(items: list[tuple[Any, Any]]) -> bool:
    """Whether a sequence of the parse tree never consumes a space; assertions consume nothing."""
    for op, value in items:
        if op is sre.LITERAL:
            if chr(value).isspace():
                return False
        elif op is sre.IN:
            if not all(_solid_member(kind, member) for kind, member in value):
                return False
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
            if not _solid(list(value[2])):
                return False
        elif op is sre.SUBPATTERN:
            if not _solid(list(value[3])):
                return False
        elif op is sre.ATOMIC_GROUP:
            if not _solid(list(value)):
                return False
        elif op is sre.BRANCH:
            if not all(_solid(list(branch)) for branch in value[1]):
                return False
        elif op not in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):
            return False  # any character, a negated one, a back reference...: it may be a space
    return True


def _solid_member(kind: Any, member: Any) -> bool:
    if kind is sre.LITERAL:
        return not chr(member).isspace()
    if kind is sre.RANGE:
        return not any(chr(code).isspace() for code in range(member[0], member[1] + 1))
    if kind is sre.CATEGORY:
        return member in _SOLID_CATEGORIES
    return False  # a negated set, or anything unexpected


def _sequence(items: list[tuple[Any, Any]]) -> set[str] | None:
    """The strongest requirement of any one item of a sequence (every item must match), runs of literals joined."""
    candidates: list[set[str]] = []
    run = ""
    for op, value in items:
        if op is sre.LITERAL:
            run += chr(value)
            continue
        if run:
            candidates.append({run})
            run = ""
        found = _item(op, value)
        if found is not None:
            candidates.append(found)
    if run:
        candidates.append({run})
    return max(candidates, key=lambda found: (min(len(text) for text in found), -len(found)), default=None)


def _item(op: Any, value: Any) -> set[str] | None:
    if op is sre.SUBPATTERN:
        return _sequence(list(value[3]))
    if op is sre.ATOMIC_GROUP:
        return _sequence(list(value))
    if op is sre.BRANCH:
        found: set[str] = set()
        for branch in value[1]:
            part = _sequence(list(branch))
            if part is None:
                return None
            found |= part
        return found
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
        least, _most, body = value
        return _sequence(list(body)) if least >= 1 else None
    if op is sre.IN and all(kind is sre.LITERAL for kind, _ in value):
        return {chr(code) for _, code in value}
    return None  # anything else (a class, any character, an assertion, a reference) tells nothing
