"""When Python's cycle collector may run, so that it does not pause the screen; and big blocks given back at once.

A full collection walks every container object the process holds. An app that has imported Textual, pydantic and a
model SDK holds a few hundred thousand of them, and a full pass over those takes a noticeable fraction of a second:
long enough to swallow keystrokes while an answer streams. So:

- the collector is held off while the app starts, and what start-up leaves behind (modules, classes, the widget
  tree: things that live as long as the process) is then moved out of its sight with `gc.freeze()`;
- while a turn streams, full collections are put off (the quick young-generation passes still run), and the one
  that was put off runs when the turn has ended, while the user reads the answer.

Big blocks of memory (a memory file read whole, say) go back to the system as soon as they are freed. By default
the C library (glibc) raises the size from which it maps a block on its own to that of each such block freed, so
later blocks up to that size come from its heap, where much of what is freed stays resident: once the 7 MB lessons
file of a 50,000-lesson home had been read, some 10 MB of later reads stayed with the process. `hold()` fixes that
size at `BIG_BLOCK` (1 MiB: whole files, not the buffers a frame or a chunk of an answer needs); the free memory
kept at the top of the heap then stays at glibc's default too (128 KiB) instead of growing with it.

The memory stores do the same on their own when they read a file of `BIG_BLOCK` or more (`before_big_read`), so a
process that uses them without the command line (a script, a test, a benchmark) does not keep those 10 MB either.
Likewise a skill listing holds the collector off while it builds its thousands of tuples (`paused`), in any process,
and a refresh of the recall index that indexed thousands of lines hands back what its buffers held
(`give_back_free_memory`), which glibc would otherwise keep with the heap of the thread that built.

`hold()` is called first thing by the command line; `release()` once the first frame is on screen, `settle()` after
the warm-up has imported the model SDK, and `collect_between_turns()` after each turn. Without `hold()` (tests, the
app embedded elsewhere) the others do nothing, so a process that starts many apps keeps Python's defaults.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

FULL_COLLECTION_AFTER = 1_000  # young-generation passes before a full collection runs by itself (Python: 10)

BIG_BLOCK = 1024 * 1024  # bytes from which a block is mapped on its own, and handed back when freed
_M_MMAP_THRESHOLD = -3  # mallopt's parameter number, from glibc's malloc.h

_held = False
_big_blocks_fixed = False


def hold() -> None:
    """No cycle collection until `release()`: start-up only creates what it keeps. Big blocks go back when freed."""
    global _held
    _held = True
    gc.disable()
    give_back_big_blocks()


def before_big_read(size: int) -> None:
    """A file of `size` bytes is about to be read whole: from `BIG_BLOCK` on, big blocks go back when freed."""
    if size >= BIG_BLOCK and not _big_blocks_fixed:
        give_back_big_blocks()


def give_back_big_blocks() -> bool:
    """Fix glibc's size for blocks mapped on their own at `BIG_BLOCK` (False where there is no glibc)."""
    global _big_blocks_fixed
    _big_blocks_fixed = True  # (tried once: where it fails, it fails each time)
    mallopt = _glibc("mallopt")
    return mallopt is not None and bool(mallopt(_M_MMAP_THRESHOLD, BIG_BLOCK))


def give_back_free_memory() -> bool:
    """Hand what the C library holds free back to the system (glibc's `malloc_trim`; False where there is none).

    For the end of a big job on a thread of its own (a build of the recall index): glibc serves each thread from a
    heap of its own and keeps what the job freed there: some 8 MB of the app's, after indexing 100,000 episode lines."""
    trim = _glibc("malloc_trim")
    return trim is not None and bool(trim(0))


def _glibc(name: str) -> Callable[..., int] | None:
    """The function `name` of the C library the interpreter itself uses, on Linux (None elsewhere, or without it)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return getattr(ctypes.CDLL(None), name)
    except (ImportError, OSError, AttributeError):
        return None


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


@contextmanager
def paused() -> Iterator[None]:
    """No cycle collection inside, in any process: for building many objects none of which can take part in a cycle
    (a first listing of thousands of skills). Their allocations would set off young-generation passes, and every
    tenth of those a pass over the older objects, which in a process holding a big memory walks all of it for
    nothing. The collector is switched back on afterwards only if it was on before."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def collect_between_turns() -> None:
    """A turn has ended: run the full collection now rather than in the middle of the next one."""
    if _held:
        gc.collect()
