"""Reading the plain kind of SKILL.md front matter without PyYAML: ``key: text`` lines and one level of nested
``key: text`` lines, the shape every skill writer produces, in a few microseconds instead of some thirty.

A listing of ten thousand skills reads ten thousand front matters; PyYAML (even with libyaml) builds each in Python,
which cost more than reading the files. `plain_front_matter` reads only text that YAML itself reads the same way:
plain scalars that can only be strings (they start with a letter and are not a word YAML 1.1 reads as a boolean or a
null), and single-quoted ones. Anything else (numbers, dates, booleans, lists, double quotes, comments, folded or
multi-line text, tabs, duplicate keys) gets None, and the caller hands the text to PyYAML. The tests check the two
agree on generated front matter of every shape.
"""

from __future__ import annotations

import re
from typing import Any

_KEY_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(?: +(.*))?")
_NESTED_LINE = re.compile(r"( +)([A-Za-z_][A-Za-z0-9_-]*): +(.*)")
# Characters YAML does not read in a document (PyYAML's reader refuses them), tabs and carriage returns (which take
# part in indentation and in where a scalar ends), the other characters YAML 1.1 counts as line breaks, and a byte
# order mark.
_UNREADABLE = re.compile("[^\x0a\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
_WORDS = frozenset(
    "yes no true false on off null y n".split()  # noqa: SIM905 (a list of words reads better as text)
)  # the words YAML 1.1 reads (in some cases) as booleans or null, and y/n to be safe
_LONGEST_WORD = max(map(len, _WORDS))


def _text(raw: str) -> str | None:
    """The string a value's text stands for, or None when YAML might read it as something else."""
    value = raw.rstrip(" ")
    if not value:
        return None
    if value[0] == "'":
        inside = value[1:-1]
        if len(value) < 2 or value[-1] != "'" or "'" in inside.replace("''", ""):
            return None
        return inside.replace("''", "'")
    if not value[0].isalpha() or (len(value) <= _LONGEST_WORD and value.lower() in _WORDS):
        return None
    if ": " in value or " #" in value or value.endswith(":"):  # a value, or a comment, would start there
        return None
    return value


def plain_front_matter(text: str) -> dict[str, Any] | None:
    """The mapping YAML reads from `text` when it is of the plain kind (see the module docstring), else None."""
    if _UNREADABLE.search(text):
        return None
    data: dict[str, Any] = {}
    nested: dict[str, Any] | None = None  # the mapping under the last ``key:`` line without a value
    nested_key, indent = "", ""
    for line in text.split("\n"):
        if not line:
            continue
        if line[0] == " ":
            found = _NESTED_LINE.fullmatch(line)
            if found is None or nested is None or found[2] in nested or found[2].lower() in _WORDS:
                return None
            if indent and found[1] != indent:
                return None
            indent = found[1]
            value = _text(found[3])
            if value is None:
                return None
            nested[found[2]] = value
            continue
        if nested is not None:
            data[nested_key] = nested or None
            nested = None
        found = _KEY_LINE.fullmatch(line)
        if found is None or found[1] in data or found[1].lower() in _WORDS:
            return None
        if found[2] is None or not found[2].strip(" "):
            nested, nested_key, indent = {}, found[1], ""
            continue
        value = _text(found[2])
        if value is None:
            return None
        data[found[1]] = value
    if nested is not None:
        data[nested_key] = nested or None
    return data
