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
            umask = os.umask(0)
            os.umask(umask)
            os.fchmod(fh.fileno(), 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text(path: str | Path, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def write_json(path: str | Path, data) -> None:
    """`data` as indented JSON, in its own key order, ending with a newline."""
    write_text(path, json.dumps(data, indent=2) + "\n")
