"""When Python's cycle collector may run, so that it does not pause the screen.

A full collection walks every container object the process holds. An app that has imported Textual, pydantic and a
model SDK holds a few hundred thousand of them, and a full pass over those takes a noticeable fraction of a second:
long enough to swallow keystrokes while an answer streams. So:

- the collector is held off while the app starts, and what start-up leaves behind (modules, classes, the widget
  tree: things that live as long as the process) is then moved out of its sight with `gc.freeze()`;
- while a turn streams, full collections are put off (the quick young-generation passes still run), and the one
  that was put off runs when the turn has ended, while the user reads the answer.

`hold()` is called first thing by the command line; `release()` once the first frame is on screen, `settle()` after
the warm-up has imported the model SDK, and `collect_between_turns()` after each turn. Without `hold()` (tests, the
app embedded elsewhere) the others do nothing, so a process that starts many apps keeps Python's defaults.
"""

from __future__ import annotations

import gc

FULL_COLLECTION_AFTER = 1_000  # young-generation passes before a full collection runs by itself (Python: 10)

_held = False


def hold() -> None:
    """No cycle collection until `release()`: start-up only creates what it keeps."""
    global _held
    _held = True
    gc.disable()


def release() -> None:
    """Start-up is over: keep what it created out of later collections and let the collector run again, with full
    collections left to `collect_between_turns` (or to a long turn's `FULL_COLLECTION_AFTER`)."""
    if _held:
        gc.freeze()
        first, second, _third = gc.get_threshold()
        gc.set_threshold(first, second, FULL_COLLECTION_AFTER)
        gc.enable()


def settle() -> None:
    """The warm-up is done: what it imported also lives as long as the process."""
    if _held:
        gc.freeze()


def collect_between_turns() -> None:
    """A turn has ended: run the full collection now rather than in the middle of the next one."""
    if _held:
        gc.collect()
