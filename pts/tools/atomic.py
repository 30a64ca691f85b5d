"""Write a file whole or not at all: a temporary file beside it, flushed to disk, renamed over
it. A reader (the dashboard, a resumed run, an emulator's next start) never sees half a file,
and the old file survives a write that fails. The one atomic writer of the package: run.json,
reports, compare output, the emulator's state.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path


def write_bytes(path: str | Path, data: bytes) -> None:
    target = Path(path)
    # A unique name in the same folder: the rename stays on one filesystem, and two writers
    # of one file never share a temporary file.
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
            # mkstemp makes the file 0600; the result is as readable as any file written
            # with open() (the process's umask decides)
            os.fchmod(fh.fileno(), 0o666 & ~umask())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def umask() -> int:
    """The process's umask, read without changing it (/proc/self/status, Linux 4.7+): the
    only other way, setting one and putting it back, leaves the process with umask 0 for a
    moment, and a file another thread creates (the dashboard, the live index) or a tool it
    starts then would be writable by everyone."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    found = os.umask(0o077)        # no such line (another kernel): the strictest meanwhile
    os.umask(found)
    return found


def write_text(path: str | Path, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def write_json(path: str | Path, data) -> None:
    """`data` as indented JSON, in its own key order, ending with a newline."""
    write_text(path, json.dumps(data, indent=2) + "\n")
