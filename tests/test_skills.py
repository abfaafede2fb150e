"""Procedural memory: skill folders on disk, in both anton-agent layouts, shared safely between processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from datetime import datetime
from pathlib import Path

import pytest

from anton_tui.memory.skills.store import (
    BrokenSkillError,
    LegacyLayoutError,
    Skill,
    SkillNotFoundError,
    SkillStore,
    format_no_match,
    format_recall,
    make_unique_label,
    procedural_memory_section,
    slugify,
)

REPO = Path(__file__).resolve().parents[1]

# Golden files: exactly what anton-agent wrote for the skill "CSV Summary" (reference §14).
V5_META = """{
  "label": "csv_summary",
  "name": "CSV Summary",
  "description": "Summarize a CSV",
  "when_to_use": "user asks to summarize a csv",
  "created_at": "2026-11-22T04:23:52.709659+00:00",
  "provenance": "manual",
  "stage_1_present": true,
  "stage_2_present": false,
  "stage_3_present": false
}
"""
V5_DECLARATIVE = "1. Load\n2. describe()"


def stats_text(last_used: str) -> str:
    return (
        textwrap.dedent(
            """\
            {
              "total_recalls": 1,
              "stage_1": {
                "recommended": 1,
                "used": 0,
                "last_used": "%s",
                "confidence": 0.0
              },
              "stage_2": {
                "recommended": 0,
                "used": 0,
                "last_used": "",
                "confidence": 0.0
              },
              "stage_3": {
                "recommended": 0,
                "used": 0,
                "last_used": "",
                "confidence": 0.0
              }
            }
            """
        )
        % last_used
    )


V5_STATS = stats_text("2026-11-22T04:23:52.710133+00:00")
V10_SKILL_MD = """---
name: csv-summary
description: Summarize a CSV. user asks to summarize a csv
metadata:
  display_name: CSV Summary
  provenance: manual
  created_at: '2026-11-22T04:23:45.068453+00:00'
---
1. Load
2. describe()"""
V10_STATS = stats_text("2026-11-22T04:23:45.070172+00:00")


def write_files(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_bytes(text.encode("utf-8"))
    return folder


def write_v5_sample(root: Path, label: str = "csv_summary") -> Path:
    meta = V5_META.replace('"csv_summary"', json.dumps(label))
    return write_files(
        root / label, {"meta.json": meta, "declarative.md": V5_DECLARATIVE, "stats.json": V5_STATS}
    )


def write_v10_sample(root: Path) -> Path:
    return write_files(root / "csv-summary", {"SKILL.md": V10_SKILL_MD, "stats.json": V10_STATS})


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def fixed_clock(*moments: str):
    queue = [datetime.fromisoformat(m) for m in moments]
    return lambda: queue.pop(0)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "skills"


# --------------------------------------------------------------------------- reading anton-agent's files


def test_v5_sample_skill_reads_exactly(root: Path) -> None:
    write_v5_sample(root)
    skill = SkillStore(root).load("csv_summary")

    assert skill is not None
    assert (skill.label, skill.name, skill.description, skill.when_to_use) == (
        "csv_summary",
        "CSV Summary",
        "Summarize a CSV",
        "user asks to summarize a csv",
    )
    assert skill.declarative_md == "1. Load\n2. describe()"
    assert skill.created_at == "2026-11-22T04:23:52.709659+00:00"
    assert skill.provenance == "manual"
    assert skill.format == "anton"
    assert skill.stages_present == (1,)
    assert skill.stats.total_recalls == 1
    assert skill.stats.stage(1).recommended == 1
    assert skill.stats.stage(1).last_used == "2026-11-22T04:23:52.710133+00:00"
    assert skill.stats.stage(2).recommended == 0 and skill.stats.stage(2).last_used == ""


def test_v10_sample_skill_reads_exactly(root: Path) -> None:
    write_v10_sample(root)
    skill = SkillStore(root).load("csv-summary")

    assert skill is not None
    assert skill.label == "csv-summary"
    assert skill.name == "CSV Summary"
    assert skill.description == "Summarize a CSV. user asks to summarize a csv"
    assert skill.declarative_md == "1. Load\n2. describe()"
    assert skill.created_at == "2026-11-22T04:23:45.068453+00:00"
    assert skill.provenance == "manual"
    assert skill.format == "skill_md"
    assert skill.stats.total_recalls == 1
    assert skill.stats.stage(1).last_used == "2026-11-22T04:23:45.070172+00:00"


def test_both_label_spellings_resolve_and_both_kinds_are_listed(root: Path) -> None:
    write_v5_sample(root)
    write_v10_sample(root)
    write_files(root / "deploy-app", {"SKILL.md": "---\nname: deploy-app\ndescription: Ship it\n---\nSteps"})
    store = SkillStore(root)

    assert store.load("csv-summary").format == "skill_md"  # exact folder name wins
    assert store.load("deploy_app").label == "deploy-app"
    assert store.load("nothing_here") is None
    assert [(s["label"], s["format"]) for s in store.list_summaries()] == [
        ("csv-summary", "skill_md"),
        ("csv_summary", "anton"),
        ("deploy-app", "skill_md"),
    ]
    assert [s.label for s in store.list_all()] == ["csv-summary", "csv_summary", "deploy-app"]
    summary = store.list_summaries()[1]
    assert summary == {
        "label": "csv_summary",
        "name": "CSV Summary",
        "description": "Summarize a CSV",
        "when_to_use": "user asks to summarize a csv",
        "format": "anton",
        "source": "user",
        "model_invocable": True,
    }


def test_skill_md_without_name_or_metadata_uses_its_folder(root: Path) -> None:
    write_files(root / "tidy-data", {"SKILL.md": "---\r\ndescription: Reshape wide tables\r\n---\r\nStep one\r\n"})
    skill = SkillStore(root).load("tidy_data")

    assert (skill.label, skill.name, skill.description) == ("tidy-data", "tidy-data", "Reshape wide tables")
    assert skill.declarative_md == "Step one\r\n"
    assert skill.provenance == "" and skill.created_at == ""
    assert SkillStore(root).list_summaries()[0]["description"] == "Reshape wide tables"


def test_non_utf8_meta_json_is_reported_not_crashed(root: Path) -> None:
    store = SkillStore(root)
    store.save(Skill(label="good", declarative_md="1."))
    folder = write_files(root / "latin1", {"declarative.md": "1."})
    (folder / "meta.json").write_bytes('{"name": "Caf\xe9"}'.encode("latin-1"))

    assert [(p.label, "UTF-8" in p.reason and "meta.json" in p.reason) for p in store.broken()] == [("latin1", True)]
    assert [s["label"] for s in store.list_summaries()] == ["good"]


# --------------------------------------------------------------------------- writing


def test_new_skill_is_written_as_anton_v10_writes_it_with_its_label_rules(root: Path) -> None:
    store = SkillStore(root, clock=fixed_clock("2026-11-22T04:23:45.068453+00:00", "2026-11-22T04:23:45.070172+00:00"))
    saved = store.save(
        Skill(
            label="CSV_Summary",
            name="CSV Summary",
            description="Summarize a CSV",
            when_to_use="user asks to summarize a csv",
            declarative_md="1. Load\n2. describe()",
        )
    )
    store.increment_recommended("csv_summary")

    assert saved.path == root / "csv-summary" and saved.label == "csv-summary" and saved.format == "skill_md"
    assert [p.name for p in root.iterdir()] == ["csv-summary"]
    assert snapshot(root / "csv-summary") == {"SKILL.md": V10_SKILL_MD.encode(), "stats.json": V10_STATS.encode()}


def test_anton_v10_save_sample_is_reproduced_exactly(root: Path) -> None:
    """Reference §17.6: anton-agent's own save of `My New_Skill!`."""
    SkillStore(root).save(
        Skill(
            label="My New_Skill!",
            name="My new skill",
            description="Does a thing",
            when_to_use="When asked",
            declarative_md="Step 1.\nStep 2.",
            created_at="2026-11-25T08:45:00+00:00",
        )
    )
    assert (root / "my-new-skill" / "SKILL.md").read_text() == (
        "---\nname: my-new-skill\ndescription: Does a thing. When asked\nmetadata:\n  display_name: My new skill\n"
        "  provenance: manual\n  created_at: '2026-11-25T08:45:00+00:00'\n---\nStep 1.\nStep 2."
    )


def test_new_skill_md_skill_is_byte_identical_to_anton_v10(root: Path) -> None:
    store = SkillStore(root, clock=fixed_clock("2026-11-22T04:23:45.070172+00:00"))
    store.save(
        Skill(
            label="csv-summary",
            name="CSV Summary",
            description="Summarize a CSV",
            when_to_use="user asks to summarize a csv",
            declarative_md="1. Load\n2. describe()",
            created_at="2026-11-22T04:23:45.068453+00:00",
            format="skill_md",
        )
    )
    store.increment_recommended("csv-summary")

    assert snapshot(root / "csv-summary") == {"SKILL.md": V10_SKILL_MD.encode(), "stats.json": V10_STATS.encode()}


def test_save_keeps_counters_and_creates_stats_only_when_absent(root: Path) -> None:
    store = SkillStore(root)
    store.save(Skill(label="plot_sales", name="Plot sales", declarative_md="1. old"))
    for _ in range(3):
        store.increment_recommended("plot_sales")
    store.increment_recommended("plot_sales", stage=2)
    stats_before = (root / "plot-sales" / "stats.json").read_bytes()

    skill = store.load("plot_sales")
    skill.declarative_md = "1. new step"
    resaved = store.save(skill)
    store.save(Skill(label="plot_sales", name="Plot sales again", declarative_md="1. newer"))

    assert (root / "plot-sales" / "stats.json").read_bytes() == stats_before
    reloaded = store.load("plot_sales")
    assert reloaded.declarative_md == "1. newer"
    assert reloaded.name == "Plot sales again"
    assert reloaded.stats.total_recalls == 4
    assert reloaded.stats.stage(1).recommended == 3
    assert reloaded.stats.stage(2).recommended == 1
    assert resaved.stats.total_recalls == 4


def test_stage_flags_follow_the_files_that_exist(root: Path) -> None:
    store = SkillStore(root)
    store.save(
        Skill(
            label="scrape",
            name="Scrape",
            declarative_md="1. fetch",
            reference_files={"notes.md": "## fetch page\n"},
            code_files={"__init__.py": "", "fetch.py": "def fetch(): ...\n"},
            requirements="httpx\n",
        )
    )
    folder = root / "scrape"
    assert (folder / "scripts" / "fetch.py").read_text() == "def fetch(): ...\n"
    assert (folder / "requirements.txt").read_text() == "httpx\n"

    skill = store.load("scrape")
    assert skill.stages_present == (1, 2, 3)
    assert skill.reference_files == {"notes.md": "## fetch page\n"}
    assert skill.code_files == {"__init__.py": "", "fetch.py": "def fetch(): ...\n"}
    assert skill.requirements == "httpx\n"

    store.save(Skill(label="plain", name="Plain", declarative_md="1. go"))
    assert store.load("plain").stages_present == (1,)
    assert not (root / "plain" / "scripts").exists()


def test_code_file_names_cannot_leave_the_skill_folder(root: Path, tmp_path: Path) -> None:
    store = SkillStore(root)
    for bad in ("../escape.py", "/tmp/escape.py", "a/../../escape.py", ""):
        with pytest.raises(ValueError):
            store.save(Skill(label="x", declarative_md="1.", code_files={bad: "boom"}))
    assert not (tmp_path / "escape.py").exists()
    assert not (root / "x").exists()


def test_skill_md_round_trip_keeps_unknown_keys_and_body(root: Path) -> None:
    original = textwrap.dedent(
        """\
        ---
        name: deploy
        description: Ship the staging branch to production
        license: Apache-2.0
        allowed-tools: [bash, read]
        disable-model-invocation: false
        released: 2024-05-01
        metadata:
          owner: ops-team
          applies_to: {os: linux}
        ---

        # How to deploy

        1. Run the tests.
        2. Run `bin/deploy`.
        """
    )
    folder = write_files(root / "deploy", {"SKILL.md": original})
    write_files(folder / "scripts", {"deploy.sh": "#!/bin/sh\necho deploy\n"})
    store = SkillStore(root)

    skill = store.load("deploy")
    assert skill.name == "deploy" and skill.format == "skill_md"
    assert skill.code_files == {"deploy.sh": "#!/bin/sh\necho deploy\n"}
    assert skill.stages_present == (1, 3)

    store.save(skill)
    assert (folder / "SKILL.md").read_text() == original  # nothing changed → file untouched

    skill.declarative_md = skill.declarative_md.replace("Run the tests.", "Run the full test suite.")
    skill.name = "Deploy to production"
    store.save(skill)

    text = (folder / "SKILL.md").read_text()
    assert text.startswith("---\nname: deploy\n")
    again = store.load("deploy")
    assert again.declarative_md == "\n# How to deploy\n\n1. Run the full test suite.\n2. Run `bin/deploy`.\n"
    assert again.name == "Deploy to production"
    assert again.description == "Ship the staging branch to production"
    front = again.extra
    assert front["license"] == "Apache-2.0"
    assert front["allowed-tools"] == ["bash", "read"]
    assert front["disable-model-invocation"] is False
    assert front["released"] == "2024-05-01"
    assert front["metadata"]["owner"] == "ops-team"
    assert front["metadata"]["applies_to"] == {"os": "linux"}
    assert front["metadata"]["display_name"] == "Deploy to production"
    assert not (folder / "meta.json").exists() and not (folder / "declarative.md").exists()
    assert (folder / "scripts" / "deploy.sh").read_text() == "#!/bin/sh\necho deploy\n"


def test_save_refuses_an_older_layout_skill_and_leaves_it_byte_identical(root: Path) -> None:
    write_v5_sample(root)
    store = SkillStore(root)
    before = snapshot(root / "csv_summary")
    skill = store.load("csv_summary")
    skill.declarative_md = "1. other"

    with pytest.raises(LegacyLayoutError, match="convert"):
        store.save(skill)
    with pytest.raises(LegacyLayoutError):
        store.save(Skill(label="csv-summary", name="CSV", declarative_md="1. other"))
    assert snapshot(root / "csv_summary") == before
    assert sorted(p.name for p in root.iterdir()) == ["csv_summary"]


def test_delete_removes_only_the_skill(root: Path, tmp_path: Path) -> None:
    store = SkillStore(root)
    store.save(Skill(label="one", declarative_md="1."))
    store.save(Skill(label="two", declarative_md="2."))
    elsewhere = write_files(tmp_path / "shared-skill", {"SKILL.md": "---\nname: linked\ndescription: d\n---\nbody"})
    (root / "linked").symlink_to(elsewhere)

    assert store.delete("one") is True
    assert store.delete("linked") is True
    assert store.delete("one") is False
    assert [s.label for s in store.list_all()] == ["two"]
    assert (elsewhere / "SKILL.md").exists()


# --------------------------------------------------------------------------- counters


def test_increment_counts_and_rejects_bad_input(root: Path) -> None:
    store = SkillStore(root)
    store.save(Skill(label="csv_summary", declarative_md="1."))
    (root / "csv-summary" / "stats.json").unlink()

    stats = store.increment_recommended("csv-summary", stage=3)
    assert stats.total_recalls == 1 and stats.stage(3).recommended == 1 and stats.stage(3).last_used
    assert json.loads((root / "csv-summary" / "stats.json").read_text())["stage_3"]["recommended"] == 1
    with pytest.raises(SkillNotFoundError):
        store.increment_recommended("missing")
    with pytest.raises(ValueError):
        store.increment_recommended("csv_summary", stage=4)


INCREMENT_SCRIPT = """
import sys, time
from pathlib import Path
from anton_tui.memory.skills.store import SkillStore
root, go, count = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
store = SkillStore(root)
print("ready", flush=True)
while not go.exists():
    time.sleep(0.001)
for _ in range(count):
    store.increment_recommended("csv_summary")
"""


def test_concurrent_increments_from_eight_processes_are_all_counted(root: Path, tmp_path: Path) -> None:
    store = SkillStore(root)
    store.save(Skill(label="csv_summary", declarative_md="1."))
    go = tmp_path / "go"
    per_process = 25
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", INCREMENT_SCRIPT, str(root), str(go), str(per_process)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(8)
    ]
    for proc in procs:
        assert proc.stdout.readline().strip() == "ready"
    go.touch()
    for proc in procs:
        assert proc.wait(timeout=60) == 0

    stats = store.load("csv_summary").stats
    assert stats.total_recalls == 8 * per_process
    assert stats.stage(1).recommended == 8 * per_process
    assert not [p for p in (root / "csv-summary").iterdir() if p.name.endswith(".tmp")]


# --------------------------------------------------------------------------- labels


def test_closest_match_recovers_typos_across_spellings(root: Path) -> None:
    store = SkillStore(root)
    store.save(Skill(label="csv_summary", declarative_md="1."))
    write_files(root / "plot-sales", {"SKILL.md": "---\nname: plot-sales\ndescription: Plot\n---\n1."})

    assert store.closest_match("csv_sumary") == "csv-summary"
    assert store.closest_match("csv-sumary") == "csv-summary"
    assert store.closest_match("csv-summary") == "csv-summary"
    assert store.closest_match("plot_sale") == "plot-sales"
    assert store.closest_match("CSV Summary") == "csv-summary"
    assert store.closest_match("kubernetes_rollout") is None
    assert SkillStore(root / "empty").closest_match("csv_sumary") is None


def test_slugify_and_unique_labels(root: Path) -> None:
    assert slugify("  CSV Summary!  ") == "csv-summary"
    assert slugify("fetch_prices -- v2") == "fetch-prices-v2"
    assert slugify("Überblick") == "berblick"
    assert slugify("!!!") == "skill"

    store = SkillStore(root)
    assert make_unique_label("CSV summary", store) == "csv-summary"
    store.save(Skill(label="csv_summary", declarative_md="1."))
    assert make_unique_label("CSV summary", store) == "csv-summary-2"
    store.save(Skill(label="csv-summary-2", declarative_md="1."))
    assert make_unique_label("csv-summary", store) == "csv-summary-3"
    write_files(root / "plot-sales", {"SKILL.md": "---\nname: plot-sales\ndescription: d\n---\n1."})
    assert make_unique_label("plot sales", store) == "plot-sales-2"


BAD_LABELS = ["", "   ", "..", "../outside", "a/b", "a\\b", "/etc/passwd", ".hidden", "nul\x00byte", "C:evil"]


@pytest.mark.parametrize("bad", BAD_LABELS)
def test_labels_cannot_escape_the_skills_folder(root: Path, tmp_path: Path, bad: str) -> None:
    store = SkillStore(root)
    store.save(Skill(label="keep", declarative_md="1."))
    before = sorted(p.name for p in tmp_path.iterdir())
    calls = [
        lambda: store.load(bad),
        lambda: store.save(Skill(label=bad, declarative_md="1.")),
        lambda: store.delete(bad),
        lambda: store.increment_recommended(bad),
        lambda: store.closest_match(bad),
        lambda: store.problem(bad),
        lambda: store.exists(bad),
    ]
    for call in calls:
        with pytest.raises(ValueError, match="label"):
            call()
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert sorted(p.name for p in root.iterdir()) == ["keep"]


# --------------------------------------------------------------------------- broken skills


@pytest.mark.parametrize(
    ("bad_file", "content", "reason_word"),
    [
        ("meta.json", '{"label": "bad", "name": ', "meta.json"),
        ("meta.json", '["not", "an", "object"]', "meta.json"),
        ("meta.json", '{"name": 42}', "name"),
        ("stats.json", '{"total_recalls": "many"}', "stats.json"),
        ("stats.json", "{\n  \"total_recalls\": 1,\n", "stats.json"),
    ],
)
def test_malformed_anton_files_show_as_broken_and_stay_untouched(
    root: Path, bad_file: str, content: str, reason_word: str
) -> None:
    store = SkillStore(root)
    write_v5_sample(root, "good")
    write_v5_sample(root, "bad")
    (root / "bad" / bad_file).write_text(content)
    before = snapshot(root / "bad")

    problems = store.broken()
    assert [(p.label, p.path) for p in problems] == [("bad", root / "bad")]
    assert reason_word in problems[0].reason
    assert [s["label"] for s in store.list_summaries()] == ["good"]
    assert [s.label for s in store.list_all()] == ["good"]
    assert store.load("bad") is None
    assert store.problem("bad").reason == problems[0].reason
    assert store.problem("good") is None

    with pytest.raises((BrokenSkillError, LegacyLayoutError)):
        if bad_file == "stats.json":
            store.increment_recommended("bad")
        else:
            store.save(Skill(label="bad", name="Bad", declarative_md="1. replaced"))
    assert snapshot(root / "bad") == before


@pytest.mark.parametrize(
    ("content", "reason_word"),
    [
        ("---\nname: [unclosed\ndescription: x\n---\nbody", "YAML"),
        ("no front matter here\n", "front matter"),
        ("---\nname: x\ndescription: y\nbody without end", "closing"),
        ("---\n- a list\n---\nbody", "mapping"),
        ("---\nname: x\nmetadata: just text\n---\nbody", "metadata"),
    ],
)
def test_malformed_skill_md_shows_as_broken_and_stays_untouched(root: Path, content: str, reason_word: str) -> None:
    write_v10_sample(root)
    folder = write_files(root / "bad-skill", {"SKILL.md": content})
    store = SkillStore(root)

    problems = store.broken()
    assert [p.label for p in problems] == ["bad-skill"]
    assert reason_word in problems[0].reason and "SKILL.md" in problems[0].reason
    assert [s["label"] for s in store.list_summaries()] == ["csv-summary"]
    with pytest.raises(BrokenSkillError):
        store.save(Skill(label="bad-skill", declarative_md="new", format="skill_md"))
    assert (folder / "SKILL.md").read_text() == content
    assert not (folder / "stats.json").exists()


def test_procedure_file_missing_is_reported(root: Path) -> None:
    store = SkillStore(root)
    write_v5_sample(root, "half")
    (root / "half" / "declarative.md").unlink()
    write_files(root / "orphan", {"declarative.md": "1. steps without meta"})

    reasons = {p.label: p.reason for p in store.broken()}
    assert "declarative.md" in reasons["half"]
    assert "meta.json" in reasons["orphan"]
    assert store.list_summaries() == []
    with pytest.raises(BrokenSkillError):
        store.save(Skill(label="orphan", declarative_md="overwrite"))
    assert (root / "orphan" / "declarative.md").read_text() == "1. steps without meta"


# --------------------------------------------------------------------------- listing


def test_list_summaries_never_opens_the_procedure(root: Path) -> None:
    store = SkillStore(root)
    write_v5_sample(root)
    write_v10_sample(root)
    opened: list[str] = []
    watching = [True]

    def hook(event: str, args: tuple) -> None:
        if watching[0] and event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
            opened.append(os.fsdecode(args[0]))

    sys.addaudithook(hook)
    try:
        summaries = store.list_summaries()
    finally:
        watching[0] = False

    assert [s["label"] for s in summaries] == ["csv-summary", "csv_summary"]
    assert any(path.endswith("meta.json") for path in opened)  # the hook does see file reads
    assert not any(path.endswith("declarative.md") for path in opened)


def test_list_summaries_sees_edits_made_outside_the_app(root: Path) -> None:
    store = SkillStore(root)
    write_v5_sample(root)
    assert store.list_summaries()[0]["when_to_use"] == "user asks to summarize a csv"

    meta_path = root / "csv_summary" / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["when_to_use"] = "a freshly edited retrieval cue"
    with open(meta_path, "w") as handle:  # in place, as an editor might
        handle.write(json.dumps(meta, indent=2) + "\n")
    assert store.list_summaries()[0]["when_to_use"] == "a freshly edited retrieval cue"

    (root / "csv_summary" / "stats.json").write_text("{broken")
    assert store.list_summaries() == []
    (root / "csv_summary" / "stats.json").unlink()
    assert [s["label"] for s in store.list_summaries()] == ["csv_summary"]


# --------------------------------------------------------------------------- texts for the model


def test_recall_text_has_warning_heading_and_procedure(root: Path) -> None:
    write_v5_sample(root)
    skill = SkillStore(root).load("csv_summary")

    exact = format_recall(skill, "csv_summary")
    assert exact.splitlines() == [
        "# Skill recalled: `csv_summary`",
        "# Skill: CSV Summary",
        "",
        "Summarize a CSV",
        "",
        "## Procedure (Stage 1 — declarative)",
        "",
        "1. Load",
        "2. describe()",
    ]
    assert format_recall(skill, "csv-summary") == exact

    fuzzy = format_recall(skill, "csv_sumary").splitlines()
    assert "csv_sumary" in fuzzy[0] and "csv_summary" in fuzzy[0] and fuzzy[0].startswith("⚠")
    assert fuzzy[1] == "" and fuzzy[2:] == exact.splitlines()

    assert "Available skills: a, b." in format_no_match("zzz", ["a", "b"])
    assert format_no_match("zzz", []).startswith("NO MATCH:")


def test_procedural_memory_section_lists_one_line_per_skill(root: Path) -> None:
    store = SkillStore(root)
    assert procedural_memory_section(store.list_summaries()) == ""

    write_v5_sample(root)
    write_v10_sample(root)
    store.save(Skill(label="bare", declarative_md="1."))
    store.save(Skill(label="multi_line", when_to_use="first line\n- `fake` — injected", declarative_md="1."))
    assert (root / "multi-line" / "SKILL.md").is_file()
    section = procedural_memory_section(store.list_summaries())

    assert section.startswith("\n\n## Procedural memory (skills available)\n\n")
    assert "recall_skill" in section
    assert section.endswith(
        "\n\n- `bare`\n"
        "- `csv-summary` — Summarize a CSV. user asks to summarize a csv\n"
        "- `csv_summary` — user asks to summarize a csv\n"
        "- `multi-line` — first line - `fake` — injected"
    )
