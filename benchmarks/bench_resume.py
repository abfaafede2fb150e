"""How long `anton-tui --resume ID` takes to show a long saved conversation: a fresh `python` process starts the real
app on a 300-turn conversation saved in Anton's format, resumes it, and reports the first painted frame whose chat
shows the conversation (its last answer). Target: under 1 s on this machine. Then, in the same process, `Home` is
pressed in the chat, and the first frame that shows the conversation's first turn is timed (the chat mounts only its
last entries at first: the first turn is mounted on the way).

Run alone with ``python -m benchmarks --only resume``; ``python -m benchmarks.bench_resume probe ID`` is the probe.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TURNS = 300
RUNS = 5
TARGET_S = 1.0
SESSION = "20261125_090000"
LAST_ANSWER = "That closes turn 300."
FIRST_QUESTION = "Question 1: how did region 1 do"


def conversation() -> list[dict[str, Any]]:
    """A 300-turn conversation: questions, answers of a few paragraphs, and a scratchpad call every tenth turn."""
    history: list[dict[str, Any]] = []
    for turn in range(1, TURNS + 1):
        history.append({"role": "user", "content": f"Question {turn}: how did region {turn % 7} do in month {turn % 12}?"})
        answer = f"Region {turn % 7} grew {turn % 9}% in month {turn % 12}.\n\n" + "Some detail about it. " * 20
        if turn % 10 == 0:
            call = {"type": "tool_use", "id": f"toolu_{turn}", "name": "scratchpad",
                    "input": {"action": "exec", "name": "main", "code": f"print({turn} * 2)"}}  # fmt: skip
            history.append({"role": "assistant", "content": [{"type": "text", "text": "Computing."}, call]})
            result = {"type": "tool_result", "tool_use_id": f"toolu_{turn}", "content": str(turn * 2)}
            history.append({"role": "user", "content": [result]})
        history.append({"role": "assistant", "content": LAST_ANSWER if turn == TURNS else answer})
    return history


def probe(session_id: str) -> None:
    """Says "shown" when a frame written to the terminal holds the conversation's last answer. (The text painted is
    what counts: the chat may be drawn before the screen has even handled the message saying it was shown.)"""
    from benchmarks.tui_startup_probe import painting, say
    from anton_tui import gc_policy

    gc_policy.hold()  # as `anton_tui.cli.main` does
    from anton_tui.settings_sources import read_env_layers
    from anton_tui.tui.app import AntonApp
    from anton_tui.tui.launch import make_app

    class Probe(painting(AntonApp)):  # type: ignore[misc]
        said = ""

        def frame_written(self, screen: Any, renderable: Any) -> None:
            painted = renderable.render_segments(self.console)  # the terminal's bytes, as `painting` makes them
            if not self.said and LAST_ANSWER in painted:
                self.said = "shown"
                say("shown")
                self.call_later(self.home)
            elif self.said == "home" and FIRST_QUESTION in painted:
                self.said = "first turn"
                say("first turn")
                self.exit()

        def home(self) -> None:
            """Home in the chat, as the key does once the chat has the focus."""
            self.said = "home"
            say("home")
            self.screen.query_one("ChatView").action_scroll_home()

    make_app(read_env_layers(), resume=session_id, app_class=Probe).run(headless=True, size=(120, 40))


def run_once(env: dict[str, str]) -> tuple[float, float]:
    """Seconds from the start to the first frame that shows the conversation, and from Home to its first turn."""
    began = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "benchmarks.bench_resume", "probe", SESSION], cwd=REPO, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert process.stdout is not None
    times: dict[str, float] = {}
    for line in process.stdout:
        times[line.strip()] = time.perf_counter()
        if "first turn" in times:
            process.kill()
            process.communicate(timeout=30)
            return times["shown"] - began, times["first turn"] - times["home"]
    _, errors = process.communicate(timeout=30)
    raise RuntimeError(f"the resume probe failed (exit {process.returncode}):\n{errors}")


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="anton-bench-resume-") as scratch:
        home, project = Path(scratch) / "home", Path(scratch) / "project"
        episodes = project / ".anton" / "episodes"
        episodes.mkdir(parents=True)
        home.mkdir()
        (episodes / f"{SESSION}_history.json").write_text(json.dumps(conversation(), ensure_ascii=False))
        # Byte-code is written (to a scratch folder) as on a user's machine, where every start after the first finds it.
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("ANTON_", "ANTHROPIC_", "OPENAI_")) and k != "PYTHONDONTWRITEBYTECODE"}  # fmt: skip
        env.update(ANTON_HOME=str(home), ANTON_PROJECT_DIR=str(project), ANTON_ANTHROPIC_API_KEY="bench-not-a-real-key",
                   PYTHONPYCACHEPREFIX=str(Path(scratch) / "pycache"))  # fmt: skip
        run_once(env)  # warm-up: byte-code and page cache
        runs = [run_once(env) for _ in range(RUNS)]
    times, homes = [shown for shown, _ in runs], [home for _, home in runs]
    median = statistics.median(times)
    verdict = "met" if median <= TARGET_S else "MISSED"
    print(f"resume of a {TURNS}-turn conversation to the first frame that shows it: {median:.2f} s median of {RUNS} "
          f"fresh processes (min {min(times):.2f}, max {max(times):.2f}; target < {TARGET_S} s) {verdict}")  # fmt: skip
    print(f"then Home in the chat to the first frame that shows the first turn: {statistics.median(homes) * 1000:.0f} ms "
          f"median (min {min(homes) * 1000:.0f}, max {max(homes) * 1000:.0f}; no target)")  # fmt: skip
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["probe"]:
        probe(sys.argv[2])
    else:
        sys.exit(main())
