"""A local fake Anthropic server, in its own process, that streams one long answer in small pieces at a steady rate.

`bench_tui` starts it so that the model's side of a turn costs the app what a remote API would: network reads and
SDK parsing, but no Python work on the app's own interpreter (a server thread in-process would compete with the app
for the GIL). Usage:

    python -m benchmarks.fake_llm_stream CHARS CHUNK_SIZE CHUNK_DELAY

It prints the server's base URL on the first line, serves until its stdin is closed, then stops.
"""

from __future__ import annotations

import random
import sys

WORDS = (
    "revenue region month total report column chart forecast customer invoice latency cache retry schema export "
    "the a of to in and with for on by from per each this that which when then"
).split()


def answer_text(chars: int, seed: int = 3) -> str:
    """Markdown of about `chars` characters: headings, paragraphs and bullet lists, like a long written answer."""
    rng = random.Random(seed)
    parts: list[str] = []
    size = 0
    section = 0
    while size < chars:
        section += 1
        block = [f"## Part {section}\n"]
        block.append(" ".join(rng.choices(WORDS, k=rng.randint(40, 70))).capitalize() + ".\n")
        block += [f"- **{rng.choice(WORDS)}**: {' '.join(rng.choices(WORDS, k=rng.randint(6, 14)))}" for _ in range(4)]
        block.append("")
        text = "\n".join(block) + "\n"
        parts.append(text)
        size += len(text)
    return "".join(parts)[:chars]


def main(argv: list[str]) -> None:
    from tests.fakellm import FakeLLMServer, Reply

    chars, chunk_size, chunk_delay = int(argv[0]), int(argv[1]), float(argv[2])
    server = FakeLLMServer().start()
    server.queue(Reply.text(answer_text(chars), chunk_size=chunk_size, chunk_delay=chunk_delay), model="planner")
    server.responder = lambda request: Reply.text("Done.")
    print(server.base_url, flush=True)
    try:
        sys.stdin.read()
    finally:
        server.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
