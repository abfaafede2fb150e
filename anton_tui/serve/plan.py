"""What `anton-tui serve` will do, decided from its options before anything listens: the address to bind, the token,
the URL to print for the browser, and whether that browser will let the page use its clipboard.

The rules: a loopback address (127.0.0.1, ::1, localhost) is the default; every bind needs a token unless the host is
a loopback one and `--no-token` is given; a wildcard bind (0.0.0.0, ::) is printed with an address of this machine a
browser elsewhere can open, since the wildcard itself is no address a browser can reach.
"""

from __future__ import annotations

import ipaddress
import re
import secrets
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from anton_tui.serve import TOKEN_ENV

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
MIN_TOKEN_LENGTH = 16
_TOKEN_CHARACTERS = re.compile(r"[A-Za-z0-9._~-]+")  # what goes into a URL's query and a cookie as it is
_LOOPBACK_NAMES = ("localhost", "localhost.")


class ServeUsageError(ValueError):
    """Options that cannot be served as given; the message says what to change."""


@dataclass(frozen=True)
class ServePlan:
    host: str
    port: int
    token: str | None  # None only for a loopback host with --no-token
    public_url: str | None  # the address the browser uses when a proxy or tunnel stands in front (no trailing /)
    browser_url: str  # the address to open, token included
    clipboard: bool  # whether the browser will let the page write to its clipboard (a secure context)

    @property
    def cookie_secure(self) -> bool:
        return self.browser_url.startswith("https:")


def is_loopback(host: str) -> bool:
    """Whether `host` names this machine's loopback interface only (a name other than localhost counts as not)."""
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def is_wildcard(host: str) -> bool:
    """Whether `host` is 0.0.0.0 or ::, every address of the machine (no address a browser can open)."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return False


def url_host(host: str) -> str:
    """`host` as it stands in a URL: an IPv6 address in brackets."""
    try:
        return f"[{host}]" if ipaddress.ip_address(host.strip("[]")).version == 6 else host
    except ValueError:
        return host


def machine_address(ipv6: bool = False) -> str | None:
    """An address of this machine that others can reach: the one its default route leaves from (found without
    sending anything), else one its host name resolves to; None when it has only loopback."""
    family, probe = (socket.AF_INET6, "2001:db8::1") if ipv6 else (socket.AF_INET, "192.0.2.1")
    candidates: list[str] = []
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as udp:
            udp.connect((probe, 9))  # a datagram socket's connect only picks the route and the source address
            candidates.append(str(udp.getsockname()[0]))
    except OSError:
        pass
    try:
        candidates += [str(info[4][0]) for info in socket.getaddrinfo(socket.gethostname(), None, family)]
    except OSError:
        pass
    for address in candidates:
        parsed = ipaddress.ip_address(address.split("%")[0])
        if not (parsed.is_loopback or parsed.is_unspecified or parsed.is_link_local):
            return str(parsed)
    return None


def _public_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ServeUsageError(
            f"--public-url {url}: give an http:// or https:// address, e.g. https://anton.example.org"
        )
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ServeUsageError(
            f"--public-url {url}: give the address without a path or query (the page asks for downloads at the root)"
        )
    return f"{parts.scheme}://{parts.netloc}"


def _token(environ: Mapping[str, str]) -> str:
    chosen = environ.get(TOKEN_ENV, "").strip()
    if not chosen:
        return secrets.token_urlsafe(32)
    if len(chosen) < MIN_TOKEN_LENGTH or not _TOKEN_CHARACTERS.fullmatch(chosen):
        raise ServeUsageError(
            f"{TOKEN_ENV} must be at least {MIN_TOKEN_LENGTH} characters of A-Z, a-z, 0-9, '.', '_', '~' or '-' "
            "(or unset, for a generated one)"
        )
    return chosen


def _secure_context(url: str) -> bool:
    """Whether a browser treats a page at `url` as a secure context, where it may use the clipboard."""
    parts = urlsplit(url)
    return parts.scheme == "https" or is_loopback(parts.hostname or "")


def plan(
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    public_url: str | None = None,
    no_token: bool = False,
    environ: Mapping[str, str],
    find_address: Callable[[bool], str | None] = machine_address,
) -> ServePlan:
    """The plan for these options; raises `ServeUsageError` for options that cannot be served safely."""
    if not 1 <= port <= 65535:
        raise ServeUsageError(f"--port {port}: give a port from 1 to 65535")
    if no_token and not is_loopback(host):
        raise ServeUsageError(
            f"--no-token is only for a loopback host (127.0.0.1, ::1, localhost): anyone who can reach {host} "
            "could drive the agent, which runs code on this machine"
        )
    public = _public_url(public_url) if public_url is not None else None
    if no_token and public is not None and not is_loopback(urlsplit(public).hostname or ""):
        raise ServeUsageError(
            f"--no-token with --public-url {public}: whoever reaches that address could drive the agent; keep the token"
        )
    if public is not None:
        base = public
    elif is_wildcard(host):
        ipv6 = ":" in host
        address = find_address(ipv6)
        if address is None:
            raise ServeUsageError(
                f"--host {host}: this machine has no address a browser elsewhere could open; "
                "say which with --public-url http://ADDRESS:PORT"
            )
        base = f"http://{url_host(address)}:{port}"
    else:
        base = f"http://{url_host(host)}:{port}"
    token = None if no_token else _token(environ)
    browser_url = f"{base}/" + (f"?token={token}" if token else "")
    return ServePlan(host, port, token, public, browser_url, _secure_context(base))
