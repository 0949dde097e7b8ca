"""Processes as /proc shows them, for the tests that kill or stop deptree processes."""
from __future__ import annotations

import os


def _stat(pid: int | str) -> list[str]:
    """The fields of /proc/PID/stat after the command name (state first, then PPID)."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(") ", 1)[1].split()


def alive(pid: int) -> bool:
    """Running (a zombie is not)."""
    try:
        return _stat(pid)[0] != "Z"
    except OSError:
        return False


def parent(pid: int) -> int:
    return int(_stat(pid)[1])


def children(pid: int) -> set[int]:
    """Live processes whose parent is `pid`."""
    out = set()
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                fields = _stat(d)
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                out.add(int(d))
    return out
