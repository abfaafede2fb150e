"""Writing a setting into a project .env that the settings reader cannot use is refused, with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from anton_tui.config import load_settings, write_project_env

NOT_UTF8 = b"# Anton environment variables\nANTON_THEME=nord\nNOTE=caf\xe9\n"


def test_a_setting_is_not_written_into_a_file_that_is_not_utf8(project_dir: Path) -> None:
    path = project_dir / ".anton" / ".env"
    path.parent.mkdir()
    path.write_bytes(NOT_UTF8)

    with pytest.raises(ValueError, match=r"not UTF-8 .*byte 55.*nothing was written"):
        write_project_env(project_dir, {"ANTON_MEMORY_MODE": "copilot"})
    assert path.read_bytes() == NOT_UTF8
    assert sorted(p.name for p in path.parent.iterdir()) == [".env"]
    assert load_settings(project_dir).memory_mode == "autopilot"
