"""``anton-tui memory context "MESSAGE"``: what the first turn of a new conversation with that message would be
given, worked out by the same parts a session uses (`TurnMemory`, the cortex's selection), without a model, and
without counting anything (the counters count only prompts really sent).

`first_turn_context` answers with one object: `budget_tokens`, `ranked_tokens` (what the ranked entries take of the
budget), `total_tokens` (everything given: the pinned items beside the budget and the ranked ones), and the lists
`pinned`, `loaded` and `left_out`, each item with `kind`, `scope`, `text`, `tokens`, and `score` (ranked ones) or
`why` (pinned and left-out ones). The memory files and preloaded skills come first among the pinned items.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from anton_tui.memory.engrams.selection import tokens_of

if TYPE_CHECKING:
    from anton_tui.config import Settings

SHOWN_LEFT_OUT = 10  # left-out entries the text form lists (all of them are in the JSON)


def first_turn_context(settings: Settings, message: str, skills: tuple[str, ...] = ()) -> dict[str, Any]:
    """What a new conversation's first request for `message` would carry (see the module docstring). Raises
    ValueError naming a preloaded skill that cannot be loaded."""
    from anton_tui.agent.turn_memory import TurnMemory
    from anton_tui.memory.engrams.cortex import Cortex
    from anton_tui.memory.stores import MemoryStores

    stores = MemoryStores.from_settings(settings)
    cortex = Cortex(stores.global_hc, stores.project_hc, mode=settings.effective_memory_mode,
                    managed_hc=stores.managed, shared=stores.shared)  # fmt: skip
    given = TurnMemory(home=stores.paths.home, project_dir=stores.paths.project_dir,
                       budget_tokens=settings.memory_budget_tokens)  # fmt: skip
    for label in skills:
        given.preload(stores.skills, label, count=False)
    given.front()
    selection = given.choose(cortex, [{"role": "user", "content": message}], stores.skills)
    found = selection.as_json()
    front = [_front_item("memory_file", file.level, file.text, "memory file") for file in given.files]
    front += [_front_item("skill", "", str(m["content"]), "preloaded") for m in given.preloaded.values()]
    found["pinned"] = front + found["pinned"]
    found["total_tokens"] += sum(item["tokens"] for item in front)
    return found


def _front_item(kind: str, scope: str, text: str, why: str) -> dict[str, Any]:
    return {"kind": kind, "scope": scope, "text": text, "tokens": tokens_of(text), "why": why}


def describe(found: dict[str, Any]) -> str:
    """The text form: the figures, then every pinned and loaded item, then the first few left out."""
    lines = [
        f"Budget {found['budget_tokens']:,} tokens: ranked in {found['ranked_tokens']:,}; "
        f"given in all {found['total_tokens']:,} (pinned items are counted beside the budget).",
    ]
    for name, title in (("pinned", "Pinned"), ("loaded", "Ranked in"), ("left_out", "Left out")):
        items = found[name]
        lines.append(f"\n{title} ({len(items)}):")
        for item in items[: SHOWN_LEFT_OUT if name == "left_out" else None]:
            head = item["text"].splitlines()[0] if item["text"] else ""
            detail = f"score {item['score']:.2f}" if "score" in item else ""
            if item.get("why"):
                detail = f"{detail}, {item['why']}" if detail else item["why"]
            scope = f" {item['scope']}" if item["scope"] else ""
            lines.append(f"  [{item['kind']}{scope}] {head[:100]}  ({item['tokens']} tok; {detail})")
        if name == "left_out" and len(items) > SHOWN_LEFT_OUT:
            lines.append(f"  … and {len(items) - SHOWN_LEFT_OUT:,} more (--json lists them all)")
    return "\n".join(lines)
