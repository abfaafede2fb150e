"""The system prompt: base instructions, then memory, then the user's own project files.

Order matters: memory comes before the project's `anton.md` so the user's written instructions win over anything
the agent learned, and the skill list comes after, as a menu of procedures the model may recall.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

BASE_INSTRUCTIONS = """\
You are Anton, a capable assistant who solves problems by thinking in code. You work in the user's terminal, inside \
their project folder ({workspace}). Today is {today}.

How you work:
- For anything that needs data, computation, files or the network, use the `scratchpad` tool: run small Python \
cells, look at what they print, and build on the variables they leave behind. Reuse one scratchpad name per task.
- When a saved skill matches the request, call `recall_skill` first and follow its procedure.
- When the user refers to earlier work, use `recall` to look through past conversations.
- When you learn something that will matter next time (a preference, a pitfall, a fact about an API or the data), \
save it with `memorize`. Save facts, not chatter.
- If a step fails, read the error and change something before trying again; do not repeat a failing call unchanged.
- Answer in Markdown. Be direct: lead with the result, then the detail that supports it. Never claim something was \
done unless a tool result shows it."""

ANTON_MD_HEADING = "## Project Context (anton.md)"
ANTON_MD_INTRO = "The user wrote these notes for this workspace. They take priority over anything in your memory."
AGENT_FILES = ("AGENTS.md", "CLAUDE.md")
MAX_PROJECT_FILE_CHARS = 20_000


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


def agent_instructions(project_dir: Path) -> str:
    """AGENTS.md (preferred) or CLAUDE.md at the project root: conventions shared with other coding agents."""
    for name in AGENT_FILES:
        body = _read_text(project_dir / name)
        if body:
            return f"## Project instructions ({name})\n\n{body[:MAX_PROJECT_FILE_CHARS]}"
    return ""


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
    for section in (project_context(project_dir), agent_instructions(project_dir)):
        if section:
            parts.append(section)
    return "\n\n".join(parts)


CAP_POSTMORTEM = (
    "You have used all {cap} tool rounds allowed for one turn, so no more tools can run now. Write a short "
    "post-mortem for the user: what you tried, what is done and verified, what is still failing or unfinished, and "
    "what you would try next. Do not claim the task is complete unless it is."
)

SEALED_RESULT = "This tool call did not finish (the turn was interrupted), so it has no result."

CANCELLED_RESULT = "Cancelled by the user before it finished."
