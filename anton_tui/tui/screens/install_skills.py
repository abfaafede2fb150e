"""Choosing which skills to install from a folder or repository: one list of every skill found, with its description,
in a modal. Skills that can be installed start chosen; one that cannot (its SKILL.md is malformed, a link leads out
of it, another source's skill of that label wins) is shown greyed with the reason; one whose label the user already
has is shown as a clash and starts unchosen. Installing a chosen clash asks first whether to replace the user's own
skill (kept in a backup) or to leave it out. The screen's result is the labels to install, or None.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Label, SelectionList, Static
from textual.widgets.selection_list import Selection

from anton_tui.tui.screens.confirm import ConfirmScreen

if TYPE_CHECKING:
    from anton_tui.memory.skills.install import Offer


def offer_prompt(offer: Offer) -> Content:
    """One entry per skill (a single line, wrapped when long): its label, what it does, its problem or clash."""
    parts: list[str | tuple[str, str]] = [(offer.label, "bold")]
    if offer.description:
        parts += ["  ", (" ".join(offer.description.split()), "dim")]
    if offer.problem:
        parts += ["  ", (f"· cannot be installed: {offer.problem}", "red")]
    elif offer.clash:
        parts += [
            "  ",
            (f"· clash: {offer.clash}" + (" (choose it to replace yours)" if offer.replaces else ""), "yellow"),
        ]
    return Content.assemble(*parts)


class InstallSkillsScreen(ModalScreen[list[str] | None]):
    """The skills found in a source, to choose from; Enter or the button installs the chosen ones."""

    CSS_PATH = "install_skills.tcss"
    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="install-skills.cancel"),
        Binding("ctrl+s", "install", "Install", id="install-skills.install"),
        Binding("a", "all", "All", id="install-skills.all"),
        Binding("n", "none", "None", id="install-skills.none"),
    ]
    HELP = """\
## Install skills

Every skill found in the folder or repository is listed with its description. **Space** (or a click) chooses or
leaves out the highlighted one, `a` chooses every installable one, `n` none; **Ctrl+S** or **Install** installs the
chosen ones into your skills, **Escape** installs nothing. A greyed skill cannot be installed (the reason is shown).
A skill whose label you already use is marked as a clash and starts unchosen; if you choose it, you are asked before
your own is replaced (it is moved to a backup first).
"""

    def __init__(self, source: str, offers: list[Offer]) -> None:
        super().__init__()
        self.source = source
        self.offers = offers

    def compose(self) -> ComposeResult:
        installable = sum(1 for offer in self.offers if offer.installable)
        with Vertical(id="install-dialog"):
            yield Label(Content(f"Install skills from {self.source}"), id="install-title")
            yield Static(
                Content(f"{len(self.offers)} found, {installable} can be installed. Space chooses, Ctrl+S installs."),
                id="install-summary",
            )
            yield SelectionList[str](
                *(
                    Selection(
                        offer_prompt(offer),
                        offer.label,
                        offer.installable and not offer.replaces,
                        disabled=not offer.installable,
                    )
                    for offer in self.offers
                ),
                id="install-list",
            )
            with Horizontal(id="install-buttons"):
                yield Button("Install", variant="primary", id="install-yes")
                yield Button("Cancel", id="install-no")

    def on_mount(self) -> None:
        self.query_one(SelectionList).focus()

    @property
    def chosen(self) -> list[str]:
        selected = set(self.query_one(SelectionList).selected)
        return [offer.label for offer in self.offers if offer.installable and offer.label in selected]

    def action_all(self) -> None:
        listing = self.query_one(SelectionList)
        for offer in self.offers:
            if offer.installable:
                listing.select(offer.label)

    def action_none(self) -> None:
        self.query_one(SelectionList).deselect_all()

    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "install-yes":
            self.action_install()
        else:
            self.dismiss(None)

    @work(exclusive=True, exit_on_error=False)
    async def action_install(self) -> None:
        chosen = self.chosen
        if not chosen:
            self.notify("Choose at least one skill (Space), or press Escape.", title="Install", severity="warning")
            return
        clashes = [offer.label for offer in self.offers if offer.replaces and offer.label in chosen]
        if clashes:
            names = ", ".join(clashes)
            question = f"Replace your skill{'s' if len(clashes) > 1 else ''} {names}?"
            detail = ("Yes: your current one is moved into the backups folder beside your skills, then the new one is "
                      "installed. No: it is left out and the other chosen skills are installed.")  # fmt: skip
            replace = await self.app.push_screen_wait(
                ConfirmScreen(question, detail, confirm="Replace", cancel="Leave out")
            )
            if not replace:
                chosen = [label for label in chosen if label not in clashes]
                if not chosen:
                    self.dismiss(None)
                    return
        self.dismiss(chosen)
