"""Stylesheets kept next to their widget: `stylesheet(__file__, "chat.tcss")` is a widget's `DEFAULT_CSS`."""

from __future__ import annotations

from pathlib import Path


def stylesheet(module_file: str, name: str) -> str:
    """The text of the `.tcss` file `name` in the folder of the module `module_file`."""
    return (Path(module_file).parent / name).read_text(encoding="utf-8")
