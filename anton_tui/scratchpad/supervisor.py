"""The half of a scratchpad process that owns everything the pad starts, and ends all of it together.

`boot.py` forks as its very first step: the child goes on to run the cells (the pad process), the parent stays
behind as its supervisor and runs `supervise` here. The supervisor lets go of the pad's pipes, then waits. It
stops when any of these happens: the app writes to or closes the control pipe (only the app holds its write end,
so the app's death, even by SIGKILL, closes it too), its parent changes (the app is gone), or the pad process ends.
Stopping means: kill the pad process and every descendant, collect them, then exit with the pad process's own exit
status, so the app can say how it ended.

On Linux it is a child subreaper (`prctl(PR_SET_CHILD_SUBREAPER)`): a process a cell starts stays its
descendant whatever it does (a new session with setsid, a double fork, daemonising), because an orphan is handed
to the nearest subreaper instead of init. The sweep finds descendants through /proc. Elsewhere, or when prctl is
refused, it falls back to killing the pad process's own process group, which misses children that left the group.

It also keeps the pad's cap on processes (`max_processes`, the pad process included): ten times a second it counts
what is below it (through ``/proc/<pid>/task/<tid>/children``, a few reads for a pad that started nothing), and when
there are more, it tells the app (`capped` on the message pipe) and stops as above. Counting children holds for
every user, root included, where `RLIMIT_NPROC` binds no one running as root and counts all of a user's processes.

Like `boot.py` it uses the standard library only and is loaded from its file path.
"""

import contextlib
import os
import select
import signal
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
CHECK_SECONDS = 0.1
SWEEP_SECONDS = 10.0


def become_subreaper():
    """True when orphaned descendants will be re-parented to this process (Linux 3.4+)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def parents():
    """{pid: parent pid} of every process visible in /proc; empty when there is no /proc."""
    table: dict[int, int] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return table
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 1:
            table[int(entry)] = int(fields[1])
    return table


def descendants(root):
    """Every process below `root`, parents before children."""
    children: dict[int, list[int]] = {}
    for pid, parent in parents().items():
        children.setdefault(parent, []).append(pid)
    found, queue = [], [root]
    while queue:
        for child in children.get(queue.pop(0), ()):
            found.append(child)
            queue.append(child)
    return found


def count_below(root, limit):
    """How many processes are below `root`, counted up to just over `limit` (through each thread's ``children``
    file); None when the system has no such files (then `descendants` is used)."""
    count, queue = 0, [root]
    while queue:
        pid = queue.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:  # gone meanwhile, or no /proc
            if pid == root:
                return None
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{pid}/task/{tid}/children", "rb") as handle:
                    children = handle.read().split()
            except FileNotFoundError:
                if pid == root and tid == str(root):
                    return None  # a kernel without the children files
                continue  # a thread or process that ended meanwhile
            except OSError:
                continue
            count += len(children)
            if count > limit:
                return count
            queue.extend(int(child) for child in children)
    return count


def kill_descendant(pid, family):
    """SIGKILL `pid` if it is still one of ours: through a pidfd, checked against its current parent, so a pid
    reused by an unrelated process between the scan and the kill is left alone."""
    pidfd = None
    try:
        if hasattr(os, "pidfd_open") and hasattr(signal, "pidfd_send_signal"):
            pidfd = os.pidfd_open(pid)
            if parent_of(pid) not in family:
                return
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass
    finally:
        if pidfd is not None:
            os.close(pidfd)


def parent_of(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return int(stat.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


class Supervisor:
    def __init__(self, worker, control, max_processes=None, report=None, capped=b""):
        self.worker = worker
        self.control = control
        self.max_processes = max_processes
        self.report = report  # the message pipe's write end, to say `capped`
        self.capped = capped  # the encoded `capped` message
        self.parent = os.getppid()
        self.worker_status: int | None = None
        self.stop_requested = False
        self.wake_read, self.wake_write = os.pipe()
        os.set_blocking(self.wake_read, False)
        os.set_blocking(self.wake_write, False)
        signal.set_wakeup_fd(self.wake_write, warn_on_full_buffer=False)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(signum, self._request_stop)

    def _request_stop(self, *_):
        self.stop_requested = True

    def wait(self):
        """Until the app asks for the end, goes away, or the pad process ends; collects orphans meanwhile."""
        poller = select.poll()
        poller.register(self.control, select.POLLIN)
        poller.register(self.wake_read, select.POLLIN)
        self.collect()  # the pad process may have ended before the SIGCHLD handler was in place
        while not self.stop_requested and self.worker_status is None:
            events = dict(poller.poll(CHECK_SECONDS * 1000))
            if events.get(self.control):
                return  # a stop byte, or end of file because the app is gone
            if self.wake_read in events:
                self._drain_wakeups()
            self.collect()
            if self.ended() or self.over_cap():
                return

    def ended(self):
        """Whether the pad process has ended or the app has gone (this process was handed to another parent)."""
        return self.worker_status is not None or os.getppid() != self.parent

    def over_cap(self):
        """Whether the pad runs more processes than it may; the app is told before everything is ended."""
        if not self.max_processes:
            return False
        me = os.getpid()
        count = count_below(me, self.max_processes)
        if count is None:
            count = len(descendants(me))
        if count <= self.max_processes:
            return False
        if self.report is not None and self.capped:
            with contextlib.suppress(OSError):
                os.write(self.report, self.capped)
        return True

    def _drain_wakeups(self):
        try:
            while os.read(self.wake_read, 512):
                pass
        except OSError:
            pass

    def collect(self):
        """Reap every child that has ended (the pad process and any orphan handed to us). False when none are left."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return False
            except InterruptedError:
                continue
            if pid == 0:
                return True
            if pid == self.worker:
                self.worker_status = status

    def sweep(self):
        """Kill the pad process and every descendant, and collect them all."""
        if self.worker_status is None and self.worker is not None:
            with contextlib.suppress(OSError):
                os.killpg(self.worker, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.kill(self.worker, signal.SIGKILL)
        me = os.getpid()
        deadline = time.monotonic() + SWEEP_SECONDS
        while time.monotonic() < deadline:
            below = descendants(me)  # empty without /proc: then only our own children are waited for
            family = {me, *below}
            for pid in below:
                kill_descendant(pid, family)
            if not self.collect() and not below:
                return
            time.sleep(0.005)

    def exit(self):
        """Exit the way the pad process did: same exit code, or killed by the same signal."""
        status = self.worker_status
        if status is None:
            os._exit(1)
        code = os.waitstatus_to_exitcode(status)
        if code >= 0:
            os._exit(code)
        signum = -code
        try:
            import resource

            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        except (ImportError, ValueError, OSError):
            pass
        signal.set_wakeup_fd(-1)
        signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signum])
        os.kill(os.getpid(), signum)
        os._exit(128 + signum)


def supervise(worker, control, release, max_processes=None, report=None, capped=b""):
    """Run as the supervisor of the pad process `worker` until the end; never returns. `release` are the pad's pipe
    ends this process must not keep open (its own stdin, stdout and stderr are let go as well). `become_subreaper()`
    is called before the fork, so no orphan of a cell can slip past to init. `report` is the message pipe, on which
    `capped` is said when the pad runs more than `max_processes` processes."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    for fd in release:
        with contextlib.suppress(OSError):
            os.close(fd)
    try:
        supervisor = Supervisor(worker, control, max_processes, report, capped)
        try:
            supervisor.wait()
        finally:
            supervisor.sweep()
        supervisor.exit()
    finally:
        os._exit(1)
