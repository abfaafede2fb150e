"""`anton-tui conversation list|show|rename|delete|restore|fork|export` in real processes: the JSON fields scripts
read (ledgers under `ledger`), the fork's new id on stdout, Markdown on stdout or in a file, and the exit status
(2 for a usage problem, among them `delete` with no terminal to ask on and no `--yes`; 1 for an unknown id)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from anton_tui.agent.conversation_shelf import ConversationShelf
from tests.test_conversation_shelf import converse

LEDGER_KEYS = ["cells", "commands", "files", "memory_writes", "tool_calls", "user_messages"]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "anton_tui", "conversation", *args], capture_output=True, text=True,
                          env=dict(os.environ), timeout=60, stdin=subprocess.DEVNULL)  # fmt: skip


async def test_list_show_rename_fork_export_delete_and_restore_from_a_shell(fake_llm, project_dir: Path) -> None:
    session_id, turns = await converse(fake_llm, project_dir, 14, context_window=8000, context_pressure_threshold=0.7)
    episodes = project_dir / ".anton" / "episodes"

    listed = json.loads(cli("list", "--json").stdout)
    assert [row["id"] for row in listed] == [session_id]
    assert {"id", "title", "preview", "date", "turns", "model", "parent", "forked_at", "depth"} <= set(listed[0])

    shown = cli("show", session_id, "--json")
    assert shown.returncode == 0, shown.stderr
    view = json.loads(shown.stdout)
    assert sorted(view["ledger"]) == LEDGER_KEYS and view["ledgers"] >= 1
    assert view["ledger"]["user_messages"][0] == {"turn": 1, "text": turns[0].text}
    assert {"turn": 4, "command": turns[3].command, "status": "exit code 0"} in view["ledger"]["commands"]
    assert view["summary"] and [m for m in view["messages"] if m["kind"] == "user"][0]["number"] == 1

    assert cli("rename", session_id, "Regions", "in", "euros").returncode == 0
    assert json.loads(cli("list", "--json").stdout)[0]["title"] == "Regions in euros"

    forked = cli("fork", session_id, "--at", "2")
    assert forked.returncode == 0, forked.stderr
    fork_id = forked.stdout.strip()
    tree = json.loads(cli("list", "--json").stdout)
    assert [(row["id"], row["depth"], row["parent"], row["forked_at"]) for row in tree] == [
        (session_id, 0, None, None), (fork_id, 1, session_id, 2)]  # fmt: skip
    assert "└ " in cli("list").stdout

    markdown = cli("export", session_id)
    assert markdown.stdout == ConversationShelf(episodes).export(session_id)
    target = project_dir / "out.md"
    assert cli("export", session_id, "-o", str(target)).returncode == 0
    assert target.read_text() == markdown.stdout

    refused = cli("delete", session_id)
    assert refused.returncode == 2 and "--yes" in refused.stderr and "Traceback" not in refused.stderr
    assert (episodes / f"{session_id}_history.json").exists(), "nothing deleted without an answer"
    assert cli("delete", session_id, "--yes").returncode == 0
    assert [row["id"] for row in json.loads(cli("list", "--json").stdout)] == [fork_id]
    assert [item["id"] for item in json.loads(cli("list", "--trash", "--json").stdout)] == [session_id]
    assert cli("restore", session_id).returncode == 0
    assert session_id in [row["id"] for row in json.loads(cli("list", "--json").stdout)]


def test_unknown_ids_and_bad_numbers_exit_with_one_line(project_dir: Path) -> None:
    missing = cli("show", "20200101_000000")
    assert missing.returncode == 1 and missing.stderr.startswith("anton-tui conversation: No saved conversation")
    assert cli("restore", "20200101_000000").returncode == 1
    bad = cli("fork", "../etc", "--at", "1")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    usage = cli("fork")
    assert usage.returncode == 2 and "usage:" in usage.stderr
