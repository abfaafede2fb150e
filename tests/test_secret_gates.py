"""Skipping the secret shapes whose fixed text a text lacks finds the same secrets as running every shape: checked on
every kind of key in prose, in any case, with the characters regexes match to ASCII letters, and on a memory file's
worth of lessons (where it takes the time of the scan from hundreds of milliseconds to tens)."""

from __future__ import annotations

import random
import re

import pytest

from anton_tui import secret_gates, secret_patterns
from anton_tui.redact import Redactor
from anton_tui.secret_gates import folded, required
from tests.test_redact import SHAPES

CONTEXTS = [
    "Authorization: Bearer abcdef0123456789abcdef0123456789",
    "client_secret=GOCSPX-a1B2c3D4e5F6",
    "DB_PASSWORD=hunter2hunter2 and go",
    "postgres://admin:s3cretpass@db.example.com/x",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nAbCd\n-----END RSA PRIVATE KEY-----\nafter",
    '{"access_token": "ya29-not-really", "refresh_token": "1//0gAbCdEf"}',
    "ibm_cloud_iam_key = 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH'",
    "cloudant_password='abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz01'",
    "softlayer_api_key: abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123",
    "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1 telegram",
    "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs discord",
    "npm //registry.npmjs.org/:_authToken=abcdef01-2345-6789-abcd-ef0123456789",
]


def without_gates(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(secret_gates.Gate, "may_match", lambda self, regex: True)


def variants(text: str, rng: random.Random) -> list[str]:
    """The text as written, upper and lower case, and with the letters regexes match without case (İ ı ſ K)."""
    special = text.replace("i", "\u0131").replace("s", "\u017f").replace("k", "\u212a").replace("I", "\u0130")
    mixed = "".join(char.upper() if rng.random() < 0.5 else char for char in text)
    return [text, text.upper(), text.lower(), special, mixed]


def test_the_same_secrets_are_found_with_and_without_the_gates(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(3)
    texts = []
    for secret in [*SHAPES.values(), *CONTEXTS]:
        for variant in variants(secret, rng):
            texts += [variant, f"the lesson says {variant} — keep it safe", f"{variant}\n- next lesson"]
    redactor = Redactor(environ={})
    gated = [redactor.scrub(text) for text in texts]
    without_gates(monkeypatch)
    assert [redactor.scrub(text) for text in texts] == gated
    assert sum(bool(result.found) for result in gated) > len(texts) // 2  # the corpus does hold secrets


def test_every_shape_with_fixed_text_is_told_by_it_and_never_without_it() -> None:
    for pattern in secret_patterns.load():
        needed = required(pattern.regex)
        if needed is None:
            continue
        for secret in [*SHAPES.values(), *CONTEXTS]:
            for text in (secret, secret.upper(), secret.lower()):
                if pattern.regex.search(text):
                    assert any(piece in folded(text) for piece in needed), (pattern.kind, text)


@pytest.mark.parametrize(
    "regex, needed",
    [
        (r"sk-ant-[a-z]{10}", ("sk-ant-",)),
        (r"(?i)\b(?:api|secret)_?key\s*=", ("key",)),  # the longest piece every match holds
        (r"(?:ghp|gho)_[A-Za-z0-9]{36}", ("gh",)),  # (the parser takes the branches' common start out)
        (r"(?:token|secret)=\w+", ("secret", "token")),
        (r"(?:abc)?def", ("def",)),
        (r"[A-Za-z0-9/+]{40}", None),
        (r"x", None),
    ],
)
def test_the_fixed_text_a_regex_needs(regex: str, needed: tuple[str, ...] | None) -> None:
    assert required(re.compile(regex)) == needed


def lessons_file(count: int, rng: random.Random) -> list[str]:
    regions = ["eu-west", "us-east", "ap-south"]
    return [f"- Lesson {i}: the export for {rng.choice(regions)} needs batch size {rng.randrange(500)}\n"
            for i in range(count)]  # fmt: skip


def test_a_long_file_finds_the_same_secrets_with_and_without_the_gates(monkeypatch: pytest.MonkeyPatch) -> None:
    """A text past `LARGE` is tested through its distinct words and its longest word: each secret, put alone in a
    memory file's worth of lessons, is found there exactly as without the gates."""
    rng = random.Random(7)
    lines = lessons_file(3000, rng)
    assert len("".join(lines)) > secret_gates.LARGE
    redactor = Redactor(environ={})
    texts = []
    for secret in [*SHAPES.values(), *CONTEXTS]:
        at = rng.randrange(len(lines))
        texts.append("".join([*lines[:at], f"- the lesson says {secret}\n", *lines[at:]]))
    texts.append("".join(lines))
    gated = [redactor.scrub(text) for text in texts]
    without_gates(monkeypatch)
    assert [redactor.scrub(text) for text in texts] == gated
    assert all(result.found for result in gated[:-1]) and not gated[-1].found


def test_a_long_file_of_short_words_skips_the_shapes_that_need_a_long_word() -> None:
    rng = random.Random(8)
    text = "".join(lessons_file(3000, rng))
    gate = secret_gates.Gate(text)
    aws = next(pattern.regex for pattern in secret_patterns.load() if pattern.kind == "AWS secret key")
    assert secret_gates.solid_width(aws) == 40 and not gate.may_match(aws)
    longer = secret_gates.Gate(text + "- a path: " + "a/" * 20 + "\n")  # one word of 40 characters
    assert longer.may_match(aws)


@pytest.mark.parametrize(
    "regex, width",
    [
        (r"[A-Za-z0-9/+]{40}", 40),
        (r"(?<![A-Za-z0-9])\d{8,10}:[0-9A-Za-z_-]{35}", 44),
        (r"\S{5}x", 6),
        (r"(?i)[a-z]{3}(?=\b)", 3),
        (r"a\s+b", None),  # may hold a space
        (r"[^a]{3}", None),
        (r".{4}", None),
        (r"[\x00-\x7f]{3}", None),
        (r"key (\w+)", None),
    ],
)
def test_the_shortest_match_of_a_regex_that_never_holds_a_space(regex: str, width: int | None) -> None:
    assert secret_gates.solid_width(re.compile(regex)) == width
