"""Works out how to undo one recorded memory change against the files as they are now, without guessing.

For each file the change touched: if the file still reads exactly as the change left it, undo restores the bytes from
before the change. Otherwise each part of the change (a run of added, removed or replaced lines) is reverted only
where its lines, and the line on either side of them, are still in the current file unchanged and in order; a part
that later changes touched is a `Conflict`, and then nothing is written at all.
"""

from __future__ import annotations

import dataclasses
import difflib
import itertools


@dataclasses.dataclass(frozen=True, slots=True)
class Conflict:
    """A part of a change that cannot be undone automatically: later changes touched the same lines."""

    file: str
    removed: tuple[str, ...]  # lines the change removed (undo would bring them back)
    added: tuple[str, ...]  # lines the change added (undo would take them out)

    def describe(self) -> str:
        parts = [f"{self.file}: later changes touched these lines"]
        parts += [f"  - would take out: {line.rstrip()}" for line in self.added]
        parts += [f"  + would bring back: {line.rstrip()}" for line in self.removed]
        return "\n".join(parts)


def _lines(data: bytes | None) -> list[bytes]:
    return data.splitlines(keepends=True) if data else []


def revert(
    name: str, before: bytes | None, after: bytes | None, current: bytes | None
) -> tuple[bytes | None, list[Conflict]]:
    """The new content of `name` that undoes `before → after` in `current`, or the conflicts."""
    if current == after:
        return before, []
    a, b, c = _lines(before), _lines(after), _lines(current)
    mapping: dict[int, int] = {}
    for block in difflib.SequenceMatcher(None, b, c, autojunk=False).get_matching_blocks():
        for k in range(block.size):
            mapping[block.a + k] = block.b + k
    edits: list[tuple[int, int, list[bytes]]] = []
    conflicts: list[Conflict] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        span = range(max(j1 - 1, 0), min(j2 + 1, len(b)))
        found = [mapping.get(j) for j in span]
        places = [p for p in found if p is not None]
        whole = len(places) == len(found) and all(q == p + 1 for p, q in itertools.pairwise(places))
        if not b and c:
            whole = False
        if not whole:
            conflicts.append(Conflict(name, tuple(_text(a[i1:i2])), tuple(_text(b[j1:j2]))))
            continue
        if j2 > j1:
            start = mapping[j1]
        elif j1 > 0:
            start = mapping[j1 - 1] + 1
        else:
            start = 0
        edits.append((start, start + (j2 - j1), a[i1:i2]))
    if conflicts:
        return current, conflicts
    for start, end, lines in sorted(edits, reverse=True):
        c[start:end] = lines
    merged = b"".join(c)
    if not merged and before is None:
        return None, []
    return merged, []


def _text(lines: list[bytes]) -> list[str]:
    return [line.decode("utf-8", "replace") for line in lines]
