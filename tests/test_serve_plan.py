"""What `anton-tui serve` decides from its options: loopback by default, a token everywhere unless --no-token on a
loopback host, an address a browser can open for a wildcard bind, and whether the page will have a clipboard."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from anton_tui.serve import TOKEN_ENV
from anton_tui.serve.plan import ServeUsageError, is_loopback, is_wildcard, machine_address, plan, url_host


def no_address(ipv6: bool) -> str | None:
    return None


def test_by_default_it_binds_loopback_with_a_generated_token_in_the_printed_url() -> None:
    first, second = plan(environ={}), plan(environ={})
    assert (first.host, first.port) == ("127.0.0.1", 8000)
    assert first.token is not None and len(first.token) >= 40
    assert first.token != second.token, "a new token each time"
    assert parse_qs(urlsplit(first.browser_url).query) == {"token": [first.token]}
    assert first.browser_url.startswith("http://127.0.0.1:8000/?")
    assert first.clipboard, "a loopback page is a secure context: the browser lets it use the clipboard"


def test_the_token_can_come_from_the_environment_and_must_be_long_enough() -> None:
    chosen = "a-long-enough-token-of-ours"
    assert plan(environ={TOKEN_ENV: chosen}).token == chosen
    for bad in ("short", "has spaces in it, sixteen+", "semi;colon;sixteen+chars"):
        with pytest.raises(ServeUsageError, match=TOKEN_ENV):
            plan(environ={TOKEN_ENV: bad})


def test_no_token_only_on_a_loopback_host() -> None:
    for host in ("127.0.0.1", "::1", "localhost", "127.0.0.2"):
        served = plan(host=host, no_token=True, environ={})
        assert served.token is None and "token" not in served.browser_url
    for host in ("0.0.0.0", "192.0.2.7", "::", "myhost.example"):
        with pytest.raises(ServeUsageError, match="--no-token is only for a loopback host"):
            plan(host=host, no_token=True, environ={}, find_address=no_address)
    with pytest.raises(ServeUsageError, match="--no-token with --public-url"):
        plan(no_token=True, public_url="https://tunnel.example.org", environ={})
    assert plan(no_token=True, public_url="http://localhost:9000", environ={}).token is None, "an SSH tunnel's end"


def test_a_wildcard_bind_prints_an_address_of_this_machine_and_the_page_has_no_clipboard() -> None:
    served = plan(host="0.0.0.0", port=8123, environ={}, find_address=lambda ipv6: "192.0.2.7")
    assert served.host == "0.0.0.0"
    assert served.browser_url.startswith("http://192.0.2.7:8123/?token=")
    assert not served.clipboard, "plain http from another machine: no clipboard"
    six = plan(host="::", port=8123, environ={}, find_address=lambda ipv6: "2001:db8::7" if ipv6 else None)
    assert six.browser_url.startswith("http://[2001:db8::7]:8123/?token=")


def test_a_wildcard_bind_without_an_address_asks_for_a_public_url() -> None:
    with pytest.raises(ServeUsageError, match="--public-url"):
        plan(host="0.0.0.0", environ={}, find_address=no_address)
    served = plan(host="0.0.0.0", public_url="https://anton.example.org/", environ={}, find_address=no_address)
    assert served.public_url == "https://anton.example.org"
    assert served.browser_url.startswith("https://anton.example.org/?token=")
    assert served.clipboard and served.cookie_secure, "https is a secure context; the cookie is https-only"


def test_a_public_url_is_an_origin_without_path() -> None:
    for bad in ("ftp://x.example", "anton.example.org", "https://x.example/anton", "https://x.example/?a=1"):
        with pytest.raises(ServeUsageError, match="--public-url"):
            plan(public_url=bad, environ={})


def test_ports_out_of_range_are_refused() -> None:
    for port in (0, 70000):
        with pytest.raises(ServeUsageError, match="--port"):
            plan(port=port, environ={})


def test_host_kinds() -> None:
    assert [is_loopback(h) for h in ("127.0.0.1", "::1", "[::1]", "LOCALHOST", "10.0.0.1", "evil.example")] == [
        True, True, True, True, False, False,
    ]  # fmt: skip
    assert [is_wildcard(h) for h in ("0.0.0.0", "::", "127.0.0.1", "example.org")] == [True, True, False, False]
    assert (url_host("::1"), url_host("10.0.0.1"), url_host("example.org")) == ("[::1]", "10.0.0.1", "example.org")


def test_the_machine_address_is_never_loopback() -> None:
    address = machine_address()
    assert address is None or not is_loopback(address)
