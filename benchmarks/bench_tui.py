"""How quick the app feels: start-up to the first painted frame on a well-used home, and typing while an answer streams.

Start-up: a fresh `python` process per run (imports count) starts the real app, prepared as `run_app` prepares it,
on a throw-away home seeded with 1,000 skills, 5,000 lessons and 500 rules in the on-disk formats (ten times as
many with ``--scale 10``), and exits at its first painted frame (see `tui_startup_probe`). The same is timed for a
bare Textual app with the same widgets and no engine (its floor), and the moment the inspector lists the real rules
of the files (beside the bare app's first text). The app paints from the raw settings and builds its runtime
(validated settings, session) right after.

Typing: the real app, driven headless, runs a real turn whose answer a fake Anthropic server (its own process)
streams in small pieces about 1,000 times a second (and again at 100 a second, a fast real model). Keys are injected through the Textual driver, as a terminal's
input thread would, at typing speed; each key's latency runs from the injection until the first painted frame
whose prompt already holds the character. Run alone with ``python -m benchmarks.bench_tui``; ``--only startup`` or
``--only typing`` runs one part.
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks.tui_startup_probe import SIZE, painting

REPO = Path(__file__).resolve().parent.parent
SCALE = int(os.environ.get("ANTON_BENCH_SCALE", 1))
SKILLS = 1_000 * SCALE
LESSONS = 5_000 * SCALE
RULES = 500 * SCALE
STARTUP_RUNS = 11
LOADED_RUNS = 3  # of those, the runs that also wait for the inspector's tables to fill (slow: they come later)
STARTUP_TARGET_S = 0.8
BARE_RATIO_TARGET = 1.3

KEYS = 100
KEY_GAP_S = (0.02, 0.05)  # between one key's echo and the next press: quick typing
ECHO_TIMEOUT_S = 2.0
ECHO_TARGET_MS = 50.0
CHUNK_CHARS = 3
CHUNK_DELAYS_S = {1000: 0.0009, 100: 0.0099}  # chunks a second -> the server's sleep between chunks (plus the write)
ANSWER_CHARS = 150_000  # at 1,000 chunks a second it streams for longer than the typing takes
TYPED = "please add a chart of the monthly totals per region and a short note on the trend since january too "


def verdict(passed: bool) -> str:
    return "PASS" if passed else "MISS"


# ---- start-up --------------------------------------------------------------------------------------------------


def seed_home(home: Path, project: Path) -> None:
    """The skills in ~/.anton/skills, and the lessons and rules split between the global and the project memory."""
    from benchmarks.memory_seed import Prose, seed_lessons, seed_rules, seed_skills

    prose = Prose(random.Random(11))
    global_memory, project_memory = home / "memory", project / ".anton" / "memory"
    global_memory.mkdir(parents=True)
    project_memory.mkdir(parents=True)
    seed_lessons(global_memory / "lessons.md", LESSONS // 2, prose)
    seed_lessons(project_memory / "lessons.md", LESSONS - LESSONS // 2, prose)
    seed_rules(global_memory / "rules.md", RULES // 2, prose)
    seed_rules(project_memory / "rules.md", RULES - RULES // 2, prose)
    seed_skills(home / "skills", SKILLS)


def probe_env(home: Path, project: Path, pycache: Path) -> dict[str, str]:
    """The user's environment without their Anton settings; byte-code is cached in `pycache` (a first run fills
    it), so the runs see what every start after the first sees, even where PYTHONDONTWRITEBYTECODE is set."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("ANTON_", "ANTHROPIC_", "OPENAI_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(PYTHONPYCACHEPREFIX=str(pycache))
    env.update(ANTON_HOME=str(home), ANTON_PROJECT_DIR=str(project), ANTON_ANTHROPIC_API_KEY="bench-not-a-real-key")
    return env


def run_probe(args: list[str], env: dict[str, str]) -> dict[str, float]:
    """Seconds from starting the process to each word it prints (`painted`, then `loaded` when asked for)."""
    wanted = {"painted", "loaded"} if "--until-loaded" in args else {"painted", "rules"} if "--until-rules" in args \
        else {"painted"}  # fmt: skip
    began = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.tui_startup_probe", *args],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    times: dict[str, float] = {}
    assert process.stdout is not None
    for line in process.stdout:
        times[line.strip()] = time.perf_counter() - began
        if wanted <= times.keys():
            process.kill()  # what comes after the frame (shutting the app down) is not being measured
            break
    _, errors = process.communicate(timeout=60)
    if not wanted <= times.keys():
        raise RuntimeError(f"the start-up probe {args} failed (exit {process.returncode}):\n{errors}")
    return times


def startup_figures() -> list[str]:
    with tempfile.TemporaryDirectory(prefix="anton-bench-tui-") as scratch:
        home, project = Path(scratch) / "home", Path(scratch) / "project"
        seed_home(home, project)
        env = probe_env(home, project, Path(scratch) / "pycache")
        until_loaded = ["--until-loaded", str(LESSONS), str(SKILLS)]
        run_probe(["anton"], env)  # warm-up: fills the byte-code cache and the page cache
        anton, bare = [], []
        for n in range(STARTUP_RUNS):  # interleaved, so both see the same machine load
            anton.append(run_probe(["anton", *until_loaded] if n < LOADED_RUNS else ["anton", "--until-rules"], env))
            bare.append(run_probe(["bare"], env))
    painted = statistics.median(run["painted"] for run in anton)
    rules = statistics.median(run["rules"] for run in anton if "rules" in run)
    loaded = statistics.median(run["loaded"] for run in anton if "loaded" in run)
    bare_painted = statistics.median(run["painted"] for run in bare)
    ratio, rules_ratio = painted / bare_painted, rules / bare_painted
    runs = f"median of {STARTUP_RUNS} fresh processes"
    home = f"{SKILLS:,} skills, {LESSONS:,} lessons, {RULES:,} rules"
    return [
        f"tui start-up to first painted frame ({home}): {painted:.2f} s {runs} "
        f"(target <= {STARTUP_TARGET_S} s) {verdict(painted <= STARTUP_TARGET_S)}",
        f"tui start-up, bare Textual app with the same widgets (the floor): {bare_painted:.2f} s {runs}",
        f"tui start-up ratio to the bare app: {ratio:.2f}x (target <= {BARE_RATIO_TARGET}x) "
        f"{verdict(ratio <= BARE_RATIO_TARGET)}",
        f"tui start-up until the inspector lists the files' rules: {rules:.2f} s median of "
        f"{STARTUP_RUNS - LOADED_RUNS} of those runs, {rules_ratio:.2f}x the bare app's first text (target <= "
        f"{BARE_RATIO_TARGET}x) {verdict(rules_ratio <= BARE_RATIO_TARGET)}",
        f"tui start-up until the Lessons (opened once the runtime is there, when past 1 MB) and Skills tables are "
        f"filled and painted: {loaded:.2f} s median of "
        f"{LOADED_RUNS} of those runs (no target; meanwhile typing is not held up)",
    ]


# ---- typing while an answer streams ---------------------------------------------------------------------------


def start_fake_llm(chunk_delay: float) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.fake_llm_stream", str(ANSWER_CHARS), str(CHUNK_CHARS), str(chunk_delay)],
        cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


class KeyTimer:
    """Presses keys from its own thread and waits for the frame that shows each one; latencies in seconds."""

    def __init__(self, app: Any, prompt: Any) -> None:
        self.app, self.prompt = app, prompt
        self.expected_length: int | None = None
        self.echoed = threading.Event()
        self.echo_at = 0.0
        self.latencies: list[float] = []
        self.pressed_at: list[float] = []

    def frame_painted(self) -> None:
        """Called on the app's loop for every painted frame."""
        if self.expected_length is not None and len(self.prompt.text) >= self.expected_length:
            self.echo_at = time.perf_counter()
            self.expected_length = None
            self.echoed.set()

    def type_keys(self, text: str) -> None:
        from textual import events

        rng = random.Random(5)
        start = len(self.prompt.text)
        for n, char in enumerate(text, 1):
            time.sleep(rng.uniform(*KEY_GAP_S))
            key = events.Key("space" if char == " " else char, char)
            key.set_sender(self.app)
            self.echoed.clear()
            self.expected_length = start + n
            pressed = time.perf_counter()
            self.app.post_message(key)  # from this thread, as the terminal driver's input thread does with a key
            if not self.echoed.wait(ECHO_TIMEOUT_S):
                raise RuntimeError(f"key {n} ({char!r}) was not shown within {ECHO_TIMEOUT_S} s")
            self.pressed_at.append(pressed)
            self.latencies.append(self.echo_at - pressed)


async def measure_typing(
    scratch: Path, base_url: str
) -> tuple[KeyTimer, list[tuple[float, int]], list[tuple[float, int]], list[tuple[float, int]]]:
    """Returns the key timings, and (time, characters) of each text delta out of the model's stream, of each one
    the screen took from the session (counted in characters, so merged deltas would count the same) and of each
    write of answer text to a part of the answer (its Markdown stream)."""
    from anton_tui.agent.events import AssistantTextDelta
    from anton_tui.llm.events import TextDelta
    from anton_tui.agent.factory import build_session
    from anton_tui.config import load_settings
    from anton_tui.memory.stores import MemoryStores
    from anton_tui.paths import AntonPaths
    from anton_tui.runtime import Runtime
    from anton_tui.tui.app import AntonApp
    from anton_tui.tui.widgets.answer import AssistantMessage
    from anton_tui.tui.widgets.prompt import Prompt

    from anton_tui import gc_policy

    gc_policy.hold()  # as `anton_tui.cli.main` does; the app lets the collector run again after its first frame
    home, project = scratch / "home", scratch / "project"
    home.mkdir()
    project.mkdir()
    environ = {
        "ANTON_HOME": str(home), "ANTON_PROJECT_DIR": str(project),
        "ANTON_PLANNING_PROVIDER": "anthropic", "ANTON_PLANNING_MODEL": "planner",
        "ANTON_CODING_PROVIDER": "anthropic", "ANTON_CODING_MODEL": "coder",
        "ANTON_ANTHROPIC_API_KEY": "bench-not-a-real-key", "ANTON_ANTHROPIC_BASE_URL": base_url,
    }  # fmt: skip
    settings = load_settings(environ=environ)
    stores = MemoryStores.from_paths(AntonPaths.from_settings(settings))
    session = build_session(settings, stores=stores)
    received: list[tuple[float, int]] = []  # out of the model's stream (the SDK has parsed them)
    deltas: list[tuple[float, int]] = []  # taken from the session by the screen's turn worker
    shown: list[tuple[float, int]] = []  # handed to the chat's Markdown
    real_stream, real_turn = session.llm.plan_stream, session.turn

    async def counted_stream(*args: Any, **kwargs: Any):
        async for event in real_stream(*args, **kwargs):
            if isinstance(event, TextDelta):
                received.append((time.perf_counter(), len(event.text)))
            yield event

    async def counted_turn(text: str):
        async for event in real_turn(text):
            if isinstance(event, AssistantTextDelta):
                deltas.append((time.perf_counter(), len(event.text)))
            yield event

    session.llm.plan_stream = counted_stream  # type: ignore[method-assign]
    session.turn = counted_turn  # type: ignore[method-assign]
    timer: KeyTimer | None = None

    class TypingApp(painting(AntonApp)):  # type: ignore[misc]
        def frame_painted(self, screen: Any) -> None:
            if timer is not None:
                timer.frame_painted()

    real_write = AssistantMessage.write

    async def counted_write(part: AssistantMessage, text: str, *, at_once: bool = False) -> None:
        shown.append((time.perf_counter(), len(text)))
        await real_write(part, text, at_once=at_once)

    AssistantMessage.write = counted_write  # type: ignore[method-assign]
    app = TypingApp(Runtime(settings, session, stores=stores), watch_files=True)
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.screen.query_one(Prompt)
        prompt.load_text("Write the long report, please.")
        await pilot.press("enter")
        deadline = time.monotonic() + 20
        while sum(chars for _, chars in deltas) < 600:  # the answer is streaming
            if time.monotonic() > deadline:
                raise RuntimeError("the answer did not start streaming within 20 s")
            await asyncio.sleep(0.05)
        timer = KeyTimer(app, prompt)
        await asyncio.get_running_loop().run_in_executor(None, timer.type_keys, TYPED[:KEYS])
        typed = prompt.text
        app.exit()
    if typed != TYPED[:KEYS]:
        raise RuntimeError(f"the prompt holds {typed!r}, not what was typed")
    return timer, received, deltas, shown


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def typing_figures() -> list[str]:
    lines: list[str] = []
    for rate, delay in CHUNK_DELAYS_S.items():
        lines += [f"-- an answer streamed at about {rate:,} chunks/s"] + typing_figures_at(delay)
    return lines


def typing_figures_at(chunk_delay: float) -> list[str]:
    server, base_url = start_fake_llm(chunk_delay)
    try:
        with tempfile.TemporaryDirectory(prefix="anton-bench-typing-") as scratch:
            timer, received, deltas, shown = asyncio.run(measure_typing(Path(scratch), base_url))
    finally:
        if server.stdin is not None:
            server.stdin.close()
        server.wait(timeout=10)
    start, end = timer.pressed_at[0], timer.pressed_at[-1] + timer.latencies[-1]
    window = end - start
    arrived_deltas = sum(1 for t, _ in received if start <= t <= end) / window
    arrived = sum(chars for t, chars in received if start <= t <= end) / window
    taken = sum(chars for t, chars in deltas if start <= t <= end) / window
    behind = sum(chars for t, chars in received if t <= end) - sum(chars for t, chars in deltas if t <= end)
    streaming = sum(1 for t in timer.pressed_at if t <= received[-1][0])
    handed = [t for t, _ in shown if start <= t <= end]
    longest_wait = max(b - a for a, b in zip([start, *handed], [*handed, end]))
    unshown = sum(chars for t, chars in deltas if t <= end) - sum(chars for t, chars in shown if t <= end)
    ms = [latency * 1000 for latency in timer.latencies]
    median, p95 = statistics.median(ms), percentile(ms, 0.95)
    return [
        f"model stream during the typing: {arrived_deltas:,.0f} text deltas/s ({arrived:,.0f} characters/s) for "
        f"{window:.1f} s, {streaming} of {len(ms)} keys pressed while it streamed (real ChatSession and SDK, fake "
        "Anthropic server in its own process; no target)",
        f"answer text the chat took in meanwhile: {taken:,.0f} characters/s; {behind:,} characters still queued when "
        f"the typing ended, {behind / max(arrived, 1):.1f} s behind the model (no target; should keep up)",
        f"answer written to the chat's Markdown while typing: {len(handed)} writes, at most {longest_wait:.1f} s apart; "
        f"{max(unshown, 0):,} characters not yet handed on when the typing ended (no target; meanwhile the view "
        "holds still, catching up at each pause in the typing or every 1.5 s)",
        f"key-to-echo latency while streaming, median: {median:.1f} ms over {len(ms)} keys "
        f"(target < {ECHO_TARGET_MS:g} ms) {verdict(median < ECHO_TARGET_MS)}",
        f"key-to-echo latency while streaming, p95: {p95:.1f} ms, max {max(ms):.1f} ms "
        f"(target < {ECHO_TARGET_MS:g} ms) {verdict(p95 < ECHO_TARGET_MS)}",
    ]


PARTS = {"startup": startup_figures, "typing": typing_figures}


def main(argv: list[str] | None = None) -> None:
    """Both parts; ``--only startup`` or ``--only typing`` runs one (``python -m benchmarks.bench_tui --only …``)."""
    argv = argv or []
    wanted = list(PARTS)
    if argv[:1] == ["--only"] and argv[1:2] and argv[1] in PARTS:
        wanted = [argv[1]]
    elif argv:
        raise SystemExit(f"usage: python -m benchmarks.bench_tui [--only {'|'.join(PARTS)}]")
    for part in wanted:
        for line in PARTS[part]():
            print(line, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
