"""A cap on how many processes do one thing at once, across processes: N slot files in a
folder, a process holds one by an exclusive flock while it works (issue 24: `--render-jobs N`,
the report renders of a several-device session's children; each costs ~170 MiB and a core).

A flock is released by the kernel when its holder exits, so a killed child never keeps a
slot. A process given no folder (a one-device session) takes no slot.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ENV = "PTS_RENDER_SLOTS"          # the slot folder a session's children render under
POLL_SECONDS = 0.5                # a waiting process tries the slots again this often


def make(folder: Path, count: int) -> Path:
    """`count` slot files in `folder` (made if missing); returns the folder."""
    if count < 1:
        raise ValueError(f"a slot cap must be at least 1, not {count}")
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        (folder / f"slot-{n}").touch()
    return folder


@contextlib.contextmanager
def held(folder: str | os.PathLike | None,
         waiting: Callable[[int], None] | None = None) -> Iterator[tuple[int, int] | None]:
    """Hold a free slot of `folder` while the block runs (waiting for one if all are held;
    `waiting(count)` is called once when it must wait); yields (the slot's number from 1,
    the number of slots), or None without a folder."""
    if not folder:
        yield None
        return
    paths = sorted(Path(folder).glob("slot-*"), key=lambda p: int(p.name.split("-")[1]))
    if not paths:
        raise FileNotFoundError(f"no slot files in {folder}")
    told = False
    while True:
        for n, path in enumerate(paths):
            fd = os.open(path, os.O_RDWR)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            try:
                yield n + 1, len(paths)
            finally:
                os.close(fd)          # releases the lock
            return
        if not told and waiting is not None:
            waiting(len(paths))
            told = True
        time.sleep(POLL_SECONDS)
