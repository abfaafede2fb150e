"""What changes in a browser tab (`anton-tui serve`): without the browser's clipboard the copied text is shown to
select, only web and mail links open, downloads get safe names, and bell and desktop notifications stay inside the
app. (In a real browser: tests/test_serve_browser.py.)"""

from __future__ import annotations

import pytest
from textual.app import App
from textual.widgets import TextArea

from anton_tui.serve import SERVED_ENV, WITH_CLIPBOARD, WITHOUT_CLIPBOARD
from anton_tui.tui.attention import Attention
from anton_tui.tui.served import BrowserTab, CopiedText, deliver_text_file, file_name, link_opens

ANSWER = "## Revenue by region\n\n| South | 67,028.14 |\n"


async def test_without_the_browser_clipboard_the_copied_text_is_shown_to_select() -> None:
    app: App[None] = App()
    async with app.run_test(size=(100, 30)) as pilot:
        BrowserTab(clipboard=False).copied(app, ANSWER)
        await pilot.pause()
        assert isinstance(app.screen, CopiedText)
        assert app.screen.query_one(TextArea).text == ANSWER
        BrowserTab(clipboard=False).copied(app, "copied from the dialog itself")
        await pilot.pause()
        assert len(app.screen_stack) == 2, "copying inside the dialog opens no second one"
        await pilot.press("o")  # in a terminal there is no browser tab to open: nothing happens
        await pilot.press("escape")
        assert not isinstance(app.screen, CopiedText)

        BrowserTab(clipboard=True).copied(app, ANSWER)
        await pilot.pause()
        assert not isinstance(app.screen, CopiedText), "with the clipboard, copying is all there is"


async def test_in_a_terminal_there_is_no_browser_tab_and_nothing_to_deliver() -> None:
    app: App[None] = App()
    async with app.run_test() as pilot:
        await pilot.pause()
        assert BrowserTab.of(app, {SERVED_ENV: WITHOUT_CLIPBOARD}) is None
        assert deliver_text_file(app, ANSWER, "answer.md") is None, "the caller writes its file itself"


def test_only_web_and_mail_links_open_from_a_browser_tab() -> None:
    opens = ("https://example.org/a?b=c", "http://10.0.0.1:8000/", "mailto:someone@example.org", " HTTPS://EXAMPLE.ORG")
    refused = ("javascript:alert(document.cookie)", "JavaScript:void(0)", "data:text/html,<b>x</b>", "file:///etc/passwd",
               "vbscript:x", "/download/key", "#heading", "")  # fmt: skip
    assert all(link_opens(url) for url in opens)
    assert not any(link_opens(url) for url in refused)


def test_download_names_keep_to_safe_characters() -> None:
    assert file_name("conversation 2026-11-27.md") == "conversation-2026-11-27.md"
    assert file_name('../../etc/"passwd"\r\nX-Header: 1') == "etc-passwd-X-Header-1"
    assert file_name("...") == "anton-tui.txt"


def test_bell_and_desktop_notifications_stay_inside_a_served_app(monkeypatch: pytest.MonkeyPatch) -> None:
    written: list[str] = []
    served = Attention(written.append, served=True)
    served.focused = False
    served.alert("Anton", "The answer is ready.")
    assert written == [] and served.sent == []

    monkeypatch.setenv(SERVED_ENV, WITH_CLIPBOARD)
    assert Attention(written.append).served, "anton-tui serve tells its apps so"
    monkeypatch.delenv(SERVED_ENV)
    in_a_terminal = Attention(written.append)
    in_a_terminal.focused = False
    in_a_terminal.alert("Anton", "The answer is ready.")
    assert written[0] == "\a" and written[1].startswith("\x1b]9;Anton: The answer is ready.")
