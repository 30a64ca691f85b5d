"""The run's warnings for pytest's terminal summary (no PDF machinery: cheap to import)."""

from __future__ import annotations

from pathlib import Path

from pts.report.data import load_run
from pts.report.model import RunFolderError


def warning_lines(folder: Path) -> list[str]:
    """The run's warnings other than the platform's (those are in the pytest header): the
    purge probe, reads of never-written LBAs. A folder that cannot be read gives none (the
    report render already said why)."""
    try:
        return [f"PTS WARNING: {w}" for w in load_run(folder).warnings]
    except (OSError, RunFolderError):
        return []
