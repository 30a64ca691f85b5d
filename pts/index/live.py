"""A run indexing itself as its ledger grows (docs/index.md, "A run in progress"): a thread of
the suite's process that brings its one run folder's rows level (pts.index.build.update_one,
what `pts index` does for every folder) whenever run.json or ledger.jsonl changed, and once
more when the run ends.

Which index: $PTS_INDEX when set (the lab's database, set once per host: a PostgreSQL URL or
an SQLite file), else REPORTS_DIR/index.sqlite when that file exists; else none, and nothing is
done (the suite never makes an index on its own: where it lives is the lab's choice).

It never holds the run up: the run writes its folder as always and never waits on the index;
the thread runs at a lower CPU priority, a pass at most every `interval` seconds and at least 4
times as long after a pass as the pass took (at most a fifth of a core however large the
ledger); whatever the index does (a PostgreSQL server down or lost, a newer schema, a locked
or corrupt file) is said once, and later passes try again quietly (said again once when it is
reachable again). At the end the last pass is waited for a bounded time; a run whose index
was not level is told how to bring it level (`python -m pts index REPORTS_DIR`): nothing is
lost, the folder is the truth.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from pts.index import build, db, target

INTERVAL_S = 10.0           # a pass at most this often
SLOWER = 4.0                # ... and at least this many times its own length after the last
STOP_WAIT_S = 30.0          # how long the end of a run waits for the last pass
NICE = 10                   # the thread's CPU priority, below the run's


def target_for(reports_dir: str | Path, environ: Mapping[str, str] = os.environ) -> str | None:
    """The index a run under `reports_dir` keeps level: $PTS_INDEX, else the index file
    beside the reports when it exists, else None."""
    found = target.place(None, Path(reports_dir) / db.FILE_NAME, environ)
    if found.source == target.DEFAULT and not Path(found.where).is_file():
        return None
    return found.where


class LiveIndex:
    """Keeps one run folder's rows level in `where` (a file or URL) from a thread. `say`:
    how a line reaches the person running the suite (the console)."""

    def __init__(self, folder: str | Path, root: str | Path, where: str,
                 say: Callable[[str], None], interval: float = INTERVAL_S,
                 connect: Callable[[str], db.Index] = target.connect):
        self.folder, self.root, self.where = Path(folder), Path(root), where
        self.shown = target.shown(where)
        self.say, self.interval, self.connect = say, interval, connect
        self.failure: str | None = None      # why the last pass failed (None: it did not)
        self.passes = self.failed = 0
        self.level_at: dict | None = None    # the file stats the index is level with
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="pts-live-index", daemon=True)

    def start(self) -> LiveIndex:
        self._thread.start()
        return self

    def _loop(self) -> None:
        with contextlib.suppress(OSError, AttributeError):    # best effort: Linux per thread
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICE)
        while True:
            final = self._stop.is_set()
            took = 0.0
            stats = build.file_stats(self.folder)
            if stats != self.level_at:
                took = self._pass(stats)
            if final:
                return
            self._stop.wait(max(self.interval, SLOWER * took))

    def _pass(self, stats: dict) -> float:
        t = time.monotonic()
        try:
            conn = self.connect(self.where)
            try:
                summary = build.update_one(conn, self.folder, self.root)
            finally:
                conn.close()
            if summary.refused:
                raise db.IndexUnusable(summary.refused[0][1])
        except Exception as exc:          # whatever the index does, the run goes on
            self.failed += 1
            first = self.failure is None
            self.failure = str(exc) or type(exc).__name__
            if first:
                self.say(f"snia-pts index: cannot keep {self.shown} level with this run "
                         f"({self.failure}); the run goes on and writes its folder as always; "
                         f"the index catches up with `python -m pts index {self.root}` (or a "
                         "dashboard on these reports); trying again quietly")
            return time.monotonic() - t
        self.passes += 1
        self.level_at = stats
        if self.failure is not None:
            self.say(f"snia-pts index: {self.shown} reachable again: this run's rows are level")
            self.failure = None
        return time.monotonic() - t

    def stop(self, timeout: float = STOP_WAIT_S) -> list[str]:
        """End it after one last pass (waited for at most `timeout` s); the lines for the
        end of the run."""
        self._stop.set()
        self._thread.join(timeout)
        fix = f"bring it level with `python -m pts index {self.root}`"
        if self._thread.is_alive():
            return [f"PTS index: {self.shown} did not answer within {timeout:g} s; the run "
                    f"folder is whole: {fix}"]
        if self.failure is not None:
            return [f"PTS index: {self.shown} is not level with this run ({self.failure}); "
                    f"the run folder is whole: {fix}"]
        return [f"PTS index: this run's rows are level in {self.shown}"]


def start(folder: str | Path, reports_dir: str | Path, say: Callable[[str], None],
          environ: Mapping[str, str] = os.environ) -> LiveIndex | None:
    """The run's live index, started; None when no index is set for it (target_for)."""
    where = target_for(reports_dir, environ)
    if where is None:
        return None
    return LiveIndex(folder, reports_dir, where, say).start()
