"""Which files the dashboard may serve: only regular files inside the folders it was given,
by names it knows. A run is found by its id in the index (never by joining a request's path
onto a folder), and a file by one of SERVED; a symlink that leads out of the given folders is
refused like a file that does not exist."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

# The files of a run or session folder a client may download (export.* are made on the fly).
RUN_FILES = ("report.pdf", "report.html", "run.json", "ledger.jsonl")
SESSION_FILES = ("session.json", "compare.pdf", "compare.csv")
GENERATED = ("export.json", "export.csv")
MEDIA = {".pdf": "application/pdf", ".json": "application/json", ".csv": "text/csv",
         ".jsonl": "application/x-ndjson", ".html": "text/html"}


def inside(path: Path, roots: Sequence[Path]) -> bool:
    """`path`, every symlink resolved, is one of `roots` or below one."""
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError):        # missing, or a symlink loop
        return False
    return any(real == r or real.is_relative_to(r) for r in roots)


def stored_file(folder: Path, name: str, roots: Sequence[Path],
                allowed: Sequence[str]) -> Path | None:
    """folder/name if `name` is an allowed file name and the file is a regular file inside
    the roots (None: 404)."""
    if name not in allowed or "/" in name or "\\" in name:
        return None
    path = folder / name
    if not inside(path, roots) or not path.is_file():
        return None
    return path
