"""What a widget may ask of the app it runs in: the `Runtime`, once it is built.

Textual types a widget's `app` as any `App`; `HoldsRuntime` lets a widget check that its app holds a runtime (the
Anton app does; a test's bare host may not) without naming the app's class, which would make an import circle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from anton_tui.runtime import Runtime


@runtime_checkable
class HoldsRuntime(Protocol):
    """An app that holds the Runtime (None until it is built)."""

    runtime: Runtime | None


def runtime_of(app: object) -> Runtime | None:
    """The app's runtime, or None while it is being built or when the app holds none."""
    return app.runtime if isinstance(app, HoldsRuntime) else None
