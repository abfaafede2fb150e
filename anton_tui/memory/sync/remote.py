"""Talks to the git remote a memory scope is shared through: which remote, fetching its branch, pushing one commit.

The remote's address is kept in the scope's own history repository (``remote.origin.url`` in its git config, under
``$ANTON_HOME/history``), never in the project tree. The transport is dulwich's (imported lazily): a local folder,
``file://``, ``ssh://`` or ``user@host:path`` (through the system ``ssh``, or ``GIT_SSH_COMMAND`` as git would, so
the user's keys, agent and ``~/.ssh/config`` apply) and ``https://`` (when the server asks, the user's own git credential helpers answer through
``git credential fill``, if git is installed; credentials in the URL work too). A push only moves the
remote's branch from the commit this machine fetched to the new one; if someone pushed in between, the remote keeps
theirs and the push reports `Moved` so the caller fetches and merges again.

A managed memory folder that is a git clone is brought up to date with `pull_clone` (fetch and fast-forward only;
nothing is ever pushed from it). An update whose tree holds a symbolic link or a submodule anywhere is refused before
anything is checked out: the managed tier must never read through a link to a file outside its folder.

These functions do not move this machine's own refs: the caller does, holding the history's writer lock.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

BRANCH = b"refs/heads/main"


class RemoteError(Exception):
    """The remote cannot be reached or refused the transfer; nothing on either side was changed by it."""


class Moved(Exception):
    """The remote's branch moved since it was fetched (another machine pushed first)."""


def _section(name: str) -> tuple[bytes, bytes]:
    return (b"remote", name.encode())


def remotes(repo: Any) -> dict[str, str]:
    """The remotes of a history repository: name → URL."""
    config = repo.get_config()
    found = {}
    for section in config.sections():
        if len(section) == 2 and section[0] == b"remote":
            try:
                found[section[1].decode()] = config.get(section, b"url").decode()
            except KeyError:
                continue
    return found


def set_remote(repo: Any, url: str, name: str = "origin") -> None:
    config = repo.get_config()
    config.set(_section(name), b"url", url.encode())
    config.set(_section(name), b"fetch", f"+refs/heads/*:refs/remotes/{name}/*".encode())
    config.write_to_path()


def remove_remote(repo: Any, name: str = "origin") -> bool:
    config = repo.get_config()
    section = _section(name)
    if not config.has_section(section):
        return False
    del config[section]
    config.write_to_path()
    for ref in [b"refs/sync/" + name.encode(), b"refs/remotes/" + name.encode() + b"/main"]:
        if ref in repo.refs:
            del repo.refs[ref]
    return True


def normalise(url: str) -> str:
    """A local folder given as a relative path or with ``~`` becomes absolute; other addresses stay as typed."""
    url = url.strip()
    if "://" in url:
        return url
    head, sep, _ = url.partition(":")
    if sep and len(head) > 1 and "/" not in head and not url.startswith((".", "~")):
        return url  # [user@]host:path, as git reads it
    return str(Path(url).expanduser().resolve())


def git_credentials(url: str, _challenge: str = "", attempt: int = 1) -> dict[str, str] | None:
    """The user's own credentials for an https remote, from their git credential helpers (``git credential fill``).

    Asked only when the server answers 401, once; git is told never to prompt (the app owns the terminal). None
    when git is not installed or no helper knows the address."""
    import shutil
    import subprocess
    from urllib.parse import urlsplit

    if attempt > 1 or shutil.which("git") is None:
        return None
    parts = urlsplit(url)
    query = f"protocol={parts.scheme}\nhost={parts.netloc.rpartition('@')[2]}\npath={parts.path.lstrip('/')}\n\n"
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "SSH_ASKPASS": ""}
    try:
        done = subprocess.run(["git", "credential", "fill"], input=query, capture_output=True, text=True, env=env,
                              timeout=30, check=False)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    found = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    if done.returncode != 0 or not found.get("username"):
        return None
    return {"username": found["username"], "password": found.get("password", "")}


def _client(repo: Any, url: str) -> tuple[Any, str]:
    from dulwich.client import default_urllib3_manager, get_transport_and_path

    config = repo.get_config_stack()
    extra: dict[str, Any] = {}
    if url.startswith(("http://", "https://")):  # the user's git credential helpers answer a 401
        extra["pool_manager"] = default_urllib3_manager(config, auth_callback=git_credentials)
    elif ssh := os.environ.get("GIT_SSH_COMMAND") or os.environ.get("GIT_SSH"):
        extra["ssh_command"] = ssh  # as git does; otherwise core.sshCommand, else the system ssh
    try:
        return get_transport_and_path(url, config=config, quiet=True, **extra)
    except Exception as exc:
        raise RemoteError(f"{url} is not an address git can reach: {exc}") from exc


def _local_missing(url: str) -> bool:
    if "://" in url and not url.startswith("file://"):
        return False
    path = Path(url.removeprefix("file://"))
    return path.is_absolute() and not (path / "HEAD").exists() and not (path / ".git").exists()


def fetch(repo: Any, url: str, name: str = "origin") -> bytes | None:
    """Bring the remote's branch into `repo`; its commit id (None when the remote has no memory yet)."""
    if _local_missing(url):
        raise RemoteError(f"{url} is not there (no git repository at that path)")
    client, path = _client(repo, url)
    seen: list[bytes | None] = []  # the branch's commit when the objects were chosen

    def wants(refs: dict, depth: int | None = None, **_kw: Any) -> list[bytes]:
        sha = refs.get(BRANCH)
        seen.append(sha)
        return [sha] if sha is not None and sha not in repo.object_store else []

    from dulwich.file import FileLocked

    try:
        result = client.fetch(path, repo, determine_wants=wants)
    except FileLocked as exc:
        own = os.path.join(os.path.realpath(repo.path), "")
        if os.path.realpath(os.fsdecode(exc.lockfilename)).startswith(own):
            raise  # a lock file of this machine's history, left by a stopped write: the caller clears it
        raise RemoteError(f"fetching {url} failed: it is being written this instant") from None
    except Exception as exc:
        raise RemoteError(f"fetching {url} failed: {exc}") from exc
    # Not the refs the fetch returns: a local remote's are read again after the objects were copied, and another
    # machine's push in between would name a commit that was never fetched.
    return seen[0] if seen else result.refs.get(BRANCH)


def push(repo: Any, url: str, expected: bytes | None, new: bytes, name: str = "origin") -> None:
    """Move the remote's branch from `expected` (None: the remote has none) to `new`, sending what it lacks."""
    from dulwich.objects import ZERO_SHA

    client, path = _client(repo, url)
    moved: list[bytes | None] = []

    def update_refs(refs: dict) -> dict:
        current = refs.get(BRANCH)
        if current is not None and current == ZERO_SHA:
            current = None
        if current != expected:
            moved.append(current)
            return {}
        return {BRANCH: new}

    def pack_data(have: Any, want: Any, *, ofs_delta: bool = False, progress: Any = None) -> Any:
        return repo.generate_pack_data(set(have), set(want), progress=progress, ofs_delta=ofs_delta)

    if _local_missing(url):
        raise RemoteError(f"{url} is not there (no git repository at that path)")
    from dulwich.file import FileLocked

    try:
        result = client.send_pack(path.encode(), update_refs, pack_data)
    except FileLocked:
        raise Moved() from None  # another push is updating the branch this instant
    except Exception as exc:
        raise RemoteError(f"pushing to {url} failed: {exc}") from exc
    if moved:
        raise Moved()
    status = (getattr(result, "ref_status", None) or {}).get(BRANCH)
    if status:
        if "unable to set" in status or "non-fast-forward" in status or "fetch first" in status:
            raise Moved()
        raise RemoteError(f"{url} refused the push: {status}")


def pull_clone(folder: Path) -> str:
    """Fast-forward a managed memory folder that is a git clone to its remote's branch (never pushes).

    Returns what happened in a few words; raises RemoteError when it cannot (no clone, unreachable, diverged, or an
    update that holds a symbolic link or a submodule: refused before anything is checked out)."""
    import io

    from dulwich import porcelain
    from dulwich.errors import NotGitRepository
    from dulwich.graph import can_fast_forward
    from dulwich.refs import HEADREF
    from dulwich.repo import Repo

    try:
        repo = Repo(str(folder))
    except NotGitRepository:
        raise RemoteError(f"{folder} is not a git clone; it is read as it is") from None
    with repo:
        try:
            before = repo.head()
        except KeyError:
            before = None
        try:
            fetched = porcelain.fetch(repo, outstream=io.StringIO(), errstream=io.BytesIO())
        except Exception as exc:
            raise RemoteError(f"updating the managed memory in {folder} failed: {exc}") from exc
        after = fetched.refs.get(HEADREF)
        if after is None or after == before:
            return "up to date"
        if before is not None and not can_fast_forward(repo, before, after):
            raise RemoteError(f"the managed memory in {folder} has diverged from its remote; it was left as it is")
        commit: Any = repo[after]
        links = _links_in(repo, commit.tree)
        if links:
            raise RemoteError(f"the managed memory's remote holds {', '.join(links[:3])}: a link or submodule is never "
                              f"checked out, so the update was refused and {folder} was left as it is")  # fmt: skip
        try:
            porcelain.reset(repo, "hard", after)
        except Exception as exc:
            raise RemoteError(f"updating the managed memory in {folder} failed: {exc}") from exc
    return "updated"


def _links_in(repo: Any, tree_id: bytes) -> list[str]:
    """The symbolic links and submodules anywhere in a tree, by path."""
    found = []
    for entry in repo.object_store.iter_tree_contents(tree_id, include_trees=False):
        if entry.mode in (0o120000, 0o160000):
            kind = "a symbolic link" if entry.mode == 0o120000 else "a submodule"
            found.append(f"{entry.path.decode('utf-8', 'replace')} ({kind})")
    return found
