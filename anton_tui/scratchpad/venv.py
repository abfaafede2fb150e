"""A scratchpad's own virtual environment, made the first time the pad installs a package, and the install itself.

The environment sees the system site-packages and, through a `.pth` file, this interpreter's site-packages too, so
libraries the app already has need no install; what a pad installs lands in its own folder and nowhere else.
Requirement strings are checked first: names, versions, extras and markers only, never flags, URLs or paths.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import site
import sys
import sysconfig
from pathlib import Path

PTH_NAME = "_parent_venv.pth"
VERSION_MARKER = ".python_version"
MAX_REQUIREMENT_LENGTH = 200

# Used only when the `packaging` library is missing: name[extras] followed by plain version clauses.
_FALLBACK_REQUIREMENT = re.compile(
    r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
    r"(?:\[[A-Za-z0-9._-]+(?:\s*,\s*[A-Za-z0-9._-]+)*\])?"
    r"(?:\s*(?:===|==|!=|~=|>=|<=|>|<)\s*[A-Za-z0-9.*+!_-]+"
    r"(?:\s*,\s*(?:===|==|!=|~=|>=|<=|>|<)\s*[A-Za-z0-9.*+!_-]+)*)?$"
)


class InvalidRequirementError(ValueError):
    pass


class InstallError(RuntimeError):
    pass


def validate_requirements(packages: list[str] | tuple[str, ...]) -> list[str]:
    """Return the requirements in normal form, or raise InvalidRequirementError naming every bad one."""
    if isinstance(packages, str):
        packages = [packages]
    cleaned = [str(p).strip() for p in packages or [] if str(p).strip()]
    if not cleaned:
        raise InvalidRequirementError("No packages given: list requirements such as 'tomli-w' or 'pandas>=2'.")
    good: list[str] = []
    bad: list[str] = []
    for text in cleaned:
        normal = _normal_requirement(text)
        if normal:
            good.append(normal)
        else:
            bad.append(text)
    if bad:
        listed = ", ".join(repr(b) for b in bad)
        raise InvalidRequirementError(
            f"Not a plain package requirement: {listed}. Give names with optional extras and versions "
            f"(e.g. 'requests', 'pandas>=2,<3', 'httpx[http2]'); flags, URLs and file paths are not accepted."
        )
    return good


def _normal_requirement(text: str) -> str | None:
    if len(text) > MAX_REQUIREMENT_LENGTH or text.startswith("-") or any(ord(c) < 32 for c in text):
        return None
    try:
        from packaging.requirements import InvalidRequirement, Requirement
    except ImportError:
        return text if _FALLBACK_REQUIREMENT.match(text) else None
    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        return None
    if requirement.url:
        return None
    return str(requirement)


def venv_python(venv_dir: Path) -> Path:
    if os.name == "nt":
        return venv_dir / "Scripts" / "python.exe"
    return venv_dir / "bin" / "python"


def current_version() -> str:
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def existing_venv_python(venv_dir: Path) -> Path | None:
    """The interpreter of a pad environment made earlier for this Python version, if there is one."""
    python = venv_python(venv_dir)
    try:
        version = (venv_dir / VERSION_MARKER).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return python if version == current_version() and python.exists() else None


def ensure_venv(venv_dir: Path) -> Path:
    """Create the pad's environment unless a usable one exists; return its interpreter. Blocking."""
    python = existing_venv_python(venv_dir)
    if python is None:
        import venv

        builder = venv.EnvBuilder(system_site_packages=True, with_pip=False, symlinks=os.name != "nt", clear=True)
        builder.create(str(venv_dir))
        python = venv_python(venv_dir)
    _write_parent_pth(venv_dir)
    (venv_dir / VERSION_MARKER).write_text(current_version() + "\n", encoding="utf-8")
    return python


def _parent_site_dirs() -> list[str]:
    candidates = list(site.getsitepackages()) + [
        p for p in sys.path if p.rstrip("/\\").endswith(("site-packages", "dist-packages"))
    ]
    seen: list[str] = []
    for path in candidates:
        if os.path.isdir(path) and path not in seen:
            seen.append(path)
    return seen


def _write_parent_pth(venv_dir: Path) -> None:
    purelib = sysconfig.get_path("purelib", vars={"base": str(venv_dir), "platbase": str(venv_dir)})
    target = Path(purelib)
    target.mkdir(parents=True, exist_ok=True)
    # addsitedir (rather than a bare path) also honours the .pth files of the parent's site-packages.
    lines = [f"import site; site.addsitedir({path!r})" for path in _parent_site_dirs()]
    (target / PTH_NAME).write_text("\n".join(lines) + "\n", encoding="utf-8")


async def pip_install(python: Path, requirements: list[str], *, cwd: Path, timeout: float) -> str:
    """Install into the environment of `python`; return pip's output, raise InstallError on failure."""
    process = await asyncio.create_subprocess_exec(
        str(python),
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--no-input",
        *requirements,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        cwd=str(cwd),
        start_new_session=True,
    )
    try:
        output, _ = await asyncio.wait_for(process.communicate(), timeout)
    except (TimeoutError, asyncio.CancelledError) as exc:
        _kill_group(process.pid)
        await process.wait()
        if isinstance(exc, asyncio.CancelledError):
            raise
        raise InstallError(f"pip did not finish installing {', '.join(requirements)} within {timeout:g}s.") from None
    text = output.decode("utf-8", "replace")
    if process.returncode != 0:
        tail = "\n".join(text.strip().splitlines()[-15:])
        raise InstallError(f"pip could not install {', '.join(requirements)} (exit code {process.returncode}):\n{tail}")
    return text


def _kill_group(pid: int) -> None:
    import signal

    with contextlib.suppress(OSError, AttributeError):
        os.killpg(pid, signal.SIGKILL)
