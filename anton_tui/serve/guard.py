"""The check in front of every route `anton-tui serve` answers: the page, the websocket that drives a tab's app, each
download, and the page's script and styles.

A request passes with the right token, from the `?token=` of the address printed at start or from the cookie the
page sets when opened with it (websockets and downloads carry that cookie; textual-serve's page builds their URLs
without a query of ours). Tokens are compared in constant time. A page opened with the token in its address is sent
on to the same address without it, so the token leaves the address bar and the browser's history.

Two checks apply with or without a token. A websocket whose `Origin` is another site's is refused: the page of any
site the user visits may try to open one to a local port. Without a token (loopback only), a request whose `Host`
is not a loopback name is refused too: a site's own name made to resolve to 127.0.0.1 would otherwise reach us.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from aiohttp import web

from anton_tui.serve.plan import ServePlan, is_loopback

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

TOKEN_QUERY = "token"
COOKIE_PREFIX = "anton_tui_token_"  # + the port: two servers on one host keep a cookie each

_DENIED_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>anton-tui: {title}</title></head>
<body><h1>{status} {title}</h1><p>{text}</p></body></html>
"""
_NO_TOKEN = (
    "This anton-tui needs its token. Open the address <code>anton-tui serve</code> printed when it started "
    "(it ends in <code>?token=…</code>)."
)
_OTHER_SITE = "A page of another site may not drive this anton-tui."
_NOT_LOOPBACK = (
    "This anton-tui runs without a token and answers only at a loopback address (127.0.0.1, ::1, localhost)."
)
_HEADERS = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff"}


def token_matches(given: str | None, expected: str) -> bool:
    """Whether `given` is the token, compared in constant time (its length aside)."""
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


def denied(status: int, title: str, text: str) -> web.Response:
    """A plain page saying why a request was refused."""
    body = _DENIED_PAGE.format(status=status, title=title, text=text)
    return web.Response(status=status, text=body, content_type="text/html", headers=_HEADERS)


def _host_name(netloc: str) -> str:
    return urlsplit(f"//{netloc}").hostname or ""


class AccessGuard:
    """The aiohttp middleware for one server: `middleware` goes in front of every route."""

    def __init__(self, plan: ServePlan) -> None:
        self.token = plan.token
        self.cookie = f"{COOKIE_PREFIX}{plan.port}"
        self.cookie_secure = plan.cookie_secure
        self.public_netloc = urlsplit(plan.public_url).netloc.lower() if plan.public_url else None

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        refusal = self.refusal(request)
        if refusal is not None:
            return refusal
        if self.token is not None and TOKEN_QUERY in request.query and self._is_page(request):
            return self._without_token_in_address(request)
        response = await handler(request)
        for name, value in _HEADERS.items():
            if not response.prepared:
                response.headers.setdefault(name, value)
        return response

    def refusal(self, request: web.Request) -> web.Response | None:
        """The answer to a request that may not pass, or None."""
        if self._is_websocket(request) and not self._same_site(request):
            return denied(403, "Forbidden", _OTHER_SITE)
        if self.token is None:
            return None if self._loopback_host(request) else denied(403, "Forbidden", _NOT_LOOPBACK)
        given = request.query.get(TOKEN_QUERY, request.cookies.get(self.cookie))
        return None if token_matches(given, self.token) else denied(401, "Unauthorized", _NO_TOKEN)

    def _without_token_in_address(self, request: web.Request) -> web.Response:
        """Sends the browser on to the same address without the token, with the cookie that carries it from now."""
        assert self.token is not None
        location = str(request.rel_url.without_query_params(TOKEN_QUERY))
        response = web.Response(status=303, headers={**_HEADERS, "Location": location})
        response.set_cookie(
            self.cookie, self.token, path="/", httponly=True, samesite="Strict", secure=self.cookie_secure
        )
        return response

    @classmethod
    def _is_page(cls, request: web.Request) -> bool:
        return request.method == "GET" and request.path == "/" and not cls._is_websocket(request)

    @staticmethod
    def _is_websocket(request: web.Request) -> bool:
        return request.headers.get("Upgrade", "").lower() == "websocket"

    def _same_site(self, request: web.Request) -> bool:
        origin = request.headers.get("Origin")
        if origin is None:  # not sent by a browser: a program, which needs the token like anyone
            return True
        netloc = urlsplit(origin).netloc.lower()
        return netloc == request.host.lower() or (self.public_netloc is not None and netloc == self.public_netloc)

    @staticmethod
    def _loopback_host(request: web.Request) -> bool:
        return is_loopback(_host_name(request.host.lower()))
