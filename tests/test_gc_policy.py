"""The collector policy: no collections while the app starts, start-up's objects kept out of later collections, and
full collections put off to the end of turns; all of it only in a process started by the command line."""

from __future__ import annotations

import subprocess
import sys
import textwrap

PROBE = textwrap.dedent(
    """
    import gc
    from anton_tui import gc_policy

    defaults = gc.get_threshold()
    gc_policy.release(); gc_policy.collect_between_turns()
    untouched = (gc.isenabled(), gc.get_freeze_count(), gc.get_threshold())
    gc_policy.hold()
    held = gc.isenabled()
    kept = [[n] for n in range(1000)]  # start-up's long-lived objects
    gc_policy.release()
    print(untouched[0], untouched[1] == 0, untouched[2] == defaults)
    print(held, gc.isenabled(), gc.get_freeze_count() >= 1000, gc.get_threshold()[2] == gc_policy.FULL_COLLECTION_AFTER)
    """
)


def test_the_collector_waits_for_the_first_frame_then_skips_start_up_objects_only_when_held() -> None:
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    untouched, held = result.stdout.split("\n")[:2]
    assert untouched == "True True True", "without hold() the defaults stay"
    assert held == "False True True True", "held: off while starting, then on with start-up frozen and full passes put off"
