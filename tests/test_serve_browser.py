"""`anton-tui serve` in a real browser: Debian's Chromium, headless, driven by Playwright (which brings no browser of
its own here: it is pointed at /usr/bin/chromium). The tests wait for the app's own text in the page's terminal, send
the demo's first message, see the answer, copy it, and open a second tab.

The page draws the terminal on a canvas, so its text is read from xterm.js's buffer: a script added before the page's
own catches the terminal object textual-serve's script creates (`HOOK`).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from anton_tui.serve.plan import machine_address
from tests.fakellm import Reply
from tests.fakellm.server import FakeLLMServer
from tests.serve_support import Served, free_port, start_serve

CHROMIUM = shutil.which("chromium")
if CHROMIUM is None:
    pytest.skip(
        "Chromium is not installed (apt-get install chromium): the browser tests of anton-tui serve did not run",
        allow_module_level=True,
    )
playwright_api = pytest.importorskip(
    "playwright.async_api", reason="Playwright is not installed (pip install -e '.[test]')"
)

# Without these Chromium stalls on a machine with no network: it would reach out for updates, sync and the like.
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1400, "height": 900}
pytestmark = pytest.mark.timeout(300)  # a browser, a server and the demo's turn, on a machine that may be busy
# Also save the screenshot there (how screenshots/serve-chromium.png is made); read before the fixtures clear ANTON_*.
SCREENSHOT_COPY = os.environ.get("ANTON_SERVE_SCREENSHOT")

# textual-serve's script keeps its terminal in a local variable; its constructor sets `this.fitAddon` right after
# `this.terminal`, so a setter for that name on Object.prototype sees the object and keeps its terminal.
HOOK = """
Object.defineProperty(Object.prototype, "fitAddon", {
  configurable: true,
  set(value) {
    Object.defineProperty(this, "fitAddon", {value, writable: true, configurable: true, enumerable: true});
    window.antonTerminal = this.terminal;
  },
});
window.antonScreen = () => {
  const terminal = window.antonTerminal;
  if (!terminal) return "";
  const buffer = terminal.buffer.active, rows = [];
  for (let row = 0; row < buffer.length; row++) rows.push(buffer.getLine(row).translateToString(true));
  return rows.join("\\n");
};
"""

FIRST_TEXT = "Demo replay"
ANSWER = "Revenue by region, January to June 2026"
ANSWER_FIGURE = "67,028.14"
NEXT_MESSAGE = "What did we look at earlier?"


@pytest.fixture
async def browser(tmp_path: Path) -> AsyncIterator[object]:
    """A new Chromium with an empty profile."""
    async with playwright_api.async_playwright() as driver:
        context = await driver.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"), executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS,
            viewport=VIEWPORT,
        )  # fmt: skip
        try:
            yield context
        finally:
            await context.close()


async def wait_for_text(page: object, text: str, timeout_s: float = 60) -> None:
    try:
        await page.wait_for_function(  # type: ignore[attr-defined]
            "text => window.antonScreen().includes(text)", arg=text, timeout=timeout_s * 1000
        )
    except playwright_api.TimeoutError:
        screen = await page.evaluate("() => window.antonScreen()")  # type: ignore[attr-defined]
        raise AssertionError(f"{text!r} is not in the page after {timeout_s} s; the page shows:\n{screen}") from None


async def open_tab(context: object, url: str) -> tuple[object, list[str]]:
    """A page at `url` with the terminal hook, and the console's errors as they come."""
    page = await context.new_page()  # type: ignore[attr-defined]
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    await page.add_init_script(HOOK)
    await page.goto(url)
    return page, errors


async def send_first_demo_message(page: object) -> None:
    """Enter in the prompt, where the demo offers its first recorded message; returns once the answer is whole."""
    await page.focus(".xterm-helper-textarea")  # type: ignore[attr-defined]  # the terminal's keyboard input
    await page.keyboard.press("Enter")  # type: ignore[attr-defined]
    await wait_for_text(page, ANSWER)
    await wait_for_text(page, NEXT_MESSAGE)  # the turn has ended: the demo offers its next message


async def copy_the_answer(page: object) -> None:
    """A click in the chat (which focuses it) and `c`, its key for copying the last answer."""
    await page.mouse.click(300, 300)  # type: ignore[attr-defined]
    await page.keyboard.press("c")  # type: ignore[attr-defined]


def wait_until(condition: object, timeout_s: float = 30) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.1)
    return False


async def test_the_demo_answers_in_chromium_and_copies_to_the_browser_clipboard(
    browser: object, tmp_path: Path
) -> None:
    folder = Path.home() / "projects" / "sales-analysis"  # (a test's home) as the header shows it: ~/projects/…
    folder.mkdir(parents=True)
    served: Served = start_serve("--port", str(free_port()), "--demo", "--folder", str(folder), cwd=folder)
    try:
        page, errors = await open_tab(browser, served.url)
        assert "token" not in page.url, "the token has left the address bar"  # type: ignore[attr-defined]
        await wait_for_text(page, FIRST_TEXT)
        first_text_s = time.monotonic() - served.started
        await send_first_demo_message(page)
        assert ANSWER_FIGURE in await page.evaluate("() => window.antonScreen()")  # type: ignore[attr-defined]

        shot = tmp_path / "serve-chromium.png"
        await page.screenshot(path=str(shot))  # type: ignore[attr-defined]
        assert shot.read_bytes().startswith(b"\x89PNG") and shot.stat().st_size > 20_000
        if SCREENSHOT_COPY:
            shutil.copyfile(shot, SCREENSHOT_COPY)

        await browser.grant_permissions(["clipboard-read", "clipboard-write"], origin=served.url)  # type: ignore[attr-defined]
        await copy_the_answer(page)
        await wait_for_text(page, "Copied the last answer")
        copied = await page.evaluate("() => navigator.clipboard.readText()")  # type: ignore[attr-defined]
        assert ANSWER in copied and ANSWER_FIGURE in copied, "the answer's Markdown is on the browser's clipboard"

        [first_app] = served.tab_apps
        second, _ = await open_tab(browser, served.url.split("?")[0])  # the cookie carries the token now
        await wait_for_text(second, FIRST_TEXT)
        assert len(served.tab_apps) == 2 and first_app in served.tab_apps, "each tab runs its own app"
        await second.focus(".xterm-helper-textarea")  # type: ignore[attr-defined]
        await second.keyboard.press("Control+q")  # type: ignore[attr-defined]  # the app's own quit
        await second.wait_for_selector("body.-closed .ended", state="visible")  # type: ignore[attr-defined]
        assert "has ended" in await second.inner_text("body")  # type: ignore[attr-defined]
        assert wait_until(lambda: served.tab_apps == {first_app}), "the second tab's app is gone, the first runs on"
        assert not [error for error in errors if "Content Security Policy" in error], errors
        print(f"\nfirst text in the browser {first_text_s:.1f} s after `anton-tui serve` started")
    finally:
        assert served.stop() == 0
    assert served.tab_apps == set()


async def test_without_the_browser_clipboard_copying_shows_the_text_and_opens_it_in_a_new_tab(
    browser: object, project_dir: Path
) -> None:
    if machine_address() is None:
        pytest.skip("this machine has no address but loopback, where the browser always gives a page its clipboard")
    served = start_serve("--host", "0.0.0.0", "--port", str(free_port("0.0.0.0")), "--demo", cwd=project_dir)
    try:
        page, _ = await open_tab(browser, served.url)
        assert urlsplit(page.url).hostname == machine_address()  # type: ignore[attr-defined]
        assert not await page.evaluate("() => window.isSecureContext"), "plain http from another address"  # type: ignore[attr-defined]
        await wait_for_text(page, FIRST_TEXT)
        await send_first_demo_message(page)
        await copy_the_answer(page)
        await wait_for_text(page, "This browser gives the page no clipboard")

        async with browser.expect_page() as opened:  # type: ignore[attr-defined]
            await page.keyboard.press("o")  # type: ignore[attr-defined]
        text_page = await opened.value
        await text_page.wait_for_load_state()
        assert urlsplit(text_page.url).path.startswith("/download/"), "a download through textual-serve"
        body = await text_page.evaluate("() => document.body.innerText")
        assert ANSWER in body and ANSWER_FIGURE in body, "the copied answer, as plain text to select"
    finally:
        assert served.stop() == 0


async def test_two_tabs_on_one_home_are_two_apps_that_see_each_others_memory(
    browser: object, fake_llm: FakeLLMServer, project_dir: Path
) -> None:
    """As two terminals: tab A's model saves a rule (under the memory files' locks), tab B's inspector shows it."""
    rule = "Dates in UTC"
    fake_llm.queue(
        Reply.tool_call("memorize", {"entries": [{"text": rule, "kind": "always", "scope": "global"}]},
                        text_before="Noting that."),
        Reply.text("Saved as a rule."),
        model="planner",
    )  # fmt: skip
    env = {
        **os.environ,
        **fake_llm.env(planning_model="planner", coding_model="coder"),
        "ANTON_MEMORY_MODE": "autopilot",
    }
    served = start_serve("--port", str(free_port()), cwd=project_dir, env=env)
    try:
        first, _ = await open_tab(browser, served.url)
        second, _ = await open_tab(browser, served.url.split("?")[0])
        for page in (first, second):
            await wait_for_text(page, "No rules yet")
        assert len(served.tab_apps) == 2

        await first.focus(".xterm-helper-textarea")  # type: ignore[attr-defined]
        await first.keyboard.type("Always give dates in UTC.")  # type: ignore[attr-defined]
        await wait_for_text(first, "Always give dates in UTC.")  # in the prompt
        await first.keyboard.press("Enter")  # type: ignore[attr-defined]
        await wait_for_text(first, "Saved as a rule.")
        await wait_for_text(second, rule, timeout_s=20)  # the other app's write, seen by this app's watcher
        rules = (Path(os.environ["ANTON_HOME"]) / "memory" / "rules.md").read_text()
        assert rules.count(rule) == 1
        assert "Saved as a rule." not in await second.evaluate("() => window.antonScreen()"), "its own conversation"  # type: ignore[attr-defined]
    finally:
        assert served.stop() == 0
