"""The nodes of the skills screen's tree: what a node stands for (`NodeRef`), and the branch of one skill (its files
by part, each folder with the stage it is read at, the stats) or of a broken one (its reason and its raw files).

`SkillsScreen` (`screens/skills.py`) makes a `SkillBranches` for each listing it shows, with the files that have
unsaved edits (marked ●).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from rich.text import Text
from textual.widgets.tree import TreeNode

from anton_tui.memory.skills.model import BrokenSkill, Skill
from anton_tui.memory.skills.sources import SOURCE_TITLES
from anton_tui.runtime import SkillListing


@dataclass(frozen=True)
class NodeRef:
    """What a tree node stands for: a skill (`file` None) or one file in it (path relative to the skill folder)."""

    label: str
    file: str | None = None
    part: str = "skill"  # skill | procedure | chunks | code | reference | requirements | stats | raw | folder
    source: str = "user"  # set on the nodes of a broken skill found in a read-only source


class SkillBranches:
    """Builds the tree's branches from one listing; `unsaved` names the files (label, file) with unsaved edits."""

    def __init__(self, listing: SkillListing, unsaved: Collection[tuple[str, str | None]]) -> None:
        self.listing = listing
        self.unsaved = unsaved

    def _leaf(self, parent: TreeNode[NodeRef], text: str, ref: NodeRef, note: str = "") -> None:
        label = Text(text)
        if note:
            label.append(f"  {note}", style="dim")
        if (ref.label, ref.file) in self.unsaved:
            label.append("  ●", style="bold")
        parent.add_leaf(label, data=ref)

    def add_skill(self, parent: TreeNode[NodeRef], skill: Skill, expand: bool) -> None:
        label = Text(skill.label)
        if skill.name and skill.name != skill.label:
            label.append(f"  {skill.name}", style="dim")
        if skill.format == "anton":
            label.append("  older layout", style="yellow")
        shadowed = self.listing.clashes.get(skill.label)
        if shadowed:
            label.append("  hides " + ", ".join(SOURCE_TITLES.get(k, k) for k in shadowed), style="yellow")
        node = parent.add(label, data=NodeRef(skill.label), expand=expand)
        if skill.format == "skill_md":
            self._leaf(node, "SKILL.md", NodeRef(skill.label, "SKILL.md", "procedure"), "procedure")
            folders: list[tuple[str, str, int, dict[str, str]]] = [
                ("references", "reference", 2, skill.reference_files),
                ("scripts", "code", 3, skill.code_files),
            ]
        else:
            self._leaf(node, "declarative.md", NodeRef(skill.label, "declarative.md", "procedure"), "procedure")
            if skill.chunks_md is not None:
                self._leaf(node, "chunks.md", NodeRef(skill.label, "chunks.md", "chunks"), "stage 2")
            folders = [("code", "code", 3, skill.code_files)]
        for folder, part, stage, files in folders:
            if not files:
                continue
            heading = Text.assemble(f"{folder}/", (f"  stage {stage}", "dim"))
            branch = node.add(heading, data=NodeRef(skill.label, folder, "folder"), expand=True)
            for name in sorted(files):
                self._leaf(branch, name, NodeRef(skill.label, f"{folder}/{name}", part))
        if skill.requirements is not None:
            self._leaf(node, "requirements.txt", NodeRef(skill.label, "requirements.txt", "requirements"))
        if skill.label in self.listing.with_stats:
            recalls = f"{skill.stats.total_recalls} recalls"
            self._leaf(node, "stats.json", NodeRef(skill.label, "stats.json", "stats"), recalls)

    def add_broken(self, parent: TreeNode[NodeRef], problem: BrokenSkill, expand: bool) -> None:
        label = Text(problem.label)
        label.append("  broken", style="bold red")
        if problem.source != "user":
            label.append("  left as it is", style="dim")
        ref = NodeRef(problem.label, None, "broken", problem.source)
        node = parent.add(label, data=ref, expand=expand)
        node.add_leaf(Text(problem.reason, style="red"), data=ref)
        for name in self.listing.files_of(problem):
            self._leaf(node, name, NodeRef(problem.label, name, "raw", problem.source))
