"""The `read_skill_resource` tool: read one file a skill keeps beside its procedure (under `scripts/`, `references/`
or `assets/`), only when the model asks for it.

A recall lists these files; their text is sent only on demand, so a skill with long references costs nothing until
they are needed. The path must stay inside the skill's folder: no `..`, no absolute paths, no symbolic link that
leads out of it, and only the first `MAX_BYTES` of a file are returned.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from anton_tui.agent.tools.context import ToolContext
from anton_tui.agent.tools.registry import ToolDef, ToolResult

RESOURCE_FOLDERS = ("scripts", "references", "assets")
MAX_BYTES = 64 * 1024
MAX_LISTED = 50

DESCRIPTION = (
    "Read one file that a recalled skill keeps beside its procedure, such as a script under scripts/ or a note "
    "under references/. The recall lists the files available; pass the skill's label and the file's path exactly as "
    "listed."
)
INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "label": {"type": "string", "description": "The skill's label, as recalled."},
        "path": {"type": "string", "description": "The file's path inside the skill, e.g. references/columns.md."},
    },
    "required": ["label", "path"],
}


def list_resources(folder: Path | None) -> list[tuple[str, int]]:
    """(path inside the skill, size in bytes) of the files under its resource folders; links are not entered."""
    if folder is None:
        return []
    found: list[tuple[str, int]] = []
    for top in RESOURCE_FOLDERS:
        base = folder / top
        if base.is_symlink() or not base.is_dir():
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
            for name in sorted(filenames):
                path = Path(dirpath) / name
                if name.startswith(".") or path.is_symlink():
                    continue
                found.append((path.relative_to(folder).as_posix(), path.stat().st_size))
                if len(found) >= MAX_LISTED:
                    return found
    return found


def resources_note(label: str, folder: Path | None) -> str:
    """The lines a recall adds about the skill's files ("" when it has none)."""
    files = list_resources(folder)
    if not files:
        return ""
    lines = [
        "",
        "",
        "## Files of this skill",
        "",
        f"Read one with `read_skill_resource` (label `{label}`) when needed:",
    ]
    lines += [f"- {path} ({size:,} bytes)" for path, size in files]
    return "\n".join(lines)


def read_resource(store, label: str, rel: str) -> ToolResult:
    from anton_tui.memory.skills.format import validate_relative_file

    label, rel = label.strip(), rel.strip()
    try:
        skill = store.load(label) if label else None
    except ValueError as exc:
        return ToolResult(f"ERROR: {exc}.", success=False)
    if skill is None or skill.path is None:
        return ToolResult(f"ERROR: there is no skill labelled `{label}`.", success=False)
    try:
        parts = validate_relative_file(rel).parts
    except ValueError as exc:
        return ToolResult(f"ERROR: {exc}.", success=False)
    if parts[0] not in RESOURCE_FOLDERS or len(parts) < 2:
        folders = ", ".join(f"{name}/" for name in RESOURCE_FOLDERS)
        return ToolResult(f"ERROR: only files under {folders} of a skill can be read.", success=False)
    folder = os.path.realpath(skill.path)
    target = os.path.join(skill.path, *parts)
    real = os.path.realpath(target)
    if not real.startswith(folder + os.sep):
        return ToolResult(f"ERROR: {rel} leads out of the skill's folder; it is not read.", success=False)
    try:
        fd = os.open(target, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        return ToolResult(f"ERROR: {rel} cannot be read: {exc.strerror}.", success=False)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_BYTES + 1)
    try:
        text = data[:MAX_BYTES].decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < MAX_BYTES - 4:
            return ToolResult(f"ERROR: {rel} is not a text file; it is not sent.", success=False)
        text = data[: exc.start].decode("utf-8")
    if len(data) > MAX_BYTES:
        text += f"\n… ({rel} continues; only the first {MAX_BYTES // 1024} KB are shown)"
    return ToolResult(text)


async def handle_read_skill_resource(ctx: ToolContext, tool_input: dict[str, Any]) -> ToolResult:
    if ctx.skills is None:
        return ToolResult("ERROR: procedural memory is not available in this session.", success=False)
    label, rel = str(tool_input.get("label") or ""), str(tool_input.get("path") or "")
    return await asyncio.to_thread(read_resource, ctx.skills, label, rel)


READ_SKILL_RESOURCE_TOOL = ToolDef("read_skill_resource", DESCRIPTION, INPUT_SCHEMA, handle_read_skill_resource)
