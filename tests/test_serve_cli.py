"""`anton-tui serve` as a user runs it: options refused with a clear message, nothing of the server loaded unless it
serves, and on a non-loopback bind (this machine's own address where it has one) the token asked for on the page,
the websocket and the downloads, the tabs' apps quitting when it stops."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp
import pytest

from anton_tui.serve.guard import COOKIE_PREFIX
from anton_tui.serve.plan import machine_address
from tests.serve_support import alive, free_port, start_serve

SERVER_MODULES = ("aiohttp", "textual_serve", "jinja2", "yarl", "multidict")

_PROBE = """
import contextlib, io, json, sys
out, err = io.StringIO(), io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    try:
        if sys.argv[1] == "import":
            import anton_tui.tui.app
            code = 0
        else:
            from anton_tui.cli import main
            code = main(sys.argv[1:])
    except SystemExit as exc:
        code = exc.code
print(json.dumps({"code": code, "out": out.getvalue(), "err": err.getvalue(), "modules": sorted(sys.modules)}))
"""


def probe(*args: str) -> dict:
    result = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def server_modules(modules: list[str]) -> list[str]:
    return [m for m in modules if m.split(".")[0] in SERVER_MODULES]


@pytest.mark.parametrize("args", [("--version",), ("--help",), ("serve", "--help"), ("import",)])
def test_nothing_of_the_server_loads_unless_it_serves(args: tuple[str, ...]) -> None:
    report = probe(*args)
    assert report["code"] == 0
    assert server_modules(report["modules"]) == [], "textual-serve and aiohttp load only when serving starts"
    if args == ("serve", "--help"):
        for option in ("--host", "--port", "--folder", "--public-url", "--no-token", "--demo"):
            assert option in report["out"]
    if args == ("--help",):
        assert "anton-tui serve" in report["out"]


def test_no_token_on_a_non_loopback_host_is_refused_before_anything_listens() -> None:
    port = free_port()
    report = probe("serve", "--host", "0.0.0.0", "--port", str(port), "--no-token")
    assert report["code"] == 2
    assert "--no-token is only for a loopback host" in report["err"]
    assert server_modules(report["modules"]) == []


def test_a_missing_folder_and_a_bad_public_url_are_usage_errors(tmp_path: Path) -> None:
    report = probe("serve", "--folder", str(tmp_path / "missing"))
    assert report["code"] == 2 and "no such folder" in report["err"]
    report = probe("serve", "--public-url", "https://anton.example.org/sub/path")
    assert report["code"] == 2 and "without a path" in report["err"]


def test_a_port_in_use_is_said_in_one_line(project_dir: Path) -> None:
    port = free_port()
    first = start_serve("--port", str(port), "--demo", cwd=project_dir)
    try:
        second = subprocess.run(
            [sys.executable, "-m", "anton_tui", "serve", "--port", str(port)],
            cwd=project_dir, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    finally:
        assert first.stop() == 0
    assert second.returncode == 1
    assert second.stderr.strip() == f"anton-tui serve: cannot listen on 127.0.0.1 port {port}: address already in use"


def test_the_server_loads_no_textual() -> None:
    """The serving process is engine-side: the tabs' apps run Textual, the server only relays them."""
    script = "import sys, anton_tui.serve.server; print(sorted({m.split('.')[0] for m in sys.modules}))"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    loaded = result.stdout
    assert "'aiohttp'" in loaded and "'textual_serve'" in loaded
    assert "'textual'" not in loaded


@pytest.mark.timeout(240)
async def test_on_a_non_loopback_bind_every_route_needs_the_token_and_stopping_quits_the_tabs(
    project_dir: Path,
) -> None:
    address = machine_address()
    port = free_port("0.0.0.0")
    served = start_serve("--host", "0.0.0.0", "--port", str(port), "--demo", cwd=project_dir)
    try:
        url = urlsplit(served.url)
        host = address or "127.0.0.1"
        if address is not None:
            assert url.hostname == address, "a wildcard bind prints an address of this machine"
        assert url.port == port and url.query.startswith("token=")
        token = url.query.removeprefix("token=")
        base = f"http://{host}:{port}"
        cookie = {f"{COOKIE_PREFIX}{port}": token}
        wrong = {f"{COOKIE_PREFIX}{port}": "not-the-token-0123456789"}

        async with aiohttp.ClientSession() as session:
            for path, cookies in (("/", {}), ("/?token=not-the-token-0123456789", {}), ("/", wrong)):
                async with session.get(base + path, cookies=cookies, allow_redirects=False) as response:
                    assert response.status == 401, (path, cookies)
            async with session.get(f"{base}/?token={token}", allow_redirects=False) as response:
                assert response.status == 303 and response.headers["Location"] == "/"
                assert response.cookies[f"{COOKIE_PREFIX}{port}"].value == token
        async with aiohttp.ClientSession(cookies=cookie) as session, session.get(base + "/") as response:
            page = await response.text()
            assert response.status == 200
            assert f'data-session-websocket-url="ws://{host}:{port}/ws"' in page, "the address the browser used"

        for cookies in ({}, wrong):
            async with aiohttp.ClientSession(cookies=cookies) as session:
                with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                    await session.ws_connect(f"ws://{host}:{port}/ws")
                assert refused.value.status == 401
                for key_cookies, status in ((cookies, 401), (cookie, 404)):
                    async with session.get(f"{base}/download/0123abcd", cookies=key_cookies) as response:
                        assert response.status == status, "past the token, textual-serve knows no such download"
        assert served.tab_apps == set(), "a refused websocket starts no app"

        async with aiohttp.ClientSession(cookies=cookie) as session:
            socket = await session.ws_connect(f"ws://{host}:{port}/ws?width=120&height=40", headers={"Origin": base})
            screen = b""
            while b"Demo replay" not in screen:
                message = await socket.receive(timeout=60)
                assert message.type in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT), message
                screen += message.data if message.type == aiohttp.WSMsgType.BINARY else b""
            [app] = served.tab_apps
            assert alive(app)
            assert served.stop() == 0
            assert not alive(app), "stopping the server quits the tabs' apps"
            while (message := await socket.receive(timeout=10)).type == aiohttp.WSMsgType.BINARY:
                pass  # the last frames the app painted
            assert message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED), "and closes their tabs"
    finally:
        served.stop()
    assert "Traceback" not in "".join(served.output)


def test_the_tabs_inherit_no_token_from_the_environment(project_dir: Path) -> None:
    """The token stays with the server: the apps it starts, and the code they run, never see it."""
    env = {**os.environ, "ANTON_SERVE_TOKEN": "a-token-of-the-users-0123"}
    port = free_port()
    served = start_serve("--port", str(port), "--demo", cwd=project_dir, env=env)
    try:
        assert served.url.endswith("?token=a-token-of-the-users-0123")

        async def environment_of_a_tab() -> dict[str, str]:
            cookies = {f"{COOKIE_PREFIX}{port}": "a-token-of-the-users-0123"}
            async with aiohttp.ClientSession(cookies=cookies) as session:
                socket = await session.ws_connect(f"ws://127.0.0.1:{port}/ws")
                deadline = time.monotonic() + 60
                while not served.tab_apps and time.monotonic() < deadline:
                    await asyncio.sleep(0.1)
                [app] = served.tab_apps
                variables = Path(f"/proc/{app}/environ").read_text().split("\0")
                await socket.close()
                return dict(item.split("=", 1) for item in variables if "=" in item)

        environ = asyncio.run(environment_of_a_tab())
        assert "ANTON_SERVE_TOKEN" not in environ
        assert environ["ANTON_SERVED"] == "clipboard", "a loopback page has the browser's clipboard"
    finally:
        assert served.stop() == 0
