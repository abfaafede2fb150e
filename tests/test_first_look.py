"""The first look at memory (the rows the inspector shows before the runtime is built) is the start of the full
listing: the same entries in the same order, for files of every shape, big or small, with the managed tier first."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from anton_tui.memory.engrams.hippocampus import Hippocampus
from anton_tui.memory.engrams.managed import ManagedHippocampus
from anton_tui.runtime import first_look
from anton_tui.runtime.first_look import FIRST_ROWS, read_first_look
from anton_tui.runtime.memory_reads import KINDS, EntryListing, entries_of

HEADINGS = ["## Always", "## Never", "## When", "## Notes", "  ## never  ", "### Deeper", "## ALWAYS"]


def listing_rows(listing: EntryListing) -> list[tuple[str, str, str]]:
    return [(tier.scope, entry.kind, entry.text) for tier in listing.tiers for entry in tier.entries]


def full_rows(kind_file: str, folders: list[tuple[str, Path]]) -> list[tuple[str, str, str]]:
    """What the inspector's full listing holds, read as the Runtime reads it."""
    rows = []
    for scope, folder in folders:
        hc = ManagedHippocampus(folder) if scope == "managed" else Hippocampus(folder, scope=scope)
        rows += [(scope, entry.kind, entry.text) for entry in entries_of(hc, kind_file)]
    return rows


def messy_rules(rng: random.Random, count: int) -> str:
    lines = ["# Rules", "- a rule above every heading"]
    for n in range(count):
        if rng.random() < 0.08:
            lines.append(rng.choice(HEADINGS))
        lines.append(rng.choice([f"- rule {n} <!-- confidence:high -->", f"- rule {n} ## not a heading", "",
                                 f"not an entry {n}", f"- rule {n}\r## Never"]))  # fmt: skip
    return "\n".join(lines) + "\n"


def messy_lessons(rng: random.Random, count: int) -> str:
    lines = ["# Lessons"]
    for n in range(count):
        lines.append(rng.choice([f"- lesson {n} <!-- topic:api -->", f"  lesson {n} indented", "", "- ", "## x"]))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", range(12))
def test_the_first_rows_are_the_first_rows_of_the_full_listing(tmp_path: Path, seed: int, monkeypatch) -> None:
    rng = random.Random(seed)
    monkeypatch.setattr(first_look, "FIRST_READ", rng.choice([64, 512, 4096]))  # reads in many small pieces
    folders = [("managed", tmp_path / "m"), ("global", tmp_path / "g"), ("project", tmp_path / "p")]
    for _scope, folder in folders:
        folder.mkdir()
        if rng.random() < 0.85:
            (folder / "rules.md").write_text(messy_rules(rng, rng.choice([0, 3, 40, 400])))
        if rng.random() < 0.85:
            (folder / "lessons.md").write_text(messy_lessons(rng, rng.choice([0, 5, 70, 700])))
        (folder / "profile.md").write_text("# Profile\n" + "".join(f"- Fact {n}\n" for n in range(rng.choice([0, 90]))))
    rows = rng.choice([1, 7, FIRST_ROWS])
    look = read_first_look(folders[1:], folders[0][1], rows)
    for kind_file in KINDS:
        tiers = folders[1:] if kind_file == "profile" else folders
        full = full_rows(kind_file, tiers)
        first = look.of(kind_file)
        assert listing_rows(first.listing) == full[:rows], kind_file
        assert first.complete == (len(full) <= rows), kind_file


def test_rules_further_on_in_the_section_being_read_come_before_later_kinds_already_read(tmp_path, monkeypatch):
    """The start of the file has When rules, then Never rules that go on past what was read: the listing has every
    Never rule first, so the When rules read are not among the first rows until the file is read further."""
    monkeypatch.setattr(first_look, "FIRST_READ", 128)
    folder = tmp_path / "g"
    folder.mkdir()
    rules = ["# Rules", "## When", "- when a", "- when b", "- when c", "## Never"]
    rules += [f"- never {n:02d}" for n in range(30)] + ["## Notes", "- a note"]
    (folder / "rules.md").write_text("\n".join(rules) + "\n")
    look = read_first_look([("global", folder)], None, rows=8)
    assert [entry.text for entry in look.rules.listing.tiers[0].entries] == [f"never {n:02d}" for n in range(8)]


def test_a_big_file_is_read_only_from_its_start(tmp_path: Path, monkeypatch) -> None:
    """50,000 lessons: the first rows come from the start of the file (one small read), not a parse of it all."""
    global_memory = tmp_path / "global"
    global_memory.mkdir()
    (global_memory / "lessons.md").write_text("# Lessons\n" + "".join(f"- lesson {n}\n" for n in range(50_000)))
    (global_memory / "rules.md").write_text(
        "# Rules\n## Always\n" + "".join(f"- always {n}\n" for n in range(5_000)) + "## Never\n- never do this\n"
    )
    parsed: list[int] = []
    real = first_look.parse_lessons_file

    def counting(data: bytes, *args: object) -> object:
        parsed.append(len(data))
        return real(data, *args)

    monkeypatch.setattr(first_look, "parse_lessons_file", counting)
    look = read_first_look([("global", global_memory), ("project", tmp_path / "project")], None)
    assert [e.text for e in look.lessons.listing.tiers[0].entries] == [f"lesson {n}" for n in range(FIRST_ROWS)]
    assert [e.text for e in look.rules.listing.tiers[0].entries] == [f"always {n}" for n in range(FIRST_ROWS)]
    assert not look.lessons.complete and not look.rules.complete
    assert sum(parsed) <= first_look.FIRST_READ


def test_the_starter_reads_the_first_look_of_its_folders(tmp_path: Path) -> None:
    from anton_tui.runtime import RuntimeStarter
    from anton_tui.settings_sources import read_env_layers

    home, project = tmp_path / "home", tmp_path / "project"
    (home / "memory").mkdir(parents=True)
    (project / ".anton" / "memory").mkdir(parents=True)
    (home / "memory" / "rules.md").write_text("# Rules\n## Never\n- never guess\n## Always\n- always cite\n")
    (project / ".anton" / "memory" / "rules.md").write_text("# Rules\n## When\n- when asked, plot\n")
    environ = {"ANTON_HOME": str(home), "ANTON_MANAGED_MEMORY": "off"}
    starter = RuntimeStarter(read_env_layers(project, environ=environ))
    look = starter.first_look()
    assert listing_rows(look.rules.listing) == [
        ("global", "always", "always cite"), ("global", "never", "never guess"), ("project", "when", "when asked, plot"),
    ]  # fmt: skip
    assert look.rules.complete and look.profile.complete and not look.profile.listing.count
