"""The skills screen: browse the saved skills as a tree, edit their files, create, rename and delete skills.

The tree lists each skill in `~/.anton/skills` with the parts it has (procedure, chunks, code files, requirements,
stats); choosing a part opens it in a syntax-highlighting editor. Ctrl+S saves through the `SkillStore`, after
checking that the skill would still be valid (a skill without a procedure is refused and nothing is written).
Stats are shown read-only; a broken skill is marked with its reason and its files open read-only, untouched.
`refresh_tree()` rebuilds the tree after a change on disk and keeps the cursor where it was.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen, Screen
from textual.theme import Theme
from textual.widgets import Button, Footer, Input, Label, Static, TextArea, Tree
from textual.widgets.tree import TreeNode

from anton_tui.memory.skills import BrokenSkill, Skill, SkillStore, make_unique_label, slugify, validate_label
from anton_tui.tui.screens.confirm import ConfirmScreen

# JSON and JavaScript are left out on purpose: with tree-sitter 0.26, the tree-sitter-json 0.24 and
# tree-sitter-javascript 0.25 grammars crash the interpreter inside TextArea, so those files open as plain text.
LANGUAGES = {
    ".md": "markdown", ".py": "python", ".toml": "toml", ".yaml": "yaml", ".yml": "yaml",
    ".sh": "bash", ".sql": "sql", ".html": "html", ".css": "css",
}  # fmt: skip
SKILL_MD_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")
RAW_LIMIT = 1024 * 1024
NEW_PROCEDURE = "1. Describe the first step.\n"


@dataclass(frozen=True)
class NodeRef:
    """What a tree node stands for: a skill (`file` None) or one file in it (path relative to the skill folder)."""

    label: str
    file: str | None = None
    part: str = "skill"  # skill | procedure | chunks | code | reference | requirements | stats | raw | folder


def _language(file: str) -> str | None:
    return LANGUAGES.get(Path(file).suffix.lower())


def _file_text(skill: Skill, ref: NodeRef) -> str | None:
    """The text of `ref` as the skill holds it, or None when the skill has no such part."""
    folder = "scripts/" if skill.format == "skill_md" else "code/"
    match ref.part:
        case "procedure":
            return skill.declarative_md
        case "chunks":
            return skill.chunks_md
        case "code":
            return skill.code_files.get(ref.file.removeprefix(folder))
        case "reference":
            return skill.reference_files.get(ref.file.removeprefix("references/"))
        case "requirements":
            return skill.requirements
    return None


def edited_skill(skill: Skill, ref: NodeRef, text: str) -> Skill:
    """`skill` with the part `ref` replaced by `text`. Raises ValueError when the result would not be a valid skill."""
    validate_label(skill.label)
    match ref.part:
        case "procedure":
            if not text.strip():
                raise ValueError("The procedure cannot be empty: a skill is its procedure.")
            return replace(skill, declarative_md=text)
        case "chunks":
            return replace(skill, chunks_md=text)
        case "code":
            folder = "scripts/" if skill.format == "skill_md" else "code/"
            return replace(skill, code_files={**skill.code_files, ref.file.removeprefix(folder): text})
        case "reference":
            return replace(skill, reference_files={**skill.reference_files, ref.file.removeprefix("references/"): text})
        case "requirements":
            return replace(skill, requirements=text)
    raise ValueError(f"{ref.file} is read-only.")


def label_problem(label: str, skill_format: str, store: SkillStore, current: str | None = None) -> str | None:
    """Why `label` cannot name a skill of `skill_format` in `store`, or None when it can."""
    try:
        validate_label(label)
    except ValueError as exc:
        return str(exc).capitalize() + "."
    if skill_format == "skill_md":
        if not SKILL_MD_NAME.match(label) or "--" in label or len(label) > 64:
            return "A SKILL.md label uses lowercase letters, digits and single hyphens (at most 64)."
    elif label != slugify(label):
        return f"A label uses lowercase letters, digits and underscores: try {slugify(label)}."
    if label != current and store.exists(label):
        return f"A skill called {label} already exists."
    return None


def _editor_theme(theme: Theme | None) -> str:
    """The editor's colours: the app theme's own for dark themes ("css"), a light palette for light ones."""
    return "github_light" if theme is not None and not theme.dark else "css"


def _raw(path: Path) -> str:
    try:
        with open(path, "rb") as handle:
            data = handle.read(RAW_LIMIT + 1)
    except OSError as exc:
        return f"(cannot be read: {exc.strerror})"
    text = data[:RAW_LIMIT].decode("utf-8", errors="replace")
    return text + ("\n… (file continues)" if len(data) > RAW_LIMIT else "")


def _folder_files(folder: Path) -> list[str]:
    files = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if path.is_file() and not any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
            files.append(rel.as_posix())
    return files


class FormModal(ModalScreen[dict[str, str] | None]):
    """A small form of text fields; `check(values)` returns a problem to show, or None to accept."""

    CSS_PATH = "skills.tcss"
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="skills.form-cancel")]

    def __init__(
        self,
        title: str,
        fields: list[tuple[str, str, str]],
        check: Callable[[dict[str, str]], str | None],
        *,
        submit: str = "OK",
    ) -> None:
        super().__init__()
        self.title_text = title
        self.fields = fields  # (id, label, initial value)
        self.check = check
        self.submit_label = submit

    def compose(self) -> ComposeResult:
        blink = bool(getattr(self.app, "cursor_blink", True))
        with Vertical(id="form-dialog"):
            yield Label(Content(self.title_text), id="form-title")
            for field_id, label, value in self.fields:
                yield Label(Content(label), classes="form-label")
                field = Input(value, id=field_id, compact=True)
                field.cursor_blink = blink
                yield field
            yield Static("", id="form-error", markup=False)
            with Horizontal(id="form-buttons"):
                yield Button(self.submit_label, variant="primary", id="form-ok")
                yield Button("Cancel", id="form-cancel")

    def values(self) -> dict[str, str]:
        return {field_id: self.query_one(f"#{field_id}", Input).value.strip() for field_id, _, _ in self.fields}

    @on(Input.Submitted)
    @on(Button.Pressed, "#form-ok")
    def _submit(self, event: Input.Submitted | Button.Pressed) -> None:
        event.stop()
        values = self.values()
        problem = self.check(values)
        if problem:
            self.query_one("#form-error", Static).update(problem)
            self.notify(problem, title="Not saved", severity="error")
            return
        self.dismiss(values)

    @on(Button.Pressed, "#form-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


class SkillsScreen(Screen[None]):
    """Browse and edit the saved skills."""

    CSS_PATH = "skills.tcss"
    BINDINGS = [
        Binding("ctrl+s", "save", "Save", id="skills.save", priority=True),
        Binding("ctrl+n,f7", "new_skill", "New skill", id="skills.new"),
        Binding("f2", "rename_skill", "Rename", id="skills.rename"),
        Binding("f8,delete", "delete_skill", "Delete", id="skills.delete"),
        Binding("escape", "close", "Close", id="skills.close"),
    ]
    HELP = """\
## Skills

Saved procedures, one per folder in `~/.anton/skills`. Choose a skill or one of its parts in the tree (**Enter**)
to open it in the editor; **Ctrl+S** saves the open file (a skill needs a procedure, so an empty one is refused),
**Ctrl+N** creates a skill from a name and when to use it, **F2** renames the selected skill, **F8** (or
**Delete** in the tree) deletes it after asking. Stats and broken skills open read-only. **Escape** leaves the
editor, and again closes this screen.
"""

    def __init__(self, store: SkillStore) -> None:
        super().__init__()
        self.store = store
        self.open_ref: NodeRef | None = None
        self.read_only = True
        self._original = ""
        self._unsaved: dict[tuple[str, str | None], str] = {}
        self._note = ""

    # ----------------------------------------------------------------- layout

    def compose(self) -> ComposeResult:
        yield Static("", id="skills-title")
        with Horizontal(id="skills-body"):
            tree: Tree[NodeRef] = Tree("Skills", id="skills-tree")
            tree.show_root = False
            yield tree
            with Vertical(id="skills-editor-pane"):
                yield Static("Choose a skill or one of its files.", id="skills-file-info", markup=False)
                editor = TextArea.code_editor(
                    "", read_only=True, theme=_editor_theme(self.app.current_theme), id="skills-editor", soft_wrap=True
                )
                editor.cursor_blink = bool(getattr(self.app, "cursor_blink", True))
                yield editor
        yield Footer()

    def on_mount(self) -> None:
        self.refresh_tree()
        self.query_one(Tree).focus()
        self.app.theme_changed_signal.subscribe(self, self._follow_theme)

    def _follow_theme(self, theme: Theme) -> None:
        self.editor.theme = _editor_theme(theme)

    @property
    def tree(self) -> Tree[NodeRef]:
        return self.query_one("#skills-tree", Tree)

    @property
    def editor(self) -> TextArea:
        return self.query_one("#skills-editor", TextArea)

    @property
    def selected_label(self) -> str | None:
        """The label of the skill under the tree cursor (the command palette offers rename/delete for it)."""
        node = self.tree.cursor_node
        return node.data.label if node is not None and node.data is not None else None

    @property
    def has_open_file(self) -> bool:
        return self.open_ref is not None and not self.read_only

    # ----------------------------------------------------------------- the tree

    def refresh_tree(self, select: NodeRef | None = None) -> None:
        """Rebuild the tree from disk, keeping the cursor on the same skill or file (or moving it to `select`) and
        the same skills expanded."""
        tree = self.tree
        keep = select or (tree.cursor_node.data if tree.cursor_node is not None else None)
        expanded = {node.data.label for node in tree.root.children if node.is_expanded and node.data is not None}
        if select is not None:
            expanded.add(select.label)
        tree.clear()
        skills, broken = self.store.list_all(), self.store.broken()
        entries = sorted([(s.label, s) for s in skills] + [(b.label, b) for b in broken], key=lambda pair: pair[0])
        for label, entry in entries:
            if isinstance(entry, Skill):
                self._add_skill(tree, entry, label in expanded)
            else:
                self._add_broken(tree, entry, label in expanded)
        summary = f"Skills · {len(skills)} saved" + (f" · {len(broken)} broken" if broken else "")
        self.query_one("#skills-title", Static).update(Content(summary))
        target = self._find(keep) or (self._skill_node(keep.label) if keep else None)
        tree.get_node_at_line(0)  # lays out the new lines now, so the cursor can be placed on a new node
        if target is not None:
            tree.move_cursor(target)
        elif tree.root.children:
            tree.move_cursor(tree.root.children[0])
        self._reload_open_file()

    def _find(self, ref: NodeRef | None) -> TreeNode[NodeRef] | None:
        if ref is None:
            return None
        stack = list(self.tree.root.children)
        while stack:
            node = stack.pop(0)
            if node.data == ref:
                return node
            stack[:0] = list(node.children)
        return None

    def _skill_node(self, label: str) -> TreeNode[NodeRef] | None:
        return next((node for node in self.tree.root.children if node.data and node.data.label == label), None)

    def _leaf(self, parent: TreeNode[NodeRef], text: str, ref: NodeRef, note: str = "") -> None:
        label = Text(text)
        if note:
            label.append(f"  {note}", style="dim")
        if (ref.label, ref.file) in self._unsaved:
            label.append("  ●", style="bold")
        parent.add_leaf(label, data=ref)

    def _add_skill(self, tree: Tree[NodeRef], skill: Skill, expand: bool) -> None:
        label = Text(skill.label)
        if skill.name and skill.name != skill.label:
            label.append(f"  {skill.name}", style="dim")
        node = tree.root.add(label, data=NodeRef(skill.label), expand=expand)
        if skill.format == "skill_md":
            self._leaf(node, "SKILL.md", NodeRef(skill.label, "SKILL.md", "procedure"), "procedure")
            folders = [("references", "reference", 2, skill.reference_files), ("scripts", "code", 3, skill.code_files)]
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
        if skill.path is not None and (skill.path / "stats.json").is_file():
            recalls = f"{skill.stats.total_recalls} recalls"
            self._leaf(node, "stats.json", NodeRef(skill.label, "stats.json", "stats"), recalls)

    def _add_broken(self, tree: Tree[NodeRef], problem: BrokenSkill, expand: bool) -> None:
        label = Text(problem.label)
        label.append("  broken", style="bold red")
        node = tree.root.add(label, data=NodeRef(problem.label, None, "broken"), expand=expand)
        node.add_leaf(Text(problem.reason, style="red"), data=NodeRef(problem.label, None, "broken"))
        for name in _folder_files(problem.path):
            self._leaf(node, name, NodeRef(problem.label, name, "raw"))

    # ----------------------------------------------------------------- opening files

    @on(Tree.NodeSelected, "#skills-tree")
    def _node_selected(self, event: Tree.NodeSelected[NodeRef]) -> None:
        ref = event.node.data
        if ref is not None:
            self.open(ref)

    def _primary_ref(self, ref: NodeRef) -> NodeRef | None:
        """The file a skill node (or folder node) opens: the procedure, or for a broken skill the file at fault."""
        if ref.part == "folder":
            return None
        if ref.part == "broken":
            problem = self.store.problem(ref.label)
            folder = self.store.root / ref.label
            files = _folder_files(folder) if folder.is_dir() else []
            named = [name for name in files if problem and problem.reason.startswith(name)]
            first = named or [n for n in ("SKILL.md", "meta.json", "declarative.md") if n in files] or files
            return NodeRef(ref.label, first[0], "raw") if first else None
        skill = self.store.load(ref.label)
        if skill is None:
            return None
        return NodeRef(ref.label, "SKILL.md" if skill.format == "skill_md" else "declarative.md", "procedure")

    def open(self, ref: NodeRef) -> None:
        """Show `ref` in the editor, keeping unsaved text of the file that was open."""
        if ref.file is None or ref.part == "folder":
            target = self._primary_ref(ref)
            if target is None:
                return
            ref = target
        self._stash()
        text, read_only, note = self._load(ref)
        if text is None:
            self.notify(note, title="Skills", severity="error")
            return
        self.open_ref, self.read_only, self._original = ref, read_only, text
        editor = self.editor
        editor.language = _language(ref.file or "")
        editor.load_text(self._unsaved.pop((ref.label, ref.file), text))
        editor.read_only = read_only
        self._show_info(note)

    def _load(self, ref: NodeRef) -> tuple[str | None, bool, str]:
        """(text, read-only?, note) for `ref`; text None with the reason when it cannot be opened."""
        if ref.part == "raw":
            problem = self.store.problem(ref.label)
            reason = f"broken: {problem.reason}" if problem else "read-only"
            return _raw(self.store.root / ref.label / ref.file), True, f"read-only · {reason}"
        if ref.part == "stats":
            return _raw(self.store.root / ref.label / "stats.json"), True, "read-only · usage counters"
        skill = self.store.load(ref.label)
        if skill is None:
            problem = self.store.problem(ref.label)
            return None, True, f"{ref.label}: {problem.reason if problem else 'no longer exists'}"
        text = _file_text(skill, ref)
        if text is None:
            return None, True, f"{ref.label}/{ref.file} no longer exists"
        return text, False, f"when to use: {skill.cue}" if skill.cue else ""

    def _show_info(self, note: str = "") -> None:
        ref = self.open_ref
        if ref is None:
            self.query_one("#skills-file-info", Static).update("Choose a skill or one of its files.")
            return
        dirty = not self.read_only and self.editor.text != self._original
        head = f"{ref.label}/{ref.file}" + (" · modified" if dirty else "")
        self.query_one("#skills-file-info", Static).update(f"{head}\n{note}" if note else head)
        self._note = note

    @on(TextArea.Changed, "#skills-editor")
    def _edited(self) -> None:
        self._show_info(self._note)

    def _stash(self) -> None:
        """Keep the open file's unsaved text, so it comes back when the file is opened again."""
        ref = self.open_ref
        if ref is not None and not self.read_only and self.editor.text != self._original:
            self._unsaved[(ref.label, ref.file)] = self.editor.text
            node = self._find(ref)
            if node is not None and not str(node.label).endswith("●"):
                node.set_label(Text.assemble(node.label, ("  ●", "bold")))

    def _reload_open_file(self) -> None:
        """After a change on disk: show the open file's new text (unless edited here), or close it if it is gone."""
        ref = self.open_ref
        if ref is None:
            return
        dirty = not self.read_only and self.editor.text != self._original
        text, read_only, note = self._load(ref)
        if text is None:
            if dirty:
                self._unsaved[(ref.label, ref.file)] = self.editor.text
            self.open_ref = None
            self.editor.load_text("")
            self.editor.read_only = True
            self._show_info()
            return
        if not dirty and text != self._original:
            self._original = text
            self.editor.load_text(text)
        self.read_only = read_only
        self.editor.read_only = read_only

    # ----------------------------------------------------------------- actions

    def action_save(self) -> None:
        ref = self.open_ref
        if ref is None or self.read_only:
            self.notify("Nothing to save: open a procedure, chunk, code or requirements file.", title="Skills")
            return
        skill = self.store.load(ref.label)
        if skill is None:
            message = f"{ref.label} cannot be loaded any more; nothing was written."
            self.notify(message, title="Not saved", severity="error")
            return
        try:
            saved = self.store.save(edited_skill(skill, ref, self.editor.text))
        except (ValueError, OSError) as exc:
            self.notify(str(exc), title="Not saved", severity="error")
            return
        self._original = self.editor.text
        self._unsaved.pop((ref.label, ref.file), None)
        self._show_info(self._note)
        self.notify(f"Saved {saved.label}/{ref.file}", title="Skills")
        self.refresh_tree()

    def action_new_skill(self) -> None:
        def check(values: dict[str, str]) -> str | None:
            if not values["name"]:
                return "Give the skill a name."
            if not values["when"]:
                return "Say when to use it: that line is what Anton sees when choosing a skill."
            return None

        def create(values: dict[str, str] | None) -> None:
            if values is None:
                return
            label = make_unique_label(values["name"], self.store)
            skill = Skill(label=label, name=values["name"], when_to_use=values["when"], declarative_md=NEW_PROCEDURE)
            try:
                self.store.save(skill)
            except (ValueError, OSError) as exc:
                self.notify(str(exc), title="Not created", severity="error")
                return
            procedure = NodeRef(label, "declarative.md", "procedure")
            self.refresh_tree(select=procedure)
            self.open(procedure)
            self.editor.focus()
            self.notify(f"Created {label}: write its procedure and press Ctrl+S.", title="Skills")

        fields = [("name", "Name", ""), ("when", "When to use it", "")]
        self.app.push_screen(FormModal("New skill", fields, check, submit="Create"), create)

    def action_rename_skill(self) -> None:
        label = self.selected_label
        skill = self.store.load(label) if label else None
        if skill is None:
            reason = "it is broken; fix or delete it first" if label else "choose a skill first"
            self.notify(f"Cannot rename: {reason}.", title="Skills", severity="warning")
            return

        def check(values: dict[str, str]) -> str | None:
            new = values["label"]
            return None if new == skill.label else label_problem(new, skill.format, self.store)

        def rename(values: dict[str, str] | None) -> None:
            if values is None or values["label"] == skill.label:
                return
            self.rename(skill, values["label"])

        fields = [("label", f"New label for {skill.label}", skill.label)]
        self.app.push_screen(FormModal("Rename skill", fields, check, submit="Rename"), rename)

    def rename(self, skill: Skill, new_label: str) -> bool:
        """Move the skill's folder to `new_label` (every file goes along), then record the label inside it."""
        problem = label_problem(new_label, skill.format, self.store)
        if problem or skill.path is None:
            self.notify(problem or "The skill has no folder.", title="Not renamed", severity="error")
            return False
        self._stash()
        target = self.store.root / new_label
        try:
            os.rename(skill.path, target)
        except OSError as exc:
            self.notify(f"Could not rename {skill.label}: {exc.strerror}", title="Not renamed", severity="error")
            return False
        extra = dict(skill.extra)
        if skill.format == "skill_md":
            extra["name"] = new_label
        try:
            self.store.save(replace(skill, label=new_label, path=None, extra=extra))
        except (ValueError, OSError) as exc:
            self.notify(f"Renamed the folder, but its label inside was not updated: {exc}", severity="warning")
        self._unsaved = {
            (new_label if label == skill.label else label, file): text for (label, file), text in self._unsaved.items()
        }
        if self.open_ref is not None and self.open_ref.label == skill.label:
            self.open_ref = replace(self.open_ref, label=new_label)
        cursor = self.tree.cursor_node
        keep = cursor.data if cursor is not None and cursor.data is not None else NodeRef(skill.label)
        self.refresh_tree(select=replace(keep, label=new_label))
        self.notify(f"Renamed {skill.label} to {new_label}.", title="Skills")
        return True

    def action_delete_skill(self) -> None:
        label = self.selected_label
        if not label:
            self.notify("Choose a skill first.", title="Skills", severity="warning")
            return

        def delete(answer: bool | None) -> None:
            if not answer:
                return
            try:
                self.store.delete(label)
            except (ValueError, OSError) as exc:
                self.notify(f"Could not delete {label}: {exc}", title="Not deleted", severity="error")
                return
            self._unsaved = {key: text for key, text in self._unsaved.items() if key[0] != label}
            if self.open_ref is not None and self.open_ref.label == label:
                self.open_ref = None
                self.editor.load_text("")
                self.editor.read_only = True
                self._show_info()
            self.refresh_tree()
            self.notify(f"Deleted {label}.", title="Skills")

        question = f"Delete the skill {label}?"
        detail = "Its folder and every file in it are removed; this cannot be undone."
        self.app.push_screen(ConfirmScreen(question, detail, confirm="Delete", danger=True), delete)

    def action_close(self) -> None:
        ref = self.open_ref
        dirty = ref is not None and not self.read_only and self.editor.text != self._original
        count = len(self._unsaved) + (1 if dirty and (ref.label, ref.file) not in self._unsaved else 0)
        if not count:
            self.dismiss(None)
            return

        def leave(answer: bool | None) -> None:
            if answer:
                self.dismiss(None)

        question = f"Close and lose unsaved changes in {count} file{'s' if count > 1 else ''}?"
        self.app.push_screen(ConfirmScreen(question, confirm="Close", danger=True), leave)
