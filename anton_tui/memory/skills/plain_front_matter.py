"""Reading the plain kind of SKILL.md front matter without PyYAML: ``key: text`` lines and one level of nested
``key: text`` lines, the shape every skill writer produces, in a few microseconds instead of some thirty.

A listing of ten thousand skills reads ten thousand front matters; PyYAML (even with libyaml) builds each in Python,
which cost more than reading the files. `plain_front_matter` reads only text that YAML itself reads the same way:
plain scalars that can only be strings (they start with a letter and are not a word YAML 1.1 reads as a boolean or a
null), and single-quoted ones. Anything else (numbers, dates, booleans, lists, double quotes, comments, folded or
multi-line text, tabs, duplicate keys) gets None, and the caller hands the text to PyYAML. The tests check the two
agree on generated front matter of every shape.

`written_fields` goes further for the shape skills are written in (``name``, ``description``, then ``metadata``):
one regular expression match gives a listing's fields, with no mapping built.
"""

from __future__ import annotations

import re
import string
from typing import Any

_KEY_START = frozenset(string.ascii_letters + "_")
_KEY_CHARS = string.ascii_letters + string.digits + "_-"
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
    value = raw.strip(" ")
    if not value:
        return None
    first = value[0]
    if first == "'":
        inside = value[1:-1]
        if len(value) < 2 or value[-1] != "'" or "'" in inside.replace("''", ""):
            return None
        return inside.replace("''", "'")
    if not first.isalpha() or (len(value) <= _LONGEST_WORD and value.lower() in _WORDS):
        return None
    if ": " in value or " #" in value or value[-1] == ":":  # a value, or a comment, would start there
        return None
    return value


def _is_key(key: str) -> bool:
    return bool(key) and key[0] in _KEY_START and not key.strip(_KEY_CHARS) and key.lower() not in _WORDS


def plain_front_matter(text: str) -> dict[str, Any] | None:
    """The mapping YAML reads from `text` when it is of the plain kind (see the module docstring), else None."""
    if not (text.isascii() and text.replace("\n", "").isprintable()) and _UNREADABLE.search(text):
        return None
    data: dict[str, Any] = {}
    nested: dict[str, Any] | None = None  # the mapping under the last ``key:`` line without a value
    nested_key = nested_indent = ""
    for line in text.split("\n"):
        if not line:
            continue
        key, colon, raw = line.partition(":")
        if not colon or (raw and raw[0] != " "):
            return None
        if line[0] == " ":
            name = key.lstrip(" ")
            indent = key[: len(key) - len(name)]
            if nested is None or not _is_key(name) or name in nested or (nested_indent and indent != nested_indent):
                return None
            nested_indent = indent
            value = _text(raw)
            if value is None:
                return None
            nested[name] = value
            continue
        if nested is not None:
            data[nested_key] = nested or None
            nested = None
        if not _is_key(key) or key in data:
            return None
        value = _text(raw)
        if value is None:
            if raw.strip(" "):
                return None
            nested, nested_key, nested_indent = {}, key, ""
            continue
        data[key] = value
    if nested is not None:
        data[nested_key] = nested or None
    return data


_BEYOND_ASCII = "\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff"  # (as `_UNREADABLE` allows)
_PLAIN_VALUE = (
    rf"(?!(?:{'|'.join(''.join(f'[{c.upper()}{c}]' for c in word) for word in sorted(_WORDS))})\n)[A-Za-z]"
    rf"(?:[\x20-\x22\x24-\x39\x3b-\x7e{_BEYOND_ASCII}]*[\x21-\x22\x24-\x39\x3b-\x7e{_BEYOND_ASCII}])?"
    rf"|'[\x20-\x26\x28-\x7e{_BEYOND_ASCII}]*'"
)
"""A value of the plain kind with no colon or `#` in it (where YAML may see a mapping or a comment), not a word YAML
reads as something else, and no space at its end; or a quoted one."""
_WRITTEN = re.compile(
    rf"name: (?P<name>{_PLAIN_VALUE})\ndescription: (?P<description>{_PLAIN_VALUE})\n"
    rf"(?:metadata:\n(?:  display_name: (?P<display_name>{_PLAIN_VALUE})\n)?"
    rf"(?:  provenance: (?:{_PLAIN_VALUE})\n)?(?:  created_at: (?:{_PLAIN_VALUE})\n)?)?"
)


def written_fields(text: str, start: int = 0, end: int | None = None) -> tuple[str, str, str] | None:
    """Name, description and metadata display name (empty when absent) of front matter in the shape skills are
    written in (``name``, ``description``, then ``metadata`` with some of ``display_name``, ``provenance`` and
    ``created_at``, one line each, every value of the plain kind), read with one match and no mapping built; None
    for anything else (then `plain_front_matter` or PyYAML reads it). What it gives is what those read. `start` and
    `end`: where the front matter is in `text` (all of it by default)."""
    found = _WRITTEN.fullmatch(text, start, len(text) if end is None else end)
    if found is None:
        return None
    name, description, display_name = found.groups()
    return (
        name[1:-1] if name[0] == "'" else name,
        description[1:-1] if description[0] == "'" else description,
        "" if display_name is None else display_name[1:-1] if display_name[0] == "'" else display_name,
    )
