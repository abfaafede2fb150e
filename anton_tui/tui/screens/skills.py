"""The skills screen: browse the saved skills as a tree, edit their files, create, rename and delete skills.

The tree lists each skill in `~/.anton/skills` with the parts it has (procedure, chunks, code files, requirements,
stats); choosing a part opens it in a syntax-highlighting editor. Ctrl+S saves through the `Runtime`, which checks
that the skill would still be valid (a skill without a procedure is refused and nothing is written). Stats are shown
read-only; a broken skill is marked with its reason and its files open read-only, untouched. Every read and write
runs in a worker through the runtime; the results come back as messages. `refresh_tree()` reloads the tree after a
change on disk and keeps the cursor where it was.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.theme import Theme
from textual.widgets import Footer, Static, TextArea, Tree
from textual.widgets.tree import TreeNode

from anton_tui.memory.skills.model import LegacyLayoutError, ReadOnlySkillError, Skill
from anton_tui.memory.skills.sources import SOURCE_ORDER, SOURCE_TITLES
from anton_tui.runtime import Runtime, SkillListing
from anton_tui.tui.screens.confirm import ConfirmScreen
from anton_tui.tui.screens.skill_form import FormModal
from anton_tui.tui.screens.skills_tree import NodeRef, SkillBranches
from anton_tui.tui.watchers import FollowInside

# JSON and JavaScript are left out on purpose: with tree-sitter 0.26, the tree-sitter-json 0.24 and
# tree-sitter-javascript 0.25 grammars crash the interpreter inside TextArea, so those files open as plain text.
LANGUAGES = {
    ".md": "markdown", ".py": "python", ".toml": "toml", ".yaml": "yaml", ".yml": "yaml",
    ".sh": "bash", ".sql": "sql", ".html": "html", ".css": "css",
}  # fmt: skip


@dataclass(frozen=True)
class OpenedFile:
    """A file read for the editor: its text (None when it cannot be opened, with the reason in `note`)."""

    ref: NodeRef
    text: str | None
    read_only: bool
    note: str


def _language(file: str) -> str | None:
    return LANGUAGES.get(Path(file).suffix.lower())


def _editor_theme(theme: Theme | None) -> str:
    """The editor's colours: the app theme's own for dark themes ("css"), a light palette for light ones."""
    return "github_light" if theme is not None and not theme.dark else "css"


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

Saved procedures, one per folder in `~/.anton/skills`, and below them the read-only skills of the project's
`.agents/skills`, of other tools (`~/.agents/skills`, `~/.claude/skills`) and the built-in ones. Saving an edit of a
read-only skill offers to copy it into your skills; saving an older-layout skill (meta.json + declarative.md) offers
to convert it to SKILL.md, keeping its old files in a backup. Choose a skill or one of its parts in the tree (**Enter**)
to open it in the editor; **Ctrl+S** saves the open file (a skill needs a procedure, so an empty one is refused),
**Ctrl+N** creates a skill from a name and when to use it, **F2** renames the selected skill, **F8** (or
**Delete** in the tree) deletes it after asking. Stats and broken skills open read-only. **Escape** leaves the
editor, and again closes this screen.
"""

    class Listed(Message):
        """The skills were read; `select` is where the cursor should go (None: where it was)."""

        def __init__(self, listing: SkillListing, select: NodeRef | None, open_after: bool) -> None:
            super().__init__()
            self.listing, self.select, self.open_after = listing, select, open_after

    class Opened(Message):
        def __init__(self, opened: OpenedFile, reload: bool) -> None:
            super().__init__()
            self.opened, self.reload = opened, reload

    class Done(Message):
        """A write finished: `message` for a toast, `error` when nothing was written; the tree reloads."""

        def __init__(self, message: str, *, error: bool = False, select: NodeRef | None = None,
                     renamed: tuple[str, str] | None = None, deleted: str | None = None,
                     saved_text: str | None = None, open_after: bool = False) -> None:  # fmt: skip
            super().__init__()
            self.message, self.error, self.select = message, error, select
            self.renamed, self.deleted, self.saved_text, self.open_after = renamed, deleted, saved_text, open_after

    def __init__(self, runtime: Runtime, *, cursor_blink: bool, select: str | None = None) -> None:
        """`cursor_blink` is the app's setting for the editor and the dialogs' text fields."""
        super().__init__()
        self.runtime = runtime
        self.cursor_blink = cursor_blink
        self.listing = SkillListing([], [])
        self.open_ref: NodeRef | None = None
        self.read_only = True
        self._original = ""
        self._unsaved: dict[tuple[str, str | None], str] = {}
        self._note = ""
        self._select_first = NodeRef(select) if select else None

    # ----------------------------------------------------------------- layout

    def compose(self) -> ComposeResult:
        yield Static("Skills · reading…", id="skills-title")
        with Horizontal(id="skills-body"):
            tree: Tree[NodeRef] = Tree("Skills", id="skills-tree")
            tree.show_root = False
            yield tree
            with Vertical(id="skills-editor-pane"):
                yield Static("Choose a skill or one of its files.", id="skills-file-info", markup=False)
                editor = TextArea.code_editor(
                    "", read_only=True, theme=_editor_theme(self.app.current_theme), id="skills-editor", soft_wrap=True
                )
                editor.cursor_blink = self.cursor_blink
                editor.show_line_numbers = False  # until a file is open (an empty editor would show a lone "1")
                yield editor
        yield Footer()

    def on_mount(self) -> None:
        self.post_message(FollowInside("skills"))  # the editor shows each skill's files: follow their changes
        self.refresh_tree(select=self._select_first, open_after=self._select_first is not None)
        self.query_one(Tree).focus()
        self.app.theme_changed_signal.subscribe(self, self._follow_theme)

    def _follow_theme(self, theme: Theme) -> None:
        self.editor.theme = _editor_theme(theme)

    @property
    def skill_tree(self) -> Tree[NodeRef]:
        return self.query_one("#skills-tree", Tree)

    @property
    def editor(self) -> TextArea:
        return self.query_one("#skills-editor", TextArea)

    @property
    def selected_label(self) -> str | None:
        """The label of the skill under the tree cursor (the command palette offers rename/delete for it)."""
        node = self.skill_tree.cursor_node
        return node.data.label if node is not None and node.data is not None else None

    @property
    def has_open_file(self) -> bool:
        return self.open_ref is not None and not self.read_only

    # ----------------------------------------------------------------- the tree

    def refresh_tree(self, select: NodeRef | None = None, *, open_after: bool = False) -> None:
        """Read the skills again (in a worker); the tree is rebuilt when they arrive, keeping the cursor on the same
        skill or file (or moving it to `select`), and the same skills expanded."""
        self.list_skills(select, open_after)

    @work(group="skills-list", exclusive=True, exit_on_error=False)
    async def list_skills(self, select: NodeRef | None, open_after: bool) -> None:
        self.post_message(self.Listed(await self.runtime.skills.listing(), select, open_after))

    @on(Listed)
    def _listed(self, message: Listed) -> None:
        self.listing = listing = message.listing
        select = message.select
        tree = self.skill_tree
        keep = select or (tree.cursor_node.data if tree.cursor_node is not None else None)
        nodes = [
            *tree.root.children,
            *(child for node in tree.root.children if node.data is None for child in node.children),
        ]
        expanded = {node.data.label for node in nodes if node.is_expanded and node.data is not None}
        if select is not None:
            expanded.add(select.label)
        tree.clear()
        branches = SkillBranches(listing, self._unsaved)
        own = [s for s in listing.skills if not s.read_only]
        for key in ("user", *(key for key in SOURCE_ORDER if key != "user")):
            found = own if key == "user" else [s for s in listing.skills if s.source == key]
            broken = [b for b in listing.broken if b.source == key]
            parent = tree.root
            if key != "user":
                if not (found or broken):
                    continue
                title = Text.assemble((SOURCE_TITLES[key], "bold"), ("  read-only", "dim"))
                parent = tree.root.add(title, expand=True)
            for label, entry in sorted([(s.label, s) for s in found] + [(b.label, b) for b in broken],
                                       key=lambda pair: pair[0]):  # fmt: skip
                if isinstance(entry, Skill):
                    branches.add_skill(parent, entry, label in expanded)
                else:
                    branches.add_broken(parent, entry, label in expanded)
        count, broken_count = len(own), len(listing.broken)
        others = len(listing.skills) - count
        summary = f"Skills · {count} saved" + (f" · {others} read-only" if others else "")
        summary += f" · {broken_count} broken" if broken_count else ""
        self.query_one("#skills-title", Static).update(Content(summary))
        target = self._find(keep) or (self._skill_node(keep.label) if keep else None)
        tree.get_node_at_line(0)  # lays out the new lines now, so the cursor can be placed on a new node
        if target is not None:
            tree.move_cursor(target)
        elif tree.root.children:
            tree.move_cursor(tree.root.children[0])
        if message.open_after and select is not None:
            self.open(select)
        elif self.open_ref is not None:
            self.read_file(self.open_ref, reload=True)

    def _find(self, ref: NodeRef | None) -> TreeNode[NodeRef] | None:
        if ref is None:
            return None
        stack = list(self.skill_tree.root.children)
        while stack:
            node = stack.pop(0)
            if node.data == ref:
                return node
            stack[:0] = list(node.children)
        return None

    def _skill_node(self, label: str) -> TreeNode[NodeRef] | None:
        return next((node for node in self.skill_tree.root.children if node.data and node.data.label == label), None)

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
        if ref.part == "broken" or (ref.part == "skill" and self.listing.problem(ref.label) is not None):
            problem = self.listing.problem(ref.label, ref.source)
            files = self.listing.files_of(problem) if problem else []
            named = [name for name in files if problem and problem.reason.startswith(name)]
            first = named or [n for n in ("SKILL.md", "meta.json", "declarative.md") if n in files] or files
            return NodeRef(ref.label, first[0], "raw", ref.source) if first else None
        skill = self.listing.skill(ref.label)
        if skill is None:
            return None
        return NodeRef(ref.label, "SKILL.md" if skill.format == "skill_md" else "declarative.md", "procedure")

    def open(self, ref: NodeRef) -> None:
        """Show `ref` in the editor (read in a worker), keeping unsaved text of the file that was open."""
        if ref.file is None or ref.part == "folder":
            target = self._primary_ref(ref)
            if target is None:
                return
            ref = target
        self._stash()
        self.read_file(ref)

    @work(group="skills-read", exclusive=True, exit_on_error=False)
    async def read_file(self, ref: NodeRef, reload: bool = False) -> None:
        self.post_message(self.Opened(await self._load(ref), reload))

    async def _load(self, ref: NodeRef) -> OpenedFile:
        skills = self.runtime.skills
        if ref.part == "raw":
            if ref.source == "user":
                problem = await skills.problem(ref.label)
            else:
                problem = self.listing.problem(ref.label, ref.source)
            reason = f"broken: {problem.reason}" if problem else "read-only"
            if ref.source != "user":
                reason += f" · in {SOURCE_TITLES.get(ref.source, ref.source)}, left as it is"
            raw = await skills.read_file(ref.label, ref.file or "", source=ref.source)
            return OpenedFile(ref, raw, True, f"read-only · {reason}")
        if ref.part == "stats":
            return OpenedFile(ref, await skills.read_file(ref.label, "stats.json"), True, "read-only · usage counters")
        found = await skills.part(ref.label, ref.part, ref.file or "")
        skill, text = found.skill, found.text
        if skill is None:
            problem = found.problem
            return OpenedFile(ref, None, True, f"{ref.label}: {problem.reason if problem else 'no longer exists'}")
        if text is None:
            return OpenedFile(ref, None, True, f"{ref.label}/{ref.file} no longer exists")
        note = f"when to use: {skill.cue}" if skill.cue else ""
        if skill.format == "anton":
            note += ("\n" if note else "") + "older layout: saving converts it to SKILL.md (old files backed up)"
        if skill.allowed_tools is not None:
            note += ("\n" if note else "") + "allowed tools: " + (", ".join(skill.allowed_tools) or "none")
        if skill.read_only:
            where = SOURCE_TITLES.get(skill.source, skill.source)
            note += ("\n" if note else "") + f"read-only ({where}): saving offers to copy it into your skills"
        return OpenedFile(ref, text, False, note)

    @on(Opened)
    def _opened(self, message: Opened) -> None:
        opened, ref = message.opened, message.opened.ref
        if message.reload:
            self._reloaded(opened)
            return
        if opened.text is None:
            self.notify(opened.note, title="Skills", severity="error")
            return
        self.open_ref, self.read_only, self._original = ref, opened.read_only, opened.text
        editor = self.editor
        editor.language = _language(ref.file or "")
        editor.load_text(self._unsaved.pop((ref.label, ref.file), opened.text))
        editor.read_only = opened.read_only
        editor.show_line_numbers = True
        self._show_info(opened.note)

    def _reloaded(self, opened: OpenedFile) -> None:
        """After a change on disk: show the open file's new text (unless edited here), or close it if it is gone."""
        ref = self.open_ref
        if ref is None or ref != opened.ref:
            return
        dirty = not self.read_only and self.editor.text != self._original
        if opened.text is None:
            if dirty:
                self._unsaved[(ref.label, ref.file)] = self.editor.text
            self._close_editor()
            return
        if not dirty and opened.text != self._original:
            self._original = opened.text
            self.editor.load_text(opened.text)
        self.read_only = opened.read_only
        self.editor.read_only = opened.read_only

    def _close_editor(self) -> None:
        self.open_ref = None
        self.editor.load_text("")
        self.editor.read_only = True
        self.editor.show_line_numbers = False
        self._show_info()

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

    # ----------------------------------------------------------------- actions

    def action_save(self) -> None:
        ref = self.open_ref
        if ref is None or self.read_only:
            self.notify("Nothing to save: open a procedure, chunk, code or requirements file.", title="Skills")
            return
        self.save_part(ref, self.editor.text)

    @work(group="skills-write", exclusive=True, exit_on_error=False)
    async def save_part(self, ref: NodeRef, text: str) -> None:
        try:
            saved = await self.runtime.skill_edits.save_part(ref.label, ref.part, ref.file or "", text)
        except LegacyLayoutError:
            self.post_message(self.ConvertAsked(ref, text))
            return
        except ReadOnlySkillError as exc:
            self.post_message(self.CopyAsked(ref, text, str(exc)))
            return
        except (ValueError, OSError) as exc:
            self.post_message(self.Done(str(exc), error=True))
            return
        self.post_message(self.Done(f"Saved {saved.label}/{ref.file}", saved_text=text))

    class ConvertAsked(Message):
        """Saving needs the older-layout skill converted to SKILL.md first; the user is asked."""

        def __init__(self, ref: NodeRef, text: str) -> None:
            super().__init__()
            self.ref, self.text = ref, text

    class CopyAsked(Message):
        """Saving an edit of a read-only skill needs a copy of it in the user's skills; the user is asked."""

        def __init__(self, ref: NodeRef, text: str, reason: str) -> None:
            super().__init__()
            self.ref, self.text, self.reason = ref, text, reason

    @on(CopyAsked)
    def _ask_copy(self, message: CopyAsked) -> None:
        ref, text = message.ref, message.text

        def answer(yes: bool | None) -> None:
            if yes:
                self.copy_and_save(ref, text)
            else:
                self.notify("Not saved: the skill is read-only.", title="Skills")

        question = (
            f"{message.reason[:1].upper()}{message.reason[1:]}. Copy it into your skills (~/.anton/skills) with this "
            "change? Your copy is then used instead of the original, which stays as it is."
        )
        self.app.push_screen(ConfirmScreen(question, confirm="Copy and save"), answer)

    @work(group="skills-write", exclusive=True, exit_on_error=False)
    async def copy_and_save(self, ref: NodeRef, text: str) -> None:
        try:
            saved = await self.runtime.skill_edits.copy_and_save_part(ref.label, ref.part, ref.file or "", text)
        except (ValueError, OSError) as exc:
            self.post_message(self.Done(str(exc), error=True))
            return
        self._unsaved.pop((ref.label, ref.file), None)
        self.open_ref = None
        select = replace(ref, label=saved.skill.label)
        self.post_message(self.Done(saved.warning or f"Saved {saved.skill.label}", select=select, open_after=True))

    @on(ConvertAsked)
    def _ask_convert(self, message: ConvertAsked) -> None:
        ref, text = message.ref, message.text

        def answer(yes: bool | None) -> None:
            if yes:
                self.convert_and_save(ref, text)
            else:
                self.notify("Not saved: the skill keeps its older layout.", title="Skills")

        question = (
            f"{ref.label} is kept in the older layout (meta.json + declarative.md). Saving converts it to SKILL.md, "
            "the layout newer Anton writes, under a hyphen-case label; its old files are copied to a backup "
            "first. Convert and save?"
        )
        self.app.push_screen(ConfirmScreen(question, confirm="Convert and save"), answer)

    @work(group="skills-write", exclusive=True, exit_on_error=False)
    async def convert_and_save(self, ref: NodeRef, text: str) -> None:
        try:
            saved = await self.runtime.skill_edits.convert_and_save_part(ref.label, ref.part, ref.file or "", text)
        except (ValueError, OSError) as exc:
            self.post_message(self.Done(str(exc), error=True))
            return
        self._unsaved.pop((ref.label, ref.file), None)
        self.open_ref = None
        new_ref = (
            NodeRef(saved.skill.label, "SKILL.md", "procedure")
            if ref.part == "procedure"
            else NodeRef(saved.skill.label)
        )
        self.post_message(self.Done(saved.warning or f"Saved {saved.skill.label}", select=new_ref, open_after=True))

    def action_new_skill(self) -> None:
        async def check(values: dict[str, str]) -> str | None:
            if not values["name"]:
                return "Give the skill a name."
            if not values["when"]:
                return "Say when to use it: that line is what Anton sees when choosing a skill."
            return None

        def create(values: dict[str, str] | None) -> None:
            if values is not None:
                self.create_skill(values["name"], values["when"])

        fields = [("name", "Name", ""), ("when", "When to use it", "")]
        self.app.push_screen(
            FormModal("New skill", fields, check, cursor_blink=self.cursor_blink, submit="Create"), create
        )

    @work(group="skills-write", exclusive=True, exit_on_error=False)
    async def create_skill(self, name: str, when: str) -> None:
        try:
            skill = await self.runtime.skill_edits.create(name, when)
        except (ValueError, OSError) as exc:
            self.post_message(self.Done(str(exc), error=True))
            return
        procedure = NodeRef(skill.label, "SKILL.md" if skill.format == "skill_md" else "declarative.md", "procedure")
        message = f"Created {skill.label}: write its procedure and press Ctrl+S."
        self.post_message(self.Done(message, select=procedure, open_after=True))

    def action_rename_skill(self) -> None:
        label = self.selected_label
        skill = self.listing.skill(label) if label else None
        if skill is None:
            reason = "it is broken; fix or delete it first" if label else "choose a skill first"
            self.notify(f"Cannot rename: {reason}.", title="Skills", severity="warning")
            return

        async def check(values: dict[str, str]) -> str | None:
            new = values["label"]
            return None if new == skill.label else await self.runtime.skill_edits.label_problem(new, skill.format)

        def rename(values: dict[str, str] | None) -> None:
            if values is not None and values["label"] != skill.label:
                self.relabel(skill.label, values["label"])

        fields = [("label", f"New label for {skill.label}", skill.label)]
        self.app.push_screen(
            FormModal("Rename skill", fields, check, cursor_blink=self.cursor_blink, submit="Rename"), rename
        )

    def relabel(self, label: str, new_label: str) -> None:
        """Move the skill to `new_label` (every file goes along, unsaved edits follow it)."""
        self._stash()
        self.rename_skill(label, new_label)

    @work(group="skills-write", exclusive=True, exit_on_error=False)
    async def rename_skill(self, label: str, new_label: str) -> None:
        try:
            result = await self.runtime.skill_edits.relabel(label, new_label)
        except (ValueError, OSError) as exc:
            self.post_message(self.Done(str(exc), error=True))
            return
        if result.warning:
            self.notify(result.warning, severity="warning")
        self.post_message(self.Done(f"Renamed {label} to {new_label}.", renamed=(label, new_label)))

    def action_delete_skill(self) -> None:
        label = self.selected_label
        if not label:
            self.notify("Choose a skill first.", title="Skills", severity="warning")
            return
        node = self.skill_tree.cursor_node
        source = node.data.source if node is not None and node.data is not None else "user"
        skill = self.listing.skill(label)
        if source == "user" and skill is not None and skill.read_only:
            source = skill.source
        if source != "user":
            where = SOURCE_TITLES.get(source, source)
            self.notify(f"{label} comes from {where} and is read-only here; nothing was deleted.", title="Skills",
                        severity="warning")  # fmt: skip
            return

        def delete(answer: bool | None) -> None:
            if answer:
                self.delete_skill(label)

        question = f"Delete the skill {label}?"
        detail = "Its folder and every file in it are removed; this cannot be undone."
        self.app.push_screen(ConfirmScreen(question, detail, confirm="Delete", danger=True), delete)

    @work(group="skills-write", exclusive=True, exit_on_error=False)
    async def delete_skill(self, label: str) -> None:
        try:
            await self.runtime.skill_edits.delete(label)
        except (ValueError, OSError) as exc:
            self.post_message(self.Done(f"Could not delete {label}: {exc}", error=True))
            return
        self.post_message(self.Done(f"Deleted {label}.", deleted=label))

    @on(Done)
    def _done(self, message: Done) -> None:
        if message.error:
            self.notify(message.message, title="Not saved", severity="error")
            return
        select = message.select
        if message.saved_text is not None and self.open_ref is not None:
            self._original = message.saved_text
            self._unsaved.pop((self.open_ref.label, self.open_ref.file), None)
            self._show_info(self._note)
        if message.renamed is not None:
            old, new = message.renamed
            self._unsaved = {
                (new if label == old else label, file): text for (label, file), text in self._unsaved.items()
            }
            if self.open_ref is not None and self.open_ref.label == old:
                self.open_ref = replace(self.open_ref, label=new)
            cursor = self.skill_tree.cursor_node
            keep = cursor.data if cursor is not None and cursor.data is not None else NodeRef(old)
            select = replace(keep, label=new)
        if message.deleted is not None:
            self._unsaved = {key: text for key, text in self._unsaved.items() if key[0] != message.deleted}
            if self.open_ref is not None and self.open_ref.label == message.deleted:
                self._close_editor()
        self.notify(message.message, title="Skills")
        self.refresh_tree(select=select, open_after=message.open_after)
        if message.open_after:
            self.editor.focus()

    def action_close(self) -> None:
        ref = self.open_ref
        dirty = ref is not None and not self.read_only and self.editor.text != self._original
        open_unsaved = dirty and ref is not None and (ref.label, ref.file) not in self._unsaved
        count = len(self._unsaved) + (1 if open_unsaved else 0)
        if not count:
            self.dismiss(None)
            return

        def leave(answer: bool | None) -> None:
            if answer:
                self.dismiss(None)

        question = f"Close and lose unsaved changes in {count} file{'s' if count > 1 else ''}?"
        self.app.push_screen(ConfirmScreen(question, confirm="Close", danger=True), leave)
