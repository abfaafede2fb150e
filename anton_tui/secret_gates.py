"""Which secret shapes a text can hold at all, told by a few substring tests before the shapes' regexes run.

Most shapes contain a fixed piece of text (``sk-ant-``, ``ghp``, ``BEGIN RSA PRIVATE KEY``, ``password``...). A
regex that looks for them over a long text (the first sync of a memory file of thousands of lessons) is tried at
every position, and the set of them costs a few hundred milliseconds on half a megabyte; a substring test costs a
fraction of one. `required` reads a regex's parse tree (the standard library's own parser) for strings one of which
every match must contain; a text holding none of them cannot match, and its regex is not run. Comparisons are made
without regard to case (a superset of what a case-sensitive regex needs), folding first the four characters that
Python's regexes match to ASCII letters when ignoring case; a shape with no such strings is always run.
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


class Gate:
    """Tells which regexes may match one text; each fixed string is looked for once, however many regexes need it."""

    def __init__(self, text: str) -> None:
        self._folded = folded(text)
        self._found: dict[str, bool] = {}

    def may_match(self, regex: re.Pattern[str]) -> bool:
        """False only when `regex` cannot match the text."""
        needed = required(regex)
        if needed is None:
            return True
        found = self._found
        for piece in needed:
            held = found.get(piece)
            if held is None:
                held = found[piece] = piece in self._folded
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
