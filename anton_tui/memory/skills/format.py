"""The files inside one skill folder: parsing and rendering meta.json, stats.json and SKILL.md, their atomic
writes, and a cached read of the few fields the prompt's skill list needs.

Rendered text is byte-for-byte what anton-agent writes for the same skill, so both programs can share
`~/.anton/skills/`. `store.py` decides which files to touch.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from anton_tui.memory.files.locking import atomic_write
from anton_tui.memory.skills.plain_front_matter import plain_front_matter, written_fields

FRONT_MATTER_LIMIT = 64 * 1024
STAGES = (1, 2, 3)
META_KEYS = (
    "label",
    "name",
    "description",
    "when_to_use",
    "created_at",
    "provenance",
    "stage_1_present",
    "stage_2_present",
    "stage_3_present",
)

_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:")
_CONTROL = "a line break or another control character"
SkillFormat = Literal["anton", "skill_md"]
SummaryFields = tuple[str, str, str, SkillFormat, bool, bool]
"""What a listing shows of one skill: (name, description, when_to_use, format, model_invocable, user_invocable).
Cached entries are plain tuples of plain values, which the garbage collector stops following (a named tuple it
follows for good), and are made without a Python-level constructor: a listing of 10,000 skills keeps 10,000."""
STAGE_FOLDERS: dict[str, tuple[str, str]] = {"anton": ("chunks.md", "code"), "skill_md": ("references", "scripts")}
MAX_TEXT_FILE = 1024 * 1024


class SkillFormatError(ValueError):
    """A skill file exists but cannot be understood; the message names the file and what is wrong."""


# --------------------------------------------------------------------------- names


def validate_label(label: object) -> str:
    """Return `label` unchanged if it names a folder directly inside the skills folder, else raise ValueError."""
    if not isinstance(label, str):
        raise ValueError(f"skill label must be text, got {type(label).__name__}")
    if not label.strip():
        raise ValueError("skill label is empty")
    if "\x00" in label:
        raise ValueError("skill label contains a NUL character")
    if not label.isprintable():
        raise ValueError(f"skill label {label!r} contains {_CONTROL}")
    if "/" in label or "\\" in label:
        raise ValueError(f"skill label {label!r} contains a path separator")
    if label.startswith("."):
        raise ValueError(f"skill label {label!r} starts with a dot")
    if _WINDOWS_DRIVE.match(label):
        raise ValueError(f"skill label {label!r} starts with a drive letter")
    if len(label.encode("utf-8", "surrogateescape")) > 255:
        raise ValueError("skill label is longer than 255 bytes")
    return label


NAME_MAX = 64
DESCRIPTION_MAX = 1024
SKILL_MD_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")


def normalize_name(value: str) -> str:
    """The label anton-agent gives a skill it saves: lower case, every run of other characters one hyphen, at most
    64 characters (`My New_Skill!` → `my-new-skill`); "" when nothing is left."""
    slug = re.sub(r"[^a-z0-9]+", "-", value.strip().lower())
    slug = re.sub(r"-{2,}", "-", slug).strip("-")
    return slug[:NAME_MAX].rstrip("-")


def is_standard_name(label: str) -> bool:
    """Whether `label` follows the Agent Skills name rule (lower case, digits, single inner hyphens, ≤64)."""
    return len(label) <= NAME_MAX and "--" not in label and SKILL_MD_NAME.match(label) is not None


def validate_name(name: object, what: str = "skill name") -> str:
    """Return `name` unchanged if it is one line of printable text ("" is fine), else raise ValueError: a name is
    printed into prompts and headings, where a line break could start a rule or a section of its own."""
    if not isinstance(name, str):
        raise ValueError(f"{what} must be text, got {type(name).__name__}")
    if not name.isprintable():
        raise ValueError(f"{what} {name!r} contains {_CONTROL}")
    return name


def _checked_name(value: Any, filename: str, key: str) -> None:
    if isinstance(value, str) and not value.isprintable():
        raise SkillFormatError(f"{filename}: {key!r} contains {_CONTROL}")


def validate_relative_file(rel: object) -> PurePosixPath:
    """Check a file name inside a skill's code/, scripts/ or references/ folder; it may not leave that folder."""
    if not isinstance(rel, str) or not rel or "\x00" in rel or "\\" in rel:
        raise ValueError(f"invalid skill file name {rel!r}")
    path = PurePosixPath(rel)
    if path.is_absolute() or any(part in ("", ".", "..") for part in path.parts):
        raise ValueError(f"skill file name {rel!r} would leave its folder")
    return path


# --------------------------------------------------------------------------- JSON files


def render_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2) + "\n"


def _load_json_object(text: str, filename: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}"
        raise SkillFormatError(f"{filename}: invalid JSON at {where}: {exc.msg}") from None
    if not isinstance(data, dict):
        raise SkillFormatError(f"{filename}: expected a JSON object, found {type(data).__name__}")
    return data


def _text_field(data: dict[str, Any], key: str, filename: str, default: str = "") -> str:
    value = data.get(key, default)
    if value is None:
        return default
    if not isinstance(value, str):
        raise SkillFormatError(f"{filename}: {key!r} must be a string, found {type(value).__name__}")
    return value


@dataclass
class MetaFields:
    """What meta.json says about a skill; keys anton-agent does not define are kept in `extra`."""

    name: str
    description: str
    when_to_use: str
    created_at: str
    provenance: str
    extra: dict[str, Any] = field(default_factory=dict)


_META_TEXT = ("name", "description", "when_to_use", "created_at", "provenance")
"""The meta.json keys that must hold text (or null) for the file to be read."""


def parse_meta(text: str, folder_name: str) -> MetaFields:
    data = _load_json_object(text, "meta.json")
    fields = {key: _text_field(data, key, "meta.json") for key in ("description", "when_to_use", "created_at")}
    _checked_name(_text_field(data, "name", "meta.json"), "meta.json", "name")
    return MetaFields(
        name=_text_field(data, "name", "meta.json") or folder_name,
        provenance=_text_field(data, "provenance", "meta.json", "manual"),
        extra={key: value for key, value in data.items() if key not in META_KEYS},
        **fields,
    )


_PLAIN_JSON_TEXT = r'"([\x20\x21\x23-\x5b\x5d-\x7e]*)"'
"""A JSON string of printable ASCII with no escape in it: its text is what is between the quotes."""
_WRITTEN_META = re.compile(
    rf'\{{\n  "label": {_PLAIN_JSON_TEXT},\n  "name": {_PLAIN_JSON_TEXT},\n  "description": {_PLAIN_JSON_TEXT},\n'
    rf'  "when_to_use": {_PLAIN_JSON_TEXT},\n  "created_at": {_PLAIN_JSON_TEXT},\n  "provenance": {_PLAIN_JSON_TEXT}'
    + "".join(rf',\n  "stage_{stage}_present": (?:true|false)' for stage in STAGES)
    + r"\n\}\n?"
)
"""A meta.json as `render_meta` writes one, with no key of its own added."""


def meta_summary(text: str, folder_name: str) -> tuple[str, str, str]:
    """The name, description and when_to_use a listing shows of a meta.json, accepted or refused exactly as
    `parse_meta` would (its error for a file it refuses), without building the rest of what it reads. One as
    `render_meta` writes it, of plain text, is read with one match."""
    written = _WRITTEN_META.fullmatch(text)
    if written is not None:
        name, description, when_to_use = written.group(2, 3, 4)
        return name or folder_name, description, when_to_use
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = None
    if type(data) is dict:
        values = [data.get(key) for key in _META_TEXT]
        if all(value is None or type(value) is str for value in values):
            name, description, when_to_use = values[0], values[1], values[2]
            if name is None or name.isprintable():
                return name or folder_name, description or "", when_to_use or ""
    meta = parse_meta(text, folder_name)  # anything out of the ordinary: its reading, or its error
    return meta.name, meta.description, meta.when_to_use


def render_meta(
    *,
    label: str,
    name: str,
    description: str,
    when_to_use: str,
    created_at: str,
    provenance: str,
    stages_present: tuple[int, ...],
    extra: dict[str, Any] | None = None,
) -> str:
    data: dict[str, Any] = {
        "label": label,
        "name": name,
        "description": description,
        "when_to_use": when_to_use,
        "created_at": created_at,
        "provenance": provenance,
    }
    for stage in STAGES:
        data[f"stage_{stage}_present"] = stage in stages_present
    for key, value in (extra or {}).items():
        data.setdefault(key, value)
    return render_json(data)


# --------------------------------------------------------------------------- stats.json


@dataclass
class StageStats:
    recommended: int = 0
    used: int = 0
    last_used: str = ""
    confidence: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "recommended": self.recommended,
            "used": self.used,
            "last_used": self.last_used,
            "confidence": self.confidence,
        }


@dataclass
class SkillStats:
    """Usage counters of one skill: how often it was recalled, and per stage how often recommended and used."""

    total_recalls: int = 0
    stages: dict[int, StageStats] = field(default_factory=lambda: {stage: StageStats() for stage in STAGES})

    def stage(self, number: int) -> StageStats:
        return self.stages[number]

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"total_recalls": self.total_recalls}
        for stage in STAGES:
            data[f"stage_{stage}"] = self.stages[stage].to_json()
        return data


def _int_field(data: dict[str, Any], key: str, where: str) -> int:
    value = data.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SkillFormatError(f"stats.json: {where}{key!r} must be a whole number ≥ 0, found {value!r}")
    return value


def stats_from_json(data: dict[str, Any]) -> SkillStats:
    stats = SkillStats(total_recalls=_int_field(data, "total_recalls", ""))
    for stage in STAGES:
        key = f"stage_{stage}"
        raw = data.get(key, {})
        if not isinstance(raw, dict):
            raise SkillFormatError(f"stats.json: {key!r} must be an object, found {type(raw).__name__}")
        confidence = raw.get("confidence", 0.0)
        if isinstance(confidence, bool) or not isinstance(confidence, (int, float)):
            raise SkillFormatError(f"stats.json: {key}.confidence must be a number, found {confidence!r}")
        stats.stages[stage] = StageStats(
            recommended=_int_field(raw, "recommended", f"{key}."),
            used=_int_field(raw, "used", f"{key}."),
            last_used=_text_field(raw, "last_used", f"stats.json: {key}"),
            confidence=float(confidence),
        )
    return stats


def parse_stats(text: str) -> tuple[SkillStats, dict[str, Any]]:
    """Return the counters and the raw JSON object (so a rewrite keeps keys this code does not know)."""
    data = _load_json_object(text, "stats.json")
    return stats_from_json(data), data


def check_stats(text: str) -> None:
    """Raise SkillFormatError exactly where `parse_stats` would, without building the counters (a listing shows none
    of them, only whether the file reads)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = None
    if type(data) is dict and _is_count(data.get("total_recalls", 0)):
        for stage in STAGES:
            raw = data.get(f"stage_{stage}", {})
            if type(raw) is not dict or not (_is_count(raw.get("recommended", 0)) and _is_count(raw.get("used", 0))):
                break
            confidence, last_used = raw.get("confidence", 0.0), raw.get("last_used")
            if type(confidence) not in (int, float) or (last_used is not None and type(last_used) is not str):
                break
            float(confidence)  # (as `stats_from_json` converts it)
        else:
            return
    parse_stats(text)  # anything out of the ordinary: its reading, or its error


_JSON_COUNT = rb"(?:0|[1-9][0-9]*)"
_JSON_NUMBER = rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
_WRITTEN_STATS = re.compile(
    rb'\{\n  "total_recalls": ' + _JSON_COUNT + rb",\n"
    + rb",\n".join(
        rb'  "stage_%d": \{\n    "recommended": ' % stage + _JSON_COUNT + rb',\n    "used": ' + _JSON_COUNT
        + rb',\n    "last_used": (?:"[\x20\x21\x23-\x5b\x5d-\x7e]*"|null),\n    "confidence": ' + _JSON_NUMBER
        + rb"\n  \}"
        for stage in STAGES
    )
    + rb"\n\}\n?"
)  # fmt: skip


def stats_written_shape(data: bytes) -> bool:
    """Whether `data` is a stats.json exactly as this app writes one (`render_json` of the counters: every stage,
    counts that are whole numbers of zero or more, a plain ASCII date or null): one match instead of `check_stats`'s
    parse. Such a file always passes `check_stats`; anything else (another order, other keys, escapes, more
    whitespace) is for `check_stats` to judge."""
    return _WRITTEN_STATS.fullmatch(data) is not None


def _is_count(value: object) -> bool:
    return type(value) is int and value >= 0


def bump_recommended(data: dict[str, Any], stage: int, now_iso: str) -> dict[str, Any]:
    """Apply one recall to a raw stats object in place (total and the stage's counter, last_used=now)."""
    data["total_recalls"] = data.get("total_recalls", 0) + 1
    stage_data = data.setdefault(f"stage_{stage}", StageStats().to_json())
    stage_data["recommended"] = stage_data.get("recommended", 0) + 1
    stage_data["last_used"] = now_iso
    return data


# --------------------------------------------------------------------------- SKILL.md


@cache
def _yaml_front_matter(yaml_text: str) -> Any:
    import yaml

    try:
        return yaml.load(yaml_text, Loader=_front_matter_loader())
    except yaml.YAMLError as exc:
        where = ""
        mark = getattr(exc, "problem_mark", None)
        if mark is not None:
            where = f" at line {mark.line + 2}"
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SkillFormatError(f"SKILL.md: front matter is not valid YAML{where}: {problem}") from None


@cache
def _front_matter_loader() -> type:
    """A safe YAML loader that keeps dates as text, so a round trip does not reformat them. (PyYAML is imported
    with the first SKILL.md, not with the app.)"""
    import yaml

    class FrontMatterLoader(yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader):  # type: ignore[misc]
        pass

    FrontMatterLoader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    return FrontMatterLoader


_DELIMITER = re.compile(r"^---[ \t]*\r?$", re.MULTILINE)


def split_skill_md(text: str) -> tuple[str, str]:
    """Split SKILL.md into (front matter YAML, body). Raises SkillFormatError when there is no front matter."""
    text = text.removeprefix("\ufeff")
    first, newline, rest = text.partition("\n")
    if not _DELIMITER.match(first) or not newline:
        raise SkillFormatError("SKILL.md: does not start with a '---' front matter block")
    closing = _DELIMITER.search(rest)
    if closing is None:
        raise SkillFormatError("SKILL.md: front matter has no closing '---' line")
    if closing.start() > FRONT_MATTER_LIMIT:
        raise SkillFormatError(f"SKILL.md: front matter is larger than {FRONT_MATTER_LIMIT // 1024} KiB")
    return rest[: closing.start()], rest[closing.end() + 1 :]


def read_front_matter(path) -> str:
    """Read only the front matter of a SKILL.md file (the body is not needed for listings)."""
    return read_front_matter_and_stat(path)[0]


_CHUNK = 8192  # what a text file object decodes at once: a byte that is not UTF-8 in the first one is reported


def read_front_matter_and_stat(path: str | Path) -> tuple[str, os.stat_result]:
    """The front matter of a SKILL.md file, read in pieces until its closing line, and the file's `stat` when opened
    (for knowing later whether what was read still holds)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        st = os.fstat(fd)
        chunk = os.read(fd, _CHUNK)
        try:  # the usual small file: its first piece whole, decoded at once
            text = chunk.decode("utf-8")
        except UnicodeDecodeError:  # a character cut at the piece's end, or not UTF-8: decoded piece by piece
            text = ""
        else:
            front = _front_matter_in(text, whole=not chunk)
            if front is not None:
                return front, st
            chunk = os.read(fd, _CHUNK)
        decoder = codecs.getincrementaldecoder("utf-8")()
        while True:
            try:
                text += decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError as exc:
                raise SkillFormatError(f"SKILL.md: not UTF-8 text (byte {exc.start})") from None
            front = _front_matter_in(text, whole=not chunk)
            if front is not None:
                return front, st
            chunk = os.read(fd, _CHUNK)
    finally:
        os.close(fd)


def _front_matter_in(text: str, *, whole: bool) -> str | None:
    """The front matter of a SKILL.md whose text starts with `text` (`whole`: all of it), or None to read on."""
    first, newline, rest = text.partition("\n")
    if not newline and not whole:
        return None
    if not _DELIMITER.match(first.removeprefix("\ufeff")):
        raise SkillFormatError("SKILL.md: does not start with a '---' front matter block")
    closing = _DELIMITER.search(rest)  # the first closing line; a last line with no line break may still grow
    if closing is not None and (whole or closing.end() < len(rest)):
        read = closing.start()
    else:
        last = rest.rfind("\n") + 1  # where the line still being read (or the end) starts
        read = len(rest) + 1 if whole and last < len(rest) else last
    if read > FRONT_MATTER_LIMIT:
        raise SkillFormatError(f"SKILL.md: front matter is larger than {FRONT_MATTER_LIMIT // 1024} KiB")
    if closing is not None and (whole or closing.end() < len(rest)):
        return rest[: closing.start()]
    if whole:
        raise SkillFormatError("SKILL.md: front matter has no closing '---' line")
    return None


def parse_front_matter(yaml_text: str) -> dict[str, Any]:
    data = plain_front_matter(yaml_text)  # (the usual plain kind, read without PyYAML; None for anything else)
    if data is None:
        data = _yaml_front_matter(yaml_text)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise SkillFormatError(f"SKILL.md: front matter must be a mapping, found {type(data).__name__}")
    for key in ("name", "description"):
        value = data.get(key)
        if (value is not None and not isinstance(value, (str, int, float))) or isinstance(value, bool):
            raise SkillFormatError(f"SKILL.md: {key!r} must be text, found {value!r}")
    metadata = data.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise SkillFormatError(f"SKILL.md: 'metadata' must be a mapping, found {type(metadata).__name__}")
    _checked_name(data.get("name"), "SKILL.md", "name")
    _checked_name((metadata or {}).get("display_name"), "SKILL.md", "metadata.display_name")
    return data


@dataclass
class FrontMatterFields:
    name: str
    display_name: str
    description: str
    provenance: str
    created_at: str


def front_matter_fields(data: dict[str, Any], folder_name: str) -> FrontMatterFields:
    metadata = data.get("metadata") or {}

    def text(value: Any) -> str:
        return "" if value is None else str(value)

    name = text(data.get("name")) or folder_name
    return FrontMatterFields(
        name=name,
        display_name=text(metadata.get("display_name")) or name,
        description=text(data.get("description")),
        provenance=text(metadata.get("provenance")),
        created_at=text(metadata.get("created_at")),
    )


def listed_fields(
    front_text: str, folder_name: str, start: int = 0, end: int | None = None
) -> tuple[str, str, bool, bool]:
    """What a listing shows of a SKILL.md skill: (display name, description, whether the model may invoke it, whether
    the user runs it as a slash command), read from its front matter (`front_text[start:end]`). Raises
    SkillFormatError as `parse_front_matter` does. Front matter in the shape skills are written in is read without
    building it."""
    written = written_fields(front_text, start, end)
    if written is not None and written[0].isprintable() and written[2].isprintable():
        name, description, display_name = written
        return display_name or name or folder_name, description, True, False  # (no boolean is of the plain kind)
    data = parse_front_matter(front_text[start:end])
    front = front_matter_fields(data, folder_name)
    invocable = data.get("disable-model-invocation") is not True
    return front.display_name, front.description, invocable, data.get("user-invocable") is True


def summary_fields_of_skill_md(front_text: str, folder_name: str) -> SummaryFields:
    """What a listing shows of a SKILL.md skill whose front matter is `front_text` (see `listed_fields`)."""
    display_name, description, invocable, by_user = listed_fields(front_text, folder_name)
    return display_name, description, "", "skill_md", invocable, by_user


def summary_fields_of_meta(text: str, folder_name: str) -> SummaryFields:
    """What a listing shows of an older skill whose meta.json is `text` (see `meta_summary`)."""
    name, description, when_to_use = meta_summary(text, folder_name)
    return name, description, when_to_use, "anton", True, False


def build_front_matter(
    original: dict[str, Any],
    *,
    label: str,
    display_name: str,
    description: str,
    provenance: str,
    created_at: str,
) -> dict[str, Any]:
    """Front matter to write: `original` with the fields this app manages updated, every other key kept in place."""
    name = str(original.get("name") or label)
    data: dict[str, Any] = {"name": name, "description": description}
    for key, value in original.items():
        data.setdefault(key, value)
    metadata = dict(original.get("metadata") or {})
    wanted = {
        "display_name": display_name if display_name != name or "display_name" in metadata else "",
        "provenance": provenance,
        "created_at": created_at,
    }
    for key, value in wanted.items():
        if value:
            metadata[key] = value
        else:
            metadata.pop(key, None)
    if metadata:
        data["metadata"] = metadata
    else:
        data.pop("metadata", None)
    return data


def new_front_matter(
    *,
    label: str,
    display_name: str,
    description: str,
    when_to_use: str,
    provenance: str,
    created_at: str,
    allowed_tools: str | None = None,
) -> dict[str, Any]:
    """Front matter of a newly saved skill, field for field what anton-agent's `SkillStore.save` writes."""
    if when_to_use:
        description = f"{description}. {when_to_use}" if description else when_to_use
    data: dict[str, Any] = {"name": label, "description": description[:DESCRIPTION_MAX]}
    if allowed_tools is not None:
        data["allowed-tools"] = allowed_tools
    metadata = {
        key: value
        for key, value in (("display_name", display_name), ("provenance", provenance), ("created_at", created_at))
        if value
    }
    if metadata:
        data["metadata"] = metadata
    return data


def render_skill_md(front_matter: dict[str, Any], body: str) -> str:
    import yaml

    dumped = yaml.dump(
        front_matter, Dumper=yaml.SafeDumper, default_flow_style=False, allow_unicode=True, sort_keys=False
    )
    return f"---\n{dumped}---\n{body}"


# --------------------------------------------------------------------------- files and folders


def read_text_and_stat(path: str | Path) -> tuple[str, os.stat_result]:
    """A whole file as text (as `read_text` reads it) and its `stat` when opened."""
    fd = os.open(path, os.O_RDONLY)
    try:
        st = os.fstat(fd)
        data = os.read(fd, st.st_size + 1)
        if len(data) > st.st_size:  # (it grew meanwhile)
            data += b"".join(iter(lambda: os.read(fd, _CHUNK), b""))
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8"), st
    except UnicodeDecodeError as exc:
        raise SkillFormatError(f"{Path(path).name}: not UTF-8 text (byte {exc.start})") from None


def read_text(path: Path) -> str:
    """A whole file as text, line endings untouched; non-UTF-8 content raises SkillFormatError naming the file."""
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read()
    except UnicodeDecodeError as exc:
        raise SkillFormatError(f"{Path(path).name}: not UTF-8 text (byte {exc.start})") from None


def write_text(path: Path, text: str) -> None:
    """Replace `path` atomically with `text`, keeping its permissions; leaves a file already holding `text` alone."""
    data = text.encode("utf-8")
    try:
        if path.read_bytes() == data:
            return
    except FileNotFoundError:
        pass
    atomic_write(path, data)


def read_text_files(folder: Path) -> dict[str, str]:
    """Text files under a stage folder by relative name; binary, hidden and oversized files are skipped (and kept)."""
    files: dict[str, str] = {}
    if not folder.is_dir():
        return files
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if any(part.startswith(".") or part == "__pycache__" for part in rel.parts) or not path.is_file():
            continue
        if path.stat().st_size > MAX_TEXT_FILE:
            continue
        try:
            files[rel.as_posix()] = read_text(path)
        except SkillFormatError:
            continue
    return files


def folder_kind(folder: Path) -> SkillFormat | None:
    """Which kind of skill a folder holds (SKILL.md wins when both are present), or None for a non-skill folder."""
    if (folder / "SKILL.md").is_file():
        return "skill_md"
    if (folder / "meta.json").exists() or (folder / "declarative.md").exists():
        return "anton"
    return None


def stages_on_disk(folder: Path, kind: SkillFormat) -> tuple[int, ...]:
    stage_2, stage_3 = STAGE_FOLDERS[kind]
    present = [1] if kind == "skill_md" or (folder / "declarative.md").is_file() else []
    present += [2] if (folder / stage_2).exists() else []
    present += [3] if (folder / stage_3).is_dir() else []
    return tuple(present)


def link_out(folder: Path | str, root: Path | str) -> str | None:
    """Why `folder` cannot be used without leaving `root` through a symbolic link (the folder itself, or any link
    inside it that points out of `root`), or None. Links that stay inside `root` are fine."""
    real_root = os.path.realpath(root)

    def outside(path: str) -> bool:
        real = os.path.realpath(path)
        return real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep)

    folder = os.fspath(folder)
    if outside(folder):
        return f"the folder is a link to {os.path.realpath(folder)}, outside the skills folder; it is not followed"
    for dirpath, dirnames, filenames in os.walk(folder):  # links to folders are listed, not entered
        for name in [*dirnames, *filenames]:
            path = os.path.join(dirpath, name)
            if os.path.islink(path) and outside(path):
                rel = os.path.relpath(path, folder)
                return f"{rel} is a link to {os.path.realpath(path)}, outside the skills folder; it is not followed"
    return None


def describe_error(exc: Exception) -> str:
    """One line saying what is wrong, naming the file for OS errors."""
    if isinstance(exc, OSError) and exc.strerror:
        return f"{Path(exc.filename).name}: {exc.strerror}" if exc.filename else exc.strerror
    return str(exc)
