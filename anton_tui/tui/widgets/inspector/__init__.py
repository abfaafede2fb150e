"""The memory inspector pane and its tabs."""

from anton_tui.tui.widgets.inspector.pane import InspectorPane

__all__ = ["InspectorPane"]
