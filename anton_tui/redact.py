"""Takes API keys and other secrets out of text before it is stored (memory files, episodes) or read by the model
(tool results, a cell's output), and says what it took.

Two nets, in Anton 2.26.10's order:

1. known values: the keys this session was configured with, and the provider key variables and ``DS_*`` datasource
   variables of the environment, found as printed and as URL-, JSON-, HTML-escaped or base64 text, become
   ``[VARIABLE_NAME]`` (a value with no name becomes ``[REDACTED_SECRET]``);
2. shapes: the patterns of `secret_patterns` (detect-secrets' set and the kinds it lacks) become
   ``[REDACTED_API_KEY]`` or ``[REDACTED_TOKEN]``.

Text already inside a marker is not looked at again. Values of up to 8 characters match only as whole words, with
their case; longer ones anywhere, in any case.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import quote, quote_plus

SECRET = "[REDACTED_SECRET]"
MARKER = re.compile(r"\[(?:REDACTED_[A-Z_]+|DS_\w+|[A-Z][A-Z0-9]*_[A-Z0-9_]*)\]")
PROVIDER_KEYS = (
    "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY",
    "ANTON_ANTHROPIC_API_KEY", "ANTON_OPENAI_API_KEY", "ANTON_GEMINI_API_KEY", "ANTON_MINDS_API_KEY",
)  # fmt: skip
SHORT = 8  # values this long or shorter match only as whole words
_SECRET_FIELD = re.compile(r"PASSWORD|PASSWD|PWD|SECRET|TOKEN|KEY|CREDENTIAL")


@dataclass(frozen=True, slots=True)
class Scrubbed:
    """Text with its secrets replaced, and the kind of each secret taken out (in order)."""

    text: str
    found: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.found)


def describe(found: Iterable[str]) -> str:
    """``"2 × GitHub token, AWS secret key"``: what was taken out, for a notice."""
    counts = Counter(found)
    return ", ".join(kind if n == 1 else f"{n} × {kind}" for kind, n in counts.items())


def environment_secrets(environ: Mapping[str, str]) -> dict[str, str]:
    """The secrets Anton scrubs by value from the environment: provider keys and ``DS_*`` datasource variables.

    Provider keys and unnamed ``DS_*`` values count when longer than 8 characters; a ``DS_*`` variable whose field
    names a secret (``…__PASSWORD``, ``…_TOKEN``) counts from 4 characters.
    """
    found = {}
    for name, value in environ.items():
        if not value:
            continue
        if name in PROVIDER_KEYS and len(value) > SHORT:
            found[name] = value
        elif name.startswith("DS_"):
            field = name.rsplit("__", 1)[-1] if "__" in name else name[3:]
            if len(value) > SHORT or (_SECRET_FIELD.search(field) and len(value) >= 4):
                found[name] = value
    return found


def _forms(value: str) -> tuple[set[str], set[str]]:
    """The ways `value` may be printed: (matched in any case, matched exactly as is)."""
    from html import escape  # (half a megabyte that a process with no secret to hide does without)

    loose = {value, quote(value, safe=""), quote_plus(value), json.dumps(value)[1:-1], escape(value)}
    loose.add(value.replace("\\", "\\\\"))
    exact: set[str] = set()
    raw = value.encode("utf-8")
    if len(raw) >= 5:
        for offset in range(3):  # the value may start at any byte of a longer base64 text
            for encode in (base64.b64encode, base64.urlsafe_b64encode):
                text = encode(b"\0" * offset + raw).decode("ascii")
                start = -(-4 * offset // 3)  # the first character that depends on the value alone
                core = text[start : (8 * (offset + len(raw))) // 6]  # ... up to the last one
                if len(core) >= 6:
                    exact.update((core, text[start:], text[start:].rstrip("=")))  # and as the end of the text
    return loose, exact


@lru_cache(maxsize=64)
def _value_matcher(items: tuple[tuple[str, str], ...]) -> tuple[re.Pattern[str] | None, dict[str, str], int]:
    """One regex for all known values (longest first), the marker of each form, and the longest form's length."""
    marker_of: dict[str, str] = {}
    loose: list[str] = []
    exact: list[str] = []
    short: list[str] = []
    for name, value in items:
        marker = f"[{name}]" if name else SECRET
        if len(value) <= SHORT:
            short.append(value)
            marker_of[value] = marker
            continue
        forms_loose, forms_exact = _forms(value)
        for form in forms_loose:
            marker_of.setdefault(form.lower(), marker)
        for form in forms_exact:
            marker_of.setdefault(form, marker)
        loose += forms_loose
        exact += forms_exact
    parts = []
    if exact:
        parts.append("|".join(re.escape(f) for f in sorted(set(exact), key=len, reverse=True)))
    if loose:
        parts.append("(?i:" + "|".join(re.escape(f) for f in sorted(set(loose), key=len, reverse=True)) + ")")
    if short:
        words = "|".join(re.escape(v) for v in sorted(set(short), key=len, reverse=True))
        parts.append(rf"(?<!\w)(?:{words})(?!\w)")
    longest = max((len(f) for f in [*loose, *exact, *short]), default=0)
    return (re.compile("|".join(parts)) if parts else None), marker_of, longest


class Redactor:
    """Scrubs text of the secrets it knows by value and of everything shaped like a key.

    `known` maps variable names to secret values (a plain list of values works too); `environ` is read at every
    call for provider keys and ``DS_*`` variables (the process environment unless given; ``{}`` for none).
    """

    def __init__(self, known: Mapping[str, str] | Iterable[str] = (), *, environ: Mapping[str, str] | None = None):
        pairs = known.items() if isinstance(known, Mapping) else (("", value) for value in known)
        self._known = {value: name for name, value in pairs if value and len(value) >= 4}
        self._environ = environ

    def _values(self) -> tuple[tuple[str, str], ...]:
        values = dict(self._known)
        for name, value in environment_secrets(os.environ if self._environ is None else self._environ).items():
            values.setdefault(value, name)
        return tuple(sorted(((name, value) for value, name in values.items()), key=lambda item: -len(item[1])))

    @property
    def longest_form(self) -> int:
        """Length of the longest printed form of a known value (a cut-off text may hide one that long)."""
        return _value_matcher(self._values())[2]

    def __call__(self, text: str) -> str:
        return self.scrub(text).text

    def scrub(self, text: str) -> Scrubbed:
        if not text:
            return Scrubbed(text)
        found: list[str] = []
        matcher, marker_of, _ = _value_matcher(self._values())
        if matcher is not None:

            def by_value(match: re.Match[str]) -> str:
                marker = marker_of.get(match.group(0)) or marker_of.get(match.group(0).lower()) or SECRET
                found.append(f"{marker[1:-1]} value" if marker != SECRET else "known secret")
                return marker

            text = matcher.sub(by_value, text)
        text, shapes = _scrub_shapes(text)
        return Scrubbed(text, (*found, *shapes))


def _scrub_shapes(text: str) -> tuple[str, list[str]]:
    from anton_tui import secret_patterns
    from anton_tui.secret_gates import Gate

    taken = [match.span() for match in MARKER.finditer(text)]
    hits: list[tuple[int, int, str, str]] = []
    gate = Gate(text)  # (a shape whose fixed text is nowhere in it is not looked for)
    for pattern in secret_patterns.load():
        if not gate.may_match(pattern.regex):
            continue
        for match in pattern.regex.finditer(text):
            span = pattern.span(match)
            if span is not None and not any(span[0] < end and start < span[1] for start, end in taken):
                hits.append((span[0], span[1], pattern.kind, pattern.marker))
    if not hits:
        return text, []
    merged: list[list] = []
    for start, end, kind, marker in sorted(hits, key=lambda hit: (hit[0], -hit[1])):
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
            continue
        merged.append([start, end, kind, marker])
    for start, end, _, marker in reversed(merged):
        text = text[:start] + marker + text[end:]
    return text, [kind for _, _, kind, _ in merged]


def scrub_cell(cell: Any, redactor: Redactor) -> tuple[Any, tuple[str, ...]]:
    """A copy of a scratchpad cell as the model may read it: its outputs scrubbed (the code is left as written).

    Returns the copy and the kinds of secret taken out. When the pad kept only the start of a long output, the last
    word before the cut is dropped too: it may be the first part of a secret, too short to recognise.
    """
    found: list[str] = []
    changes: dict[str, str] = {}
    for name in ("stdout", "stderr", "logs", "error"):
        value = getattr(cell, name)
        if value:
            scrubbed = redactor.scrub(value)
            changes[name] = scrubbed.text
            found += scrubbed.found
    stdout = changes.get("stdout", "")
    if stdout and cell.stdout_total_chars > len(cell.stdout):
        last_word = re.search(r"\S*$", stdout)  # matches always, perhaps empty
        cut = stdout[: len(stdout) - len(last_word.group(0) if last_word else "")]
        changes["stdout"] = cut or (
            f"... (output withheld: it could not be scrubbed safely, {cell.stdout_total_chars} chars total)"
        )
    return (dataclasses.replace(cell, **changes) if changes else cell), tuple(found)


def preload() -> None:
    """Load the pattern set now (compiling some 60 patterns, and reading the fixed text each needs); the session
    calls it in the background at warm-up."""
    from anton_tui import secret_patterns
    from anton_tui.secret_gates import required

    for pattern in secret_patterns.load():
        required(pattern.regex)
