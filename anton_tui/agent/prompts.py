"""What the model is given besides the conversation: the system prompt, and the memory files at its front.

The system prompt is the base instructions, the skill list, the memory chosen for the turn, then the project's
`anton.md`: memory comes before the project's notes so the user's written instructions win over anything the agent
learned. The memory files (`memory_files`) are the user's own instructions shared with other coding agents, each
its own user message at the very front of every request, in this order: the user-level ``$ANTON_HOME/AGENTS.md``,
the project's ``AGENTS.md`` (or ``CLAUDE.md`` when there is none), the personal ``AGENTS.local.md`` (meant to be
git-ignored). They are added to each request, never to the history, so no summary or trim ever drops them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

BASE_INSTRUCTIONS = """\
You are Anton, a capable assistant who solves problems by thinking in code. You work in the user's terminal, inside \
their project folder ({workspace}). Today is {today}.

How you work:
- For anything that needs data, computation, files or the network, use the `scratchpad` tool: run small Python \
cells, look at what they print, and build on the variables they leave behind. Reuse one scratchpad name per task.
- When a saved skill matches the request, call `recall_skill` first (or write `[skill: label]` in your answer to \
have it given for your next step) and follow its procedure.
- When the user refers to earlier work, use `recall` to look through past conversations.
- When you learn something that will matter next time (a preference, a pitfall, a fact about an API or the data), \
save it with `memorize`. Save facts, not chatter.
- If a step fails, read the error and change something before trying again; do not repeat a failing call unchanged.
- Answer in Markdown. Be direct: lead with the result, then the detail that supports it. Never claim something was \
done unless a tool result shows it."""

ANTON_MD_HEADING = "## Project Context (anton.md)"
ANTON_MD_INTRO = "The user wrote these notes for this workspace. They take priority over anything in your memory."
AGENT_FILES = ("AGENTS.md", "CLAUDE.md")
LOCAL_FILE = "AGENTS.local.md"
MAX_PROJECT_FILE_CHARS = 20_000
MEMORY_FILE_INTRO = {
    "user": "The user's own instructions for every project (user level, {path}). Follow them.",
    "project": "This project's instructions for coding agents ({path}). Follow them.",
    "local": "The user's personal instructions for this project ({path}, not shared). They win over the project's.",
}


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""


def project_context(project_dir: Path) -> str:
    body = _read_text(project_dir / ".anton" / "anton.md")
    if not body:
        return ""
    return f"{ANTON_MD_HEADING}\n\n{ANTON_MD_INTRO}\n\n{body[:MAX_PROJECT_FILE_CHARS]}"


@dataclass(frozen=True, slots=True)
class MemoryFile:
    """One memory file found: its level (``user``, ``project``, ``local``), where it is, and its text."""

    level: str
    path: Path
    text: str

    def message(self) -> dict[str, Any]:
        """The user message that carries it at the front of a request."""
        intro = MEMORY_FILE_INTRO[self.level].format(path=self.path.name if self.level != "user" else self.path)
        return {"role": "user", "content": f"{MEMORY_FILE_MARKER} {self.path.name}]\n{intro}\n\n{self.text}"}


MEMORY_FILE_MARKER = "[Memory file:"


def memory_files(home: Path | None, project_dir: Path) -> list[MemoryFile]:
    """The memory files there are, in the order they are given (see the module docstring)."""
    found = []
    if home is not None and (text := _read_text(home / "AGENTS.md")):
        found.append(MemoryFile("user", home / "AGENTS.md", text[:MAX_PROJECT_FILE_CHARS]))
    for name in AGENT_FILES:
        if text := _read_text(project_dir / name):
            found.append(MemoryFile("project", project_dir / name, text[:MAX_PROJECT_FILE_CHARS]))
            break
    if text := _read_text(project_dir / LOCAL_FILE):
        found.append(MemoryFile("local", project_dir / LOCAL_FILE, text[:MAX_PROJECT_FILE_CHARS]))
    return found


def build_system_prompt(
    *, project_dir: Path, memory_context: str, skills_section: str, now: datetime | None = None
) -> str:
    now = now or datetime.now()
    parts = [BASE_INSTRUCTIONS.format(workspace=project_dir, today=now.strftime("%Y-%m-%d"))]
    # As in anton-agent, the skill list (which changes rarely) comes before the memory snapshot (which changes
    # every turn).
    if skills_section.strip():
        parts.append(skills_section.strip())
    if memory_context.strip():
        parts.append(memory_context.strip())
    if section := project_context(project_dir):
        parts.append(section)
    return "\n\n".join(parts)


CAP_POSTMORTEM = (
    "You have used all {cap} tool rounds allowed for one turn, so no more tools can run now. Write a short "
    "post-mortem for the user: what you tried, what is done and verified, what is still failing or unfinished, and "
    "what you would try next. Do not claim the task is complete unless it is."
)

SEALED_RESULT = "This tool call did not finish (the turn was interrupted), so it has no result."

CANCELLED_RESULT = "Cancelled by the user before it finished."
