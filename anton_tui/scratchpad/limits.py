"""How long a cell may run, how quiet it may stay, how much memory its process may take, how many processes a pad
may run, and whether it sees the app's provider keys.

`ScratchpadLimits` holds the knobs (filled from the `cell_*` and `scratchpad_*` settings); `CellBudget` is what one
cell gets after its own time estimate is taken into account; `pad_environment` is what a pad process starts with.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# The variables the app's model providers read their keys from. Cells reach the model through get_llm() without
# them, so pads start without them unless the user asks (setting scratchpad_pass_api_keys).
PROVIDER_KEY = re.compile(r"(ANTON_\w*_API_KEY|ANTHROPIC_API_KEY|ANTHROPIC_AUTH_TOKEN|OPENAI_API_KEY)\Z")


def pad_environment(environ: Mapping[str, str], *, pass_api_keys: bool) -> dict[str, str]:
    """A copy of `environ` for a pad process: without the provider key variables unless `pass_api_keys`."""
    if pass_api_keys:
        return dict(environ)
    return {name: value for name, value in environ.items() if not PROVIDER_KEY.match(name)}


@dataclass(frozen=True, slots=True)
class CellBudget:
    total: float
    inactivity: float


@dataclass(frozen=True, slots=True)
class ScratchpadLimits:
    timeout_default: float = 120.0
    inactivity_timeout: float = 30.0
    inactivity_after_progress: float = 60.0
    total_max: float = 3600.0
    memory_limit_mb: int | None = 2048
    keep_recent: int = 5
    heartbeat_interval: float = 10.0
    install_timeout: float = 120.0
    start_timeout: float = 30.0
    output_keep_chars: int = 1_000_000
    pass_api_keys: bool = False
    # Processes one pad may run at once, its own included; past it the pad's supervisor ends them all. Counted by
    # the supervisor, so it holds for every user, root included.
    max_processes: int = 256

    @classmethod
    def from_settings(cls, settings: Any, **overrides: Any) -> ScratchpadLimits:
        """Read the `cell_*` fields of a settings object (any object with those attributes); missing ones keep
        their defaults. A memory limit of 0 or less means no limit."""
        defaults = cls()
        values: dict[str, Any] = {}
        for field_name, setting in (
            ("timeout_default", "cell_timeout_default"),
            ("inactivity_timeout", "cell_inactivity_timeout"),
            ("inactivity_after_progress", "cell_inactivity_after_progress"),
            ("total_max", "cell_total_max"),
            ("memory_limit_mb", "cell_memory_limit_mb"),
            ("keep_recent", "cell_keep_recent"),
            ("heartbeat_interval", "cell_heartbeat_interval"),
            ("heartbeat_interval", "scratchpad_heartbeat_interval"),
            ("install_timeout", "cell_install_timeout"),
            ("pass_api_keys", "scratchpad_pass_api_keys"),
        ):
            if field_name in values:
                continue
            value = getattr(settings, setting, None)
            if value is not None:
                values[field_name] = value
        memory = values.get("memory_limit_mb", defaults.memory_limit_mb)
        values["memory_limit_mb"] = int(memory) if memory and int(memory) > 0 else None
        values.update(overrides)
        return cls(**values)

    def budget(self, estimated_seconds: float | None = None) -> CellBudget:
        """Time allowed for one cell. Without an estimate: the defaults. With an estimate e: total
        max(2e, e + inactivity default) and inactivity max(e/2, inactivity default), both capped by `total_max`."""
        if not estimated_seconds or estimated_seconds <= 0:
            total = min(self.timeout_default, self.total_max)
            return CellBudget(total=total, inactivity=min(self.inactivity_timeout, total))
        e = float(estimated_seconds)
        total = min(max(2 * e, e + self.inactivity_timeout), self.total_max)
        inactivity = min(max(0.5 * e, self.inactivity_timeout), total)
        return CellBudget(total=total, inactivity=inactivity)
