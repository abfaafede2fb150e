"""Which parts of the header line to leave out when the terminal is too narrow for all of them, and the texts of the
status line's usage parts (tokens, estimated cost, context used).

The header drops parts in `DROP_ORDER` until the rest fits: the app name, the provider, the memory mode, then the
context's window size (`ctx 12k/200k` becomes `ctx 6%`), the cost, the last sync of shared memory, the context, the
tokens. The workspace path
shrinks on its own (down to `WORKSPACE_MIN` columns); the model and what Anton is doing always stay.
"""

from __future__ import annotations

from collections.abc import Mapping

WORKSPACE_MIN = 12  # columns, its padding included (as header.tcss sets)
STATUS_WIDEST = len("cancelled")  # the status is measured at its widest, so the line does not jump as it changes
SHORT_CONTEXT = "context-short"
DROP_ORDER = ("brand", "provider", "memory-mode", SHORT_CONTEXT, "cost", "sync", "context", "tokens")


def plan_drops(width: int, widths: Mapping[str, int], short_context_saves: int) -> set[str]:
    """The steps of `DROP_ORDER` to take so that the parts in `widths` (columns each, padding included; the
    workspace not among them) plus the workspace's minimum fit in `width`."""
    needed = sum(widths.values()) + WORKSPACE_MIN
    taken: set[str] = set()
    for step in DROP_ORDER:
        if needed <= width:
            break
        if step == SHORT_CONTEXT:
            if "context" in widths:
                needed -= short_context_saves
                taken.add(step)
        elif step in widths:
            needed -= widths[step] - (short_context_saves if step == "context" and SHORT_CONTEXT in taken else 0)
            taken.add(step)
    return taken


def compact_count(count: int) -> str:
    """`950`, `12k`, `200k`, `1M`, `1.5M`: a token count in as few columns as it takes."""
    if count < 1_000:
        return str(count)
    if count < 1_000_000:
        return f"{round(count / 1_000)}k"
    return f"{count / 1_000_000:.1f}".removesuffix(".0") + "M"


def context_texts(used: int, window: int) -> tuple[str, str]:
    """The context used against the window: long (`ctx 12k/200k`) and short (`ctx 6%`)."""
    share = used * 100 / window if window else 0
    percent = "<1" if 0 < share < 1 else str(round(share))
    return f"ctx {compact_count(used)}/{compact_count(window)}", f"ctx {percent}%"
