"""The shapes of secrets the redactor looks for: detect-secrets' maintained pattern set, plus what it lacks.

detect-secrets (Yelp) keeps one regex plugin per credential kind (AWS access keys, GitHub, GitLab, Slack, Stripe,
Twilio, SendGrid, npm, PyPI, Discord, Telegram, Mailchimp, Azure, IBM, JWTs, private keys, basic-auth URLs...).
Its patterns are loaded the first time they are needed (`load()` runs in the background at warm-up): from
`detect_secrets_copy`, a copy of the installed version's patterns, when that is the version installed, else from the
package itself. Importing the package takes about 0.2 s and 6-10 MB that stay for good: its plugins import
`requests`, with some 240 modules, to check keys online, which the redactor never does. After upgrading
detect-secrets, `python -m anton_tui.secret_patterns` rewrites the copy (a test fails until then).

Kinds detect-secrets does not know are added here: fine-grained GitHub tokens, Google API keys, Anthropic and OpenAI
keys in every current form, long Stripe keys, bare AWS secret keys, Anton's ``mdb_`` keys, Google OAuth tokens,
bearer tokens and secret-named assignments.

Each pattern says what it finds (`kind`, shown to the user) and which marker replaces it: ``[REDACTED_API_KEY]`` for
keys recognised by their shape, ``[REDACTED_TOKEN]`` for other credentials, as Anton marks them.
"""

from __future__ import annotations

import math
import re
import string
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

API_KEY = "[REDACTED_API_KEY]"
TOKEN = "[REDACTED_TOKEN]"


@dataclass(frozen=True, slots=True)
class Pattern:
    kind: str
    regex: re.Pattern[str]
    marker: str = API_KEY
    group: int | None = 0  # the group that is the secret: 0 the whole match, None the longest group (see `span`)
    accept: Callable[[str], bool] | None = None  # a further test of the secret found

    def span(self, match: re.Match[str]) -> tuple[int, int] | None:
        """Where the secret is in `match`, without the quotes, spaces and ``=``/``:`` some patterns take along."""
        start, end = match.span(self.group or 0)
        if self.group is None:  # detect-secrets: a group of 8 or more characters is the secret, a shorter one a prefix
            longest = max(range(1, match.re.groups + 1), key=lambda g: len(match.group(g) or ""), default=0)
            if longest and len(match.group(longest) or "") >= 8:
                start, end = match.span(longest)
        text = match.string
        while start < end and text[start] in _EDGE:
            start += 1
        while end > start and text[end - 1] in _EDGE:
            end -= 1
        if start == end or (self.accept is not None and not self.accept(text[start:end])):
            return None
        return start, end


_EDGE = frozenset(" \t\r\n=:\"'")


def _aws_secret_like(value: str) -> bool:
    """40 base64 characters as random as an AWS secret key: mixed case, digits, few slashes, high entropy."""
    if not (any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value)):
        return False
    if value.count("/") + value.count("+") > 4:
        return False
    return _entropy(value) >= 4.4  # 99.5% of random 40-character keys; CamelCase names stay below


BASE64_CHARSET = string.ascii_letters + string.digits + "+/" + "\\-_" + "="  # detect-secrets' Base64HighEntropyString


def _entropy(value: str) -> float:
    """Shannon entropy over the base64 characters, as detect-secrets' Base64HighEntropyString works it out."""
    if not value:
        return 0.0
    entropy = 0.0
    for char in BASE64_CHARSET:
        p = value.count(char) / len(value)
        if p > 0:
            entropy += -p * math.log(p, 2)
    return entropy


_CODE_VALUE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*|None|null|true|false|True|False")


def _literal_value(value: str) -> bool:
    """A value that is a literal secret, not a name, an attribute path or a keyword of code."""
    return _CODE_VALUE.fullmatch(value) is None or (any(c.isdigit() for c in value) and "." not in value)


EXTRA = (
    Pattern("GitHub fine-grained token", re.compile(r"github_pat_[A-Za-z0-9_]{22,}")),
    Pattern("GitHub token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}")),
    Pattern("Google API key", re.compile(r"AIza[0-9A-Za-z_-]{30,}")),
    Pattern("Anthropic API key", re.compile(r"sk-ant-[A-Za-z0-9_-]{16,}")),
    Pattern("OpenAI API key", re.compile(r"(?<![A-Za-z0-9])sk-(?!ant-)[A-Za-z0-9_-]{20,}")),
    Pattern("Stripe key", re.compile(r"\b[rs]k_(?:live|test)_[0-9A-Za-z]{16,}")),
    Pattern("AWS access key", re.compile(r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b")),
    Pattern(
        "AWS secret key",
        re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"),
        accept=_aws_secret_like,
    ),
    Pattern("Anton key", re.compile(r"(?<![A-Za-z0-9])mdb_[A-Za-z0-9._-]{10,}")),
    Pattern("Google key", re.compile(r"(?<![A-Za-z0-9])AQ\.[A-Za-z0-9._-]{50}(?![A-Za-z0-9._-])")),
    Pattern("Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    Pattern(
        "private key",
        re.compile(
            r"-----BEGIN[A-Z ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[A-Z ]*PRIVATE KEY(?: BLOCK)?-----|\Z)"
        ),
        TOKEN,
    ),
    Pattern("JSON web token", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"), TOKEN),
    Pattern("Google OAuth token", re.compile(r"\bya29\.[0-9A-Za-z_-]{20,}"), TOKEN),
    Pattern("bearer token", re.compile(r"(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{16,})"), TOKEN, group=1),
    Pattern(
        "OAuth secret",
        re.compile(
            r"""(?i)["']?\b(?:(?:access|refresh|id)[-_]?token|client[-_]?secret)["']?\s*[:=]\s*["']([^"'\s]{6,})["']"""
        ),
        TOKEN,
        group=1,
    ),
    Pattern(
        "password or key in an assignment",
        re.compile(
            r"(?i)(?:API[-_]?KEY|SECRET|TOKEN|PASSWORD|PASSWD|PWD|ACCESS[-_]?KEY)[A-Z0-9_]*"
            r"""["']?\s*[=:]\s*["']?([^\s"'`,;()\[\]{}<>$]{6,})(?![(\[])"""
        ),
        TOKEN,
        group=1,
        accept=_literal_value,
    ),
)

# detect-secrets plugins left out: public IP addresses are not secrets.
_SKIPPED_PLUGINS = {"IPPublicDetector"}
_TOKEN_PLUGINS = {"JwtTokenDetector", "BasicAuthDetector", "PrivateKeyDetector"}

_loaded: tuple[Pattern, ...] | None = None
_lock = threading.Lock()


def load() -> tuple[Pattern, ...]:
    """Every pattern, detect-secrets' first; loaded once per process (thread-safe)."""
    global _loaded
    if _loaded is None:
        with _lock:
            if _loaded is None:
                _loaded = _from_detect_secrets() + EXTRA
    return _loaded


Raw = tuple[str, str, str, int]  # kind, plugin class, regex, flags


def _from_detect_secrets() -> tuple[Pattern, ...]:
    from anton_tui import detect_secrets_copy

    if installed_version() == detect_secrets_copy.VERSION:
        raw = detect_secrets_copy.PATTERNS
        return tuple(
            Pattern(kind, re.compile(regex, flags), _marker(plugin), None) for kind, plugin, regex, flags in raw
        )
    return tuple(Pattern(kind, regex, _marker(plugin), None) for kind, plugin, regex in _from_package())


def _marker(plugin: str) -> str:
    return TOKEN if plugin in _TOKEN_PLUGINS else API_KEY


def installed_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("detect-secrets")
    except PackageNotFoundError:
        return None


def _from_package() -> list[tuple[str, str, re.Pattern[str]]]:
    """(kind, plugin class, regex) of every regex plugin of the installed detect-secrets (imports the package)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import BasePlugin, RegexBasedDetector

    found: list[tuple[str, str, re.Pattern[str]]] = []
    plugins: Mapping[str, type[BasePlugin]] = get_mapping_from_secret_type_to_class()
    for kind, plugin in sorted(plugins.items()):
        if not issubclass(plugin, RegexBasedDetector) or plugin.__name__ in _SKIPPED_PLUGINS:
            continue
        # The base class declares `denylist` as an abstract property; each plugin class sets it to its patterns.
        patterns: Iterable[re.Pattern[str]] = plugin.denylist  # type: ignore[assignment]  # see the line above
        found += [(kind, plugin.__name__, regex) for regex in patterns]
    return found


def package_patterns() -> list[Raw]:
    """What `detect_secrets_copy.PATTERNS` holds, read from the installed package."""
    return [(kind, plugin, regex.pattern, regex.flags) for kind, plugin, regex in _from_package()]


COPY_PATH = Path(__file__).with_name("detect_secrets_copy.py")


def write_copy(path: Path = COPY_PATH) -> None:
    """Rewrite `detect_secrets_copy` from the installed detect-secrets."""
    lines = [
        '"""The regex patterns of detect-secrets\' plugins, copied from the version below so that the redactor need not',
        "import the package (see `secret_patterns`). detect-secrets is Yelp's, under the Apache License 2.0. Written",
        "by `python -m anton_tui.secret_patterns`; do not edit.",
        '"""',
        "",
        f"VERSION = {installed_version()!r}",
        "",
        "# kind, plugin class, regex, flags",
        "PATTERNS: tuple[tuple[str, str, str, int], ...] = (",
        *(f"    {entry!r}," for entry in package_patterns()),
        ")",
        "",
    ]
    path.write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    write_copy()
    sys.stdout.write(f"detect-secrets {installed_version()}: patterns copied\n")
