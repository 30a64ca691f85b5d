"""A /proc that shows only the processes a test made, for the functions that scan /proc
(pts.device.leftovers, openers): they take a `proc` root, and a test hands them this one
so that its sweep kills nothing of another test's or another suite's (issue 47 §1: the
fast tier runs on every core, beside other suites).

The view is a folder of symlinks: `PID -> /proc/PID` for each root process and every
descendant it has when the view is made, and `self -> /proc/self`; reading through it reads
the kernel's real /proc entries of those processes only.
"""

from __future__ import annotations

import os
from pathlib import Path

PROC = Path("/proc")


def _parent(pid: str) -> int | None:
    try:
        fields = (PROC / pid / "stat").read_text(errors="replace").rsplit(")", 1)[-1].split()
    except OSError:
        return None
    return int(fields[1]) if len(fields) > 1 else None


def descendants(roots: list[int]) -> set[int]:
    """`roots` and every process below them now."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir(PROC):
        if entry.isdigit() and (parent := _parent(entry)) is not None:
            children.setdefault(parent, []).append(int(entry))
    found, todo = set(), list(roots)
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo += children.get(pid, [])
    return found


def in_namespace(ns_of: int) -> set[int]:
    """Every process of the pid namespace process `ns_of` lives in."""
    want = os.readlink(PROC / str(ns_of) / "ns" / "pid")
    found = set()
    for entry in os.listdir(PROC):
        try:
            if entry.isdigit() and os.readlink(PROC / entry / "ns" / "pid") == want:
                found.add(int(entry))
        except OSError:
            continue
    return found


def view(folder: Path, pids: set[int]) -> Path:
    """A /proc at `folder` showing `pids` (made anew at each call) and `self`."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    for pid in pids:
        (folder / str(pid)).symlink_to(PROC / str(pid))
    (folder / "self").symlink_to(PROC / "self")
    return folder
