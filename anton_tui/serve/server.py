"""The web server of `anton-tui serve`: textual-serve's websocket, downloads and script, behind the access guard.

textual-serve starts one app process per websocket (one per browser tab) with the command it is given, relays the
terminal between that process and xterm.js in the page, and hands the app's downloads to the browser. This module
builds the aiohttp application from its server's public handlers with `AccessGuard` in front of every route, and
serves a page of its own: it loads nothing from elsewhere (textual-serve's page asks a font service for its font) and
takes the websocket's address from the address the browser used, so that a wildcard bind (0.0.0.0) hands the
browser an address it can open. When the server stops, every tab's app is asked to quit and waited for.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jinja2
from aiohttp import web
from textual_serve.server import Server

from anton_tui.serve.guard import AccessGuard
from anton_tui.serve.plan import ServePlan

TEMPLATES = Path(__file__).parent / "templates"
STATIC_PATH = "/static"
TABS_QUIT_WITHIN_S = 15.0  # how long stopping the server waits for the tabs' apps to quit
DEFAULT_FONT_SIZE = 16


class ListenError(OSError):
    """The address or port could not be listened on (taken, or not an address of this machine)."""


class AntonServer(Server):
    """textual-serve's `Server` for one plan: the same handlers for the tabs' websockets and downloads, our page,
    our guard, and a run that starts and stops with the caller."""

    def __init__(self, plan: ServePlan, command: str, *, title: str = "anton-tui") -> None:
        super().__init__(command, host=plan.host, port=plan.port, title=title, public_url=plan.public_url)
        self.plan = plan
        self.guard = AccessGuard(plan)
        self.pages = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True)
        self.tabs: set[asyncio.Task[Any]] = set()

    def web_app(self) -> web.Application:
        """The aiohttp application: every route behind the guard; stopping it quits the tabs' apps."""
        app = web.Application(middlewares=[self.guard.middleware])
        app.add_routes(
            [
                web.get("/", self.handle_index, name="index"),
                web.get("/ws", self.handle_websocket, name="websocket"),
                web.get("/download/{key}", self.handle_download, name="download"),
                web.static(STATIC_PATH, self.statics_path, name="static"),
            ]
        )
        app.on_shutdown.append(self.quit_tabs)
        return app

    def websocket_url(self, request: web.Request) -> str:
        """Where the page's script connects: the public URL's host, else the one the browser asked for this page
        (a wildcard bind answers at every address of the machine, and the browser knows which one it used)."""
        base = self.plan.public_url or f"{request.scheme}://{request.host}"
        scheme, rest = base.split(":", 1)
        return f"{'wss' if scheme == 'https' else 'ws'}:{rest}/ws"

    async def handle_index(self, request: web.Request) -> web.Response:
        try:
            font_size = int(request.query.get("fontsize", DEFAULT_FONT_SIZE))
        except ValueError:
            font_size = DEFAULT_FONT_SIZE
        websocket_url = self.websocket_url(request)
        page = self.pages.get_template("page.html").render(
            title=self.title, static_url=f"{STATIC_PATH}/", websocket_url=websocket_url, font_size=font_size
        )
        return web.Response(
            text=page, content_type="text/html", headers={"Content-Security-Policy": _policy(websocket_url)}
        )

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """A tab: textual-serve starts its app and relays it until the tab closes or the server stops."""
        task = asyncio.current_task()
        assert task is not None
        self.tabs.add(task)
        try:
            return await super().handle_websocket(request)
        finally:
            self.tabs.discard(task)

    async def quit_tabs(self, app: web.Application) -> None:
        """On stopping: cancel each tab's handler, which closes its websocket, asks its app to quit and waits for it."""
        for task in list(self.tabs):
            task.cancel()

    async def run(self, announce: Callable[[], None], stop: asyncio.Event | None = None) -> None:
        """Serve until SIGINT or SIGTERM (or `stop`), calling `announce` once the port listens."""
        stop = stop or asyncio.Event()
        runner = web.AppRunner(self.web_app(), handle_signals=False, shutdown_timeout=TABS_QUIT_WITHIN_S)
        await runner.setup()
        try:
            await web.TCPSite(runner, self.plan.host, self.plan.port).start()
        except OSError as exc:
            await runner.cleanup()
            reason = os.strerror(exc.errno).lower() if exc.errno else str(exc)
            raise ListenError(exc.errno, f"cannot listen on {self.plan.host} port {self.plan.port}: {reason}") from exc
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        try:
            announce()
            await stop.wait()
        finally:
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(signum)
            await runner.cleanup()


def _policy(websocket_url: str) -> str:
    """The page's Content-Security-Policy: its own script and styles, its websocket, no frames around it and no
    script from a link (a `javascript:` address in an answer opens as nothing)."""
    scheme, rest = websocket_url.split("://", 1)
    socket_origin = f"{scheme}://{rest.split('/', 1)[0]}"
    return (
        "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; font-src 'self'; "
        f"img-src 'self' data:; connect-src 'self' {socket_origin}; frame-ancestors 'none'; base-uri 'none'; "
        "form-action 'none'"
    )
