"""Python code as highlighted text, for tool calls in the chat and cells in the scratchpad pane.

Pygments, which does the highlighting, takes a while to import; it is loaded with the first code shown (or by the
app's warm-up after the first frame), not at start-up.
"""

from __future__ import annotations

from textual.content import Content


def highlighted_python(code: str) -> Content:
    from textual.highlight import highlight

    return highlight(code, language="python")
