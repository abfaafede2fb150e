"""The token check in front of every route of `anton-tui serve`, through the real server: textual-serve's handlers
behind `AccessGuard`, a real app process per websocket (a small Textual app that hands over a download the way the
app's export does), and aiohttp's client. Missing or wrong tokens get 401 on the page, the script, the websocket and
the download; the right one gets the app."""

from __future__ import annotations

import asyncio
import re
import shlex
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from aiohttp.test_utils import TestClient, TestServer

from anton_tui.serve import TOKEN_ENV
from anton_tui.serve.guard import COOKIE_PREFIX, token_matches
from anton_tui.serve.plan import plan
from anton_tui.serve.server import AntonServer
from tests.serve_tiny_app import EXPORTED, READY

TOKEN = "the-right-token-0123456789"
TINY_APP = shlex.join([sys.executable, str(Path(__file__).with_name("serve_tiny_app.py"))])
COOKIE = f"{COOKIE_PREFIX}8000"


def anton_server(**options: object) -> AntonServer:
    served = plan(environ={TOKEN_ENV: TOKEN}, find_address=lambda ipv6: "192.0.2.7", **options)  # type: ignore[arg-type]
    return AntonServer(served, TINY_APP)


class ServerClient(TestClient):
    """aiohttp's test client for one server, which knows the processes this test process had before it started."""

    def __init__(self, server: AntonServer) -> None:
        super().__init__(TestServer(server.web_app(), host="127.0.0.1"))
        self.processes_before = child_processes()

    async def close(self) -> None:
        """Stop the server, then wait for the tabs' apps to be gone, so that asyncio learns of their ends in time."""
        await super().close()
        for _ in range(200):
            if not child_processes() - self.processes_before:
                break
            await asyncio.sleep(0.05)
        assert not child_processes() - self.processes_before, "every tab's app has quit"
        await asyncio.sleep(0.1)


async def client_for(server: AntonServer) -> ServerClient:
    client = ServerClient(server)
    await client.start_server()
    return client


def child_processes() -> set[int]:
    """The children of every thread of this process (a thread that ends while they are read is passed over)."""
    found: set[int] = set()
    for task in Path("/proc/self/task").iterdir():
        try:
            found.update(int(pid) for pid in (task / "children").read_text().split())
        except FileNotFoundError:
            continue
    return found


@pytest.fixture
async def client() -> AsyncIterator[ServerClient]:
    test_client = await client_for(anton_server())
    yield test_client
    await test_client.close()


def websocket_url(page: str) -> str:
    found = re.search(r'data-session-websocket-url="([^"]+)"', page)
    assert found, page
    return found.group(1)


async def read_until(socket: aiohttp.ClientWebSocketResponse, wanted: bytes) -> tuple[bytes, list[object]]:
    """The terminal bytes and the text messages received until `wanted` has appeared in the bytes."""
    screen, messages = b"", list[object]()
    while wanted not in screen:
        message = await socket.receive(timeout=30)
        if message.type == aiohttp.WSMsgType.BINARY:
            screen += message.data
        elif message.type == aiohttp.WSMsgType.TEXT:
            messages.append(message.json())
        else:
            raise AssertionError(f"the websocket ended before {wanted!r}: {message}")
    return screen, messages


async def delivery_key(socket: aiohttp.ClientWebSocketResponse, messages: list[object]) -> str:
    """The key of the download the app started (textual-serve's `deliver_file_start` message to the page)."""
    while True:
        for message in messages:
            if isinstance(message, list) and message[0] == "deliver_file_start":
                return str(message[1])
        received = await socket.receive(timeout=30)
        assert received.type in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT), received
        messages = [received.json()] if received.type == aiohttp.WSMsgType.TEXT else []


def test_tokens_compare_whole_and_never_fail_on_odd_input() -> None:
    assert token_matches(TOKEN, TOKEN)
    assert not token_matches(None, TOKEN)
    assert not token_matches("", TOKEN)
    assert not token_matches(TOKEN[:-1], TOKEN)
    assert not token_matches(TOKEN + "x", TOKEN)
    assert not token_matches("tökén-ünicode-0123456789", TOKEN)


async def test_the_page_needs_the_token_and_takes_it_out_of_the_address(client: TestClient) -> None:
    for query, cookies in (("", {}), ("?token=wrong-token-0123456789", {}), ("", {COOKIE: "wrong-token-0123456789"})):
        response = await client.get(f"/{query}", cookies=cookies, allow_redirects=False)
        assert response.status == 401, (query, cookies)
        assert "needs its token" in await response.text()

    response = await client.get(f"/?fontsize=20&token={TOKEN}", allow_redirects=False)
    assert response.status == 303
    assert response.headers["Location"] == "/?fontsize=20", "on to the same page, without the token"
    cookie = response.cookies[COOKIE]
    assert cookie.value == TOKEN
    assert cookie["httponly"] and cookie["samesite"] == "Strict" and cookie["path"] == "/"

    response = await client.get("/?fontsize=20", cookies={COOKIE: TOKEN})
    assert response.status == 200
    page = await response.text()
    assert websocket_url(page) == f"ws://{client.host}:{client.port}/ws"
    assert 'data-font-size="20"' in page and "/static/js/textual.js" in page
    assert "fonts.googleapis" not in page, "the page loads nothing from elsewhere"
    policy = response.headers["Content-Security-Policy"]
    assert "script-src 'self';" in policy and "frame-ancestors 'none'" in policy


async def test_the_page_script_needs_the_token(client: TestClient) -> None:
    assert (await client.get("/static/js/textual.js")).status == 401
    assert (await client.get("/static/js/textual.js", cookies={COOKIE: "wrong-token-0123456789"})).status == 401
    response = await client.get("/static/js/textual.js", cookies={COOKIE: TOKEN})
    assert response.status == 200 and "sessionWebsocketUrl" in await response.text()


async def test_the_websocket_and_the_download_need_the_token(client: TestClient) -> None:
    for cookies, status in (({}, 401), ({COOKIE: "wrong-token-0123456789"}, 401)):
        client.session.cookie_jar.clear()
        client.session.cookie_jar.update_cookies(cookies)
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await client.ws_connect("/ws?width=80&height=24")
        assert refused.value.status == status
    client.session.cookie_jar.update_cookies({COOKIE: TOKEN})
    origin = f"http://{client.host}:{client.port}"
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await client.ws_connect("/ws?width=80&height=24", headers={"Origin": "http://evil.example"})
    assert refused.value.status == 403, "another site's page may not open a tab, token cookie or not"

    socket = await client.ws_connect("/ws?width=80&height=24", headers={"Origin": origin})
    _, messages = await read_until(socket, READY.encode())
    key = await delivery_key(socket, messages)

    client.session.cookie_jar.clear()
    assert (await client.get(f"/download/{key}")).status == 401
    assert (await client.get(f"/download/{key}", cookies={COOKIE: "wrong-token-0123456789"})).status == 401
    response = await client.get(f"/download/{key}", cookies={COOKIE: TOKEN})
    assert response.status == 200, "the refused tries did not use the download up"
    assert await response.text() == EXPORTED
    assert response.headers["Content-Disposition"] == "attachment; filename=my-export-.txt"
    await socket.close()


async def test_programs_may_give_the_token_in_the_query() -> None:
    test_client = await client_for(anton_server())
    try:
        socket = await test_client.ws_connect(f"/ws?token={TOKEN}&width=80&height=24")
        await read_until(socket, READY.encode())
        await socket.close()
        assert (await test_client.get(f"/static/js/textual.js?token={TOKEN}")).status == 200
    finally:
        await test_client.close()


async def test_without_a_token_only_loopback_names_and_same_site_websockets_get_in() -> None:
    test_client = await client_for(anton_server(no_token=True))
    try:
        assert (await test_client.get("/")).status == 200
        rebound = await test_client.get("/", headers={"Host": f"evil.example:{test_client.port}"})
        assert rebound.status == 403, "a site's name resolving to 127.0.0.1 does not reach a tokenless server"
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await test_client.ws_connect("/ws", headers={"Origin": "http://evil.example"})
        assert refused.value.status == 403
    finally:
        await test_client.close()


async def test_the_page_connects_back_to_the_address_the_browser_used() -> None:
    test_client = await client_for(anton_server(host="0.0.0.0", port=8123))
    cookies = {f"{COOKIE_PREFIX}8123": TOKEN}
    try:
        for host in ("192.0.2.7:8123", "[2001:db8::7]:8123", "anton-box.lan:8123"):
            page = await (await test_client.get("/", headers={"Host": host}, cookies=cookies)).text()
            assert websocket_url(page) == f"ws://{host}/ws", "never ws://0.0.0.0, which no browser opens"
    finally:
        await test_client.close()
    test_client = await client_for(anton_server(public_url="https://anton.example.org"))
    try:
        page = await (await test_client.get("/", cookies={COOKIE: TOKEN})).text()
        assert websocket_url(page) == "wss://anton.example.org/ws"
    finally:
        await test_client.close()


def test_textual_serve_still_offers_what_anton_tui_serve_relies_on() -> None:
    """A tripwire for upgrades of textual-serve: the public handlers the routes use, and what our page (which takes
    the place of textual-serve's) gives its script: the websocket address and font size as data attributes of the
    terminal's element, the body classes it sets on the first bytes and at the end, and downloads at the root."""
    server = anton_server()
    for handler in ("handle_websocket", "handle_download"):
        assert callable(getattr(server, handler)), handler
    script = (Path(server.statics_path) / "js" / "textual.js").read_text()
    for relied_on in ("dataset.sessionWebsocketUrl", "dataset.fontSize", '"-first-byte"', '"-closed"',
                      "deliver_file_start", "/download/${", ".textual-terminal"):  # fmt: skip
        assert relied_on in script, relied_on
    assert (Path(server.statics_path) / "fonts" / "RobotoMono-VariableFont_wght.ttf").is_file()
