"""Secrets are taken out of text, each kind of key by its shape and known values in any common encoding."""

from __future__ import annotations

import base64
import json
import random
import string
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest

from anton_tui import detect_secrets_copy, secret_patterns
from anton_tui.redact import Redactor, describe

# Made-up keys in the real shapes (none of them works anywhere).
GITHUB_PAT = "github_pat_11ABCDEFG0aBcDeFgHiJkL_" + "mNoPqRsTuVwXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ01234567"
SHAPES = {
    "GitHub fine-grained token": GITHUB_PAT,
    "GitHub token": "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "AWS secret key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKE",
    "AWS session key id": "ASIAIOSFODNN7EXAMPLE",
    "AWS access key id": "AKIAIOSFODNN7EXAMPLE",
    "Google API key": "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "Stripe live key": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "Stripe long live key": "sk_live_51H" + "a1B2c3D4e5F6g7H8i9J0" * 4,
    "Anthropic key": "sk-ant-api03-" + "Ab1_Cd2-Ef3" * 8,
    "OpenAI project key": "sk-proj-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3" * 2,
    "Slack bot token": "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "GitLab token": "glpat-" + "a1B2c3D4e5F6g7H8i9J0",
    "JSON web token": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "Anton key": "mdb_abcdefghijkl",
    "Google OAuth token": "ya29.a0AfH6SMBx1y2z3A4b5C6d7E8f9",
    "SendGrid key": "SG." + "a1B2c3D4e5F6g7H8i9J0k1" + "." + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0u1V",
}


@pytest.mark.parametrize("secret", SHAPES.values(), ids=SHAPES.keys())
def test_each_kind_of_key_is_taken_out_by_its_shape(secret: str) -> None:
    scrubbed = Redactor(environ={}).scrub(f"the key is {secret} — keep it safe")
    assert secret not in scrubbed.text
    assert scrubbed.text.startswith("the key is [REDACTED_") and scrubbed.text.endswith("] — keep it safe")
    assert len(scrubbed.found) == 1


@pytest.mark.parametrize(
    "text, marker",
    [
        ("Authorization: Bearer abcdef0123456789abcdef0123456789", "Authorization: Bearer [REDACTED_TOKEN]"),
        ('{"access_token": "ya29-not-really", "refresh_token": "1//0gAbCdEf"}', None),
        ("client_secret=GOCSPX-a1B2c3D4e5F6", "client_secret=[REDACTED_TOKEN]"),
        ("DB_PASSWORD=hunter2hunter2 and go", "DB_PASSWORD=[REDACTED_TOKEN] and go"),
        ("postgres://admin:s3cretpass@db.example.com/x", "postgres://admin:[REDACTED_TOKEN]@db.example.com/x"),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nAbCd\n-----END RSA PRIVATE KEY-----\nafter", "[REDACTED_TOKEN]\nafter"),
    ],
)
def test_credentials_in_context_are_taken_out(text: str, marker: str | None) -> None:
    scrubbed = Redactor(environ={}).scrub(text)
    assert scrubbed.found
    if marker is not None:
        assert scrubbed.text == marker
    else:
        assert "ya29-not-really" not in scrubbed.text and "1//0gAbCdEf" not in scrubbed.text


def test_known_values_are_found_as_printed_and_encoded_and_named() -> None:
    password = "hunter2hunter2"
    redactor = Redactor(environ={"DS_POSTGRES_PROD__PASSWORD": password, "DS_CUSTOM_X__FLAG": "true", "HOME": "/root"})
    for form in (password, password.upper(), quote("hunter2/hunter2", safe=""),
                 base64.b64encode(password.encode()).decode(), json.dumps(password)):
        scrubbed = redactor.scrub(f"value: {form} done")
        assert password.lower() not in scrubbed.text.lower(), form
    assert redactor("pw aHVudGVyMmh1bnRlcjI= end") == "pw [DS_POSTGRES_PROD__PASSWORD] end"
    assert redactor("flag true stays") == "flag true stays"
    named = Redactor({"ANTHROPIC_API_KEY": "sk-ant-api03-" + "x" * 40}, environ={})
    assert named("key=sk-ant-api03-" + "x" * 40) == "key=[ANTHROPIC_API_KEY]"
    assert Redactor(["my-very-private-value"], environ={})("it is my-very-private-value") == "it is [REDACTED_SECRET]"


def test_short_known_values_match_only_whole_words() -> None:
    redactor = Redactor({"DS_X__TOKEN": "abcd1"}, environ={})
    assert redactor("abcd1 and xabcd12") == "[DS_X__TOKEN] and xabcd12"


def test_provider_keys_of_the_environment_are_known_values() -> None:
    redactor = Redactor(environ={"OPENAI_API_KEY": "plainlookingvalue123"})
    assert redactor("print(plainlookingvalue123)") == "print([OPENAI_API_KEY])"


@pytest.mark.parametrize(
    "text",
    [
        "Use httpx instead of requests for async calls",
        "commit 3f786850e387550fdab836ed7e6dc881de23001b fixed it",
        "id 123e4567-e89b-12d3-a456-426614174000",
        "see /usr/local/lib/python3.11/site-packages/anton_tui/memory/files.replace.py",
        'api_key = os.environ["ANTHROPIC_API_KEY"]',
        "password: str = settings.database_password",
        "token = get_token(user)",
        "The CoinGecko API rate-limits at 50 calls/min; back off with exponential delays",
        "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "Set ANTHROPIC_API_KEY in ~/.anton/.env",
        "ThisIsAVeryLongCamelCaseIdentifierName12",
    ],
)
def test_ordinary_text_and_code_are_left_alone(text: str) -> None:
    assert Redactor(environ={}).scrub(text).text == text


def test_project_docs_read_as_they_are() -> None:
    root = Path(__file__).resolve().parent.parent
    for doc in (root / "README.md", root / "docs" / "architecture.md"):
        scrubbed = Redactor(environ={}).scrub(doc.read_text())
        assert scrubbed.found == (), (doc.name, scrubbed.found)


def test_markers_are_not_scrubbed_again_and_the_kinds_are_told() -> None:
    redactor = Redactor({"OPENAI_API_KEY": "sk-" + "q" * 30}, environ={})
    scrubbed = redactor.scrub(f"OPENAI_API_KEY={'sk-' + 'q' * 30} and {SHAPES['GitHub token']} and {GITHUB_PAT}")
    assert scrubbed.text == "OPENAI_API_KEY=[OPENAI_API_KEY] and [REDACTED_API_KEY] and [REDACTED_API_KEY]"
    assert describe(scrubbed.found) == "OPENAI_API_KEY value, GitHub Token, GitHub fine-grained token"


LOADED_IN_A_NEW_PROCESS = """
import sys
from anton_tui.redact import Redactor, preload

preload()  # as the warm-up does
scrubbed = Redactor(environ={}).scrub("twilio SK" + "0123456789abcdef" * 2 + " and " + sys.argv[1])
print(scrubbed.text, scrubbed.found, "detect_secrets" in sys.modules, "requests" in sys.modules)
"""


COPIED = detect_secrets_copy.VERSION == secret_patterns.installed_version()


def test_detect_secrets_patterns_apply_without_importing_the_package_or_requests() -> None:
    """With the copied version installed the package is not imported; with any other (a newer release, until the copy
    is rewritten) it is, and the patterns still apply."""
    args = [sys.executable, "-c", LOADED_IN_A_NEW_PROCESS, SHAPES["AWS secret key"]]
    result = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    imported = "False" if COPIED else "True"
    assert result.stdout.split()[:10] == [
        "twilio", "[REDACTED_API_KEY]", "and", "[REDACTED_API_KEY]", "('Twilio", "API", "Key',", "'AWS", "secret", "key')",
    ]  # fmt: skip
    assert result.stdout.split()[10] == imported


def test_the_patterns_in_use_are_the_installed_detect_secrets_ones() -> None:
    """The copy holds exactly what its version's package holds; any other version is read from the package (run
    `python -m anton_tui.secret_patterns` after an upgrade to copy it)."""
    from_package = secret_patterns.package_patterns()
    if COPIED:
        assert list(detect_secrets_copy.PATTERNS) == from_package, "run python -m anton_tui.secret_patterns"
    loaded = [(p.kind, p.regex.pattern, p.regex.flags) for p in secret_patterns._from_detect_secrets()]
    assert loaded == [(kind, regex, flags) for kind, _plugin, regex, flags in from_package]


def test_the_entropy_of_a_40_character_key_is_detect_secrets_own() -> None:
    from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString

    theirs = Base64HighEntropyString(limit=4.5)
    assert secret_patterns.BASE64_CHARSET == theirs.charset
    rng = random.Random(7)
    for value in ["", SHAPES["AWS secret key"], "a" * 40, *("".join(rng.choices(string.printable, k=40)) for _ in range(200))]:
        assert secret_patterns._entropy(value) == pytest.approx(theirs.calculate_shannon_entropy(value), abs=1e-12), value
