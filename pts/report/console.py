"""The run's warnings for pytest's terminal summary (no PDF machinery: cheap to import)."""

from __future__ import annotations

from pathlib import Path

from pts.stored.data import load_run
from pts.stored.model import RunFolderError


def warning_lines(folder: Path) -> list[str]:
    """The run's warnings other than the platform's (those are in the pytest header): the
    purge probe, reads of never-written LBAs. A folder that cannot be read gives none (the
    report render already said why)."""
    try:
        return [f"PTS WARNING: {w}" for w in load_run(folder).warnings]
    except (OSError, RunFolderError):
        return []


def terminal_writer(config):
    """A function writing lines to the terminal even while pytest captures test output
    (progress of a run; a several-device session's child lines)."""
    capman = config.pluginmanager.getplugin("capturemanager")
    reporter = config.pluginmanager.getplugin("terminalreporter")

    def write(line: str) -> None:
        if capman is None or reporter is None:
            print(line, flush=True)
            return
        with capman.global_and_fixture_disabled():
            reporter.write_line(line)
    return write
