"""`/conversation export` in a browser tab: the real app served by `anton-tui serve`'s server hands the Markdown to
the browser as a download (textual-serve's delivery), which the page fetches behind the token."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys

from anton_tui.agent.conversation_shelf import ConversationShelf
from anton_tui.serve import TOKEN_ENV
from anton_tui.serve.plan import plan
from anton_tui.serve.server import AntonServer
from tests.fakellm import Reply
from tests.session_helpers import PLANNER, make_session, quiet_coder, run_turn
from tests.test_serve_guard import COOKIE, TOKEN, client_for, delivery_key, read_until
from tests.tui.e2e_support import project_dir, save_global_env

APP = shlex.join([sys.executable, "-m", "anton_tui", "--continue"])


async def test_the_export_downloads_in_the_browser_when_the_app_is_served(fake_llm) -> None:
    save_global_env(fake_llm)
    quiet_coder(fake_llm)
    fake_llm.queue(Reply.text("Canberra — not Sydney."), model=PLANNER)
    session = make_session(fake_llm, episodic_memory=True)
    await run_turn(session, "Capital of Australia?")
    session_id = str(session.session_id)
    await session.close()

    served = plan(environ={TOKEN_ENV: TOKEN}, find_address=lambda ipv6: "192.0.2.7")  # type: ignore[arg-type]
    client = await client_for(AntonServer(served, APP))
    try:
        client.session.cookie_jar.update_cookies({COOKIE: TOKEN})
        socket = await client.ws_connect("/ws?width=120&height=40",
                                         headers={"Origin": f"http://{client.host}:{client.port}"})  # fmt: skip
        await read_until(socket, b"Resumed")  # the conversation is in the chat: the app is ready
        await asyncio.sleep(0.5)
        await socket.send_str(json.dumps(["stdin", "\x1b[200~/conversation export\x1b[201~"]))
        await asyncio.sleep(0.3)
        await socket.send_str(json.dumps(["stdin", "\r"]))
        key = await delivery_key(socket, [])
        response = await client.get(f"/download/{key}", cookies={COOKIE: TOKEN})
        assert response.status == 200
        assert response.headers["Content-Disposition"] == f"attachment; filename=conversation-{session_id}.md"
        text = await response.text()
        assert text == ConversationShelf(project_dir() / ".anton" / "episodes").export(session_id)
        assert "Canberra — not Sydney." in text
        assert not (project_dir() / f"conversation-{session_id}.md").exists(), "downloaded, not written"
        await socket.close()
    finally:
        await client.close()
