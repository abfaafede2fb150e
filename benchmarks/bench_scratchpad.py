"""How quick scratchpads feel: a trivial cell on a running pad, starting a plain pad, and streaming a lot of output.

Everything runs in a throw-away folder. Run alone with ``python -m benchmarks.bench_scratchpad``.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

WARM_CELLS = 200
COLD_STARTS = 10
STREAM_MB = 20


async def _measure(workdir: Path) -> list[str]:
    from anton_tui.scratchpad.runtime import ScratchpadLimits, ScratchpadManager

    pads = ScratchpadManager(workdir, workdir / "venvs", ScratchpadLimits())
    try:
        pad = await pads.get_or_create("warm")
        await pad.execute("x = 0")
        rounds = []
        for _ in range(WARM_CELLS):
            began = time.perf_counter()
            cell = await pad.execute("x += 1")
            rounds.append(time.perf_counter() - began)
            assert cell.status == "ok", cell.error

        starts = []
        for i in range(COLD_STARTS):
            cold = await pads.get_or_create(f"cold-{i}")
            began = time.perf_counter()
            await cold.start()
            starts.append(time.perf_counter() - began)
            await pads.remove(f"cold-{i}")

        began = time.perf_counter()
        chunks = STREAM_MB * 100
        big = await pad.execute(f"line = 'x' * 9999 + '\\n'\nfor _ in range({chunks}):\n    print(line, end='')")
        streamed = time.perf_counter() - began
        assert big.stdout_total_chars == chunks * 10_000, big.error
    finally:
        await pads.close_all()

    warm_ms = statistics.median(rounds) * 1000
    cold_ms = statistics.median(starts) * 1000
    return [
        f"scratchpad warm round trip: {warm_ms:.2f} ms median over {WARM_CELLS} cells (target < 10 ms)",
        f"scratchpad cold start (plain pad): {cold_ms:.0f} ms median over {COLD_STARTS} starts (target < 300 ms)",
        f"scratchpad output streaming: {STREAM_MB} MB in {streamed:.2f} s ({STREAM_MB / streamed:.0f} MB/s)",
    ]


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="anton-bench-scratchpad-") as scratch:
        for line in asyncio.run(_measure(Path(scratch))):
            print(line, flush=True)


if __name__ == "__main__":
    main()
