"""The runs list and /metrics read from the results index (pts.index, docs/index.md) when
REPORTS_DIR/index.sqlite exists: a page of the list is a few SQL queries, however many runs
the lab has, where reading every run folder (pts.serve.index) takes minutes for thousands.

The folders stay the truth. The index is brought level with them by pts.index's own update
(pts.index.build.update, the code of `python -m pts index`): once when the server starts and
again and again after that (the watcher: a thread, one pass at least WATCH_SECONDS apart and
pausing 1/WATCH_SHARE times as long as its pass took, so that a large lab's passes never take
more than that share of a core). Pages read the index as it is meanwhile, and say as of when.
A run's own page, its report, its live state and its files are read from its folder, as
without an index (pts.serve.index, by id: the index only says where the folder is).

The dashboard writes only the index file, never a run folder. What the index cannot hold is
taken from the folders at the time of the request: a run's state between running, resumable
and interrupted depends on the clock and its files' times (pts.serve.state.state_of, the
stats of ledger.jsonl, report.pdf and commands.log of the runs the index calls unfinished);
several-device session folders and run folders the index refuses (run.json unreadable) are
kept from the watcher's last pass and listed from their files (they are few).
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from pathlib import Path

from pts.index import build, query, target
from pts.index.rows import FINISHED as INDEX_FINISHED
from pts.index.rows import UNFINISHED, UNREADABLE
from pts.serve import listing, state
from pts.serve.index import COMMANDS_LOG, REPORT_PDF, SESSION_JSON, Entry, RunIndex, sort_time
from pts.stored.data import LEDGER

WATCH_SECONDS = 5.0      # least time between two level passes
WATCH_SHARE = 0.2        # most of the time a pass may take: the pause is 4 times its length
# the index states a list state can be in
INDEX_STATES = {state.FINISHED: (INDEX_FINISHED,), state.ERROR: (UNREADABLE,),
                state.RUNNING: (UNFINISHED,), state.RESUMABLE: (UNFINISHED,),
                state.INTERRUPTED: (UNFINISHED,)}


class IndexedRuns:
    def __init__(self, root: str | Path, where: str | Path, index: RunIndex,
                 interval: float = WATCH_SECONDS):
        """`where`: an SQLite file or a postgresql:// URL (pts.index.target). db.IndexUnusable
        when the index cannot be opened (newer schema, not SQLite, server refusing...)."""
        self.root, self.where, self.index = Path(root).resolve(), str(where), index
        self.key, self.interval = str(self.root), interval
        self.margins = None         # the release gate's kept answers' (serve --margins)
        self.connect().close()                 # usable (and migrated), else IndexUnusable
        self.extras: dict[str, tuple[Path, str]] = {}    # sessions and refused run folders
        self.passes = 0
        self.last: dict | None = None          # the last pass: when, seconds, summary, error
        self.started = time.time()
        self._local = threading.local()
        self._stop = threading.Event()
        self._passed = threading.Condition()
        self._thread: threading.Thread | None = None
        index.finder = self.find

    def connect(self):
        return target.connect(self.where)

    # -- the watcher -------------------------------------------------------------------
    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._watch, name="pts-index-watch",
                                            daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def wait(self, passes: int, timeout: float = 60.0) -> bool:
        """Until `passes` level passes have ended (True), or `timeout` seconds (False)."""
        with self._passed:
            return self._passed.wait_for(lambda: self.passes >= passes, timeout)

    def _watch(self) -> None:
        conn = None
        while not self._stop.is_set():
            # the pass reads the folders from its start: level with them as of then (a time
            # read after it, seconds to minutes later, claimed changes it had not read)
            began, began_unix, error, summary = time.monotonic(), time.time(), None, None
            try:
                conn = conn or self.connect()
                summary = build.update(conn, [self.root], margins=self.margins)
                self.extras = self._extras(conn, summary)
            except Exception as exc:       # the index only lags; the next pass tries again
                error = f"{type(exc).__name__}: {exc}"
                if conn is not None:
                    conn.close()
                conn = None
            took = time.monotonic() - began
            with self._passed:
                self.passes += 1
                self.last = {"at": began_unix, "seconds": took, "error": error,
                             "line": summary.line() if summary is not None else ""}
                self._passed.notify_all()
            self._stop.wait(max(self.interval, took / WATCH_SHARE))
        if conn is not None:
            conn.close()

    def _extras(self, conn, summary: build.Summary) -> dict[str, tuple[Path, str]]:
        out = {}
        for folder, _ in summary.skipped:
            if (Path(folder) / SESSION_JSON).is_file():
                out[self.index.id_of(folder)] = (Path(folder), "session")
        for folder, _ in summary.refused:
            if not query.has_run(conn, folder):      # refused rows kept: listed from them
                out[self.index.id_of(folder)] = (Path(folder), "run")
        return out

    # -- reading -----------------------------------------------------------------------
    def conn(self):
        """This thread's connection to the index (sqlite3's are bound to their thread)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self.connect()
        return conn

    def find(self, entry_id: str) -> tuple[Path, str] | None:
        """Where the folder `entry_id` is: a run the index holds, or a session or refused
        folder of the last pass (the id is only a key here, never a path opened)."""
        if entry_id in self.extras:
            return self.extras[entry_id]
        folder = self.root / entry_id
        if not entry_id or self.index.id_of(folder) != entry_id:     # only the canonical id
            return None
        return (folder, "run") if query.has_run(self.conn(), str(folder)) else None

    def listing(self, stale_after: float, w: listing.Wanted) -> listing.Listing:
        conn, f = self.conn(), w.filters
        if w.state:
            f = replace(f, states=INDEX_STATES[w.state])
        extras = [r for r in self._extra_rows(stale_after) if listing.matches(r, w)]
        undated = self._rows(conn, query.undated(conn, self.key, f), stale_after)
        start = (w.page - 1) * listing.PAGE_ROWS
        if w.state in (state.RUNNING, state.RESUMABLE, state.INTERRUPTED):
            # the state is the clock's: every unfinished candidate is looked at
            found = self._rows(conn, query.page(conn, self.key, f, None), stale_after) + undated
            found = sorted((r for r in found + extras if r["state"] == w.state), key=_key,
                           reverse=True)
            shown, matching = found[start:start + listing.PAGE_ROWS], len(found)
        else:
            specials = sorted(extras + undated, key=_key, reverse=True)
            matching = query.count(conn, self.key, f) + len(extras)
            shown = self._page(conn, f, specials, start, stale_after)
        total = sum(query.state_counts(conn, self.key).values()) + len(self.extras)
        return listing.Listing(shown, matching, total, query.test_names(conn, self.key),
                               w.page, listing.pages_of(matching))

    def _page(self, conn, f: query.Filters, specials: list[dict], start: int,
              stale_after: float) -> list[dict]:
        n = listing.PAGE_ROWS
        if not specials:
            return self._rows(conn, query.page(conn, self.key, f, n, start), stale_after)
        dated = self._rows(conn, query.page(conn, self.key, f, start + n), stale_after)
        return sorted(dated + specials, key=_key, reverse=True)[start:start + n]

    def _rows(self, conn, found: list[dict], stale_after: float) -> list[dict]:
        folders = [d["folder"] for d in found]
        tests = query.tests_of(conn, folders)
        stopping = query.stopping(conn, [d["folder"] for d in found if d["state"] == UNFINISHED])
        return [self._row(d, tests[d["folder"]], d["folder"] in stopping, stale_after)
                for d in found]

    def _row(self, d: dict, tests: list[str], stopping: bool, stale_after: float) -> dict:
        now = row_state(d, stopping, stale_after)
        unreadable = d["state"] == UNREADABLE
        return {"id": self.index.id_of(d["folder"]), "kind": "run",
                "error": d["error"] if unreadable else None, "state": now, "tests": tests,
                "model": d["model"], "serial": d["serial"], "firmware": d["firmware"],
                "host": d["host"] or "",
                "spec": d["spec_title"] or d["spec_name"] or "unknown specification",
                "verdict": d["verdict"] or "",
                "compliant": None if d["compliant"] is None else bool(d["compliant"]),
                "deviations": "" if unreadable else d["deviation_count"],
                "started": d["started"] or "", "started_at": d["started_at"],
                "ended": "" if unreadable or now == state.RUNNING
                else listing.when(d["last_record_at"]),
                "sort": sort_time(d["started"], Path(d["folder"]),
                                  (d["run_json_mtime_ns"] or 0) / 1e9)}

    def _extra_rows(self, stale_after: float) -> list[dict]:
        out = []
        for entry_id in list(self.extras):
            entry = self.index.get(entry_id)
            if entry is not None:
                out.append(listing.row(entry, stale_after, self.index)
                           | {"sort": entry.sort_time})
        return out

    # -- /metrics ----------------------------------------------------------------------
    def metric_runs(self, stale_after: float) -> tuple[dict[str, int], list[Entry]]:
        """Run folders per state, and the newest readable run of each device (from its
        folder), as pts.serve.metrics shows them."""
        conn = self.conn()
        counts = dict.fromkeys((*state.STATES, state.ERROR), 0)
        stored = query.state_counts(conn, self.key)
        counts[state.FINISHED] += stored.get(INDEX_FINISHED, 0)
        counts[state.ERROR] += stored.get(UNREADABLE, 0)
        unfinished = query.by_state(conn, self.key, [UNFINISHED])
        stopping = query.stopping(conn, [d["folder"] for d in unfinished])
        for d in unfinished:
            counts[row_state(d, d["folder"] in stopping, stale_after)] += 1
        counts[state.ERROR] += sum(kind == "run" for _, kind in self.extras.values())
        newest = []
        for d in query.newest_per_device(conn, self.key, [UNREADABLE]):
            entry = self.index.get(self.index.id_of(d["folder"]))
            if entry is not None and entry.view is not None:
                newest.append(entry)
        return counts, newest

    # -- what the page says ------------------------------------------------------------
    def note(self) -> str:
        last = self.last
        where = f"Runs from the results index {target.shown(self.where)}"
        if last is None:
            return (f"{where}, as it was when the server started; it is being brought level "
                    f"with the run folders (since {_clock(self.started)}).")
        if last["error"]:
            return (f"{where}; it could not be brought level with the run folders at "
                    f"{_clock(last['at'])} ({last['error']}): the list may lag behind them. "
                    f"Trying again every {self.interval:g} s.")
        return (f"{where}, level with the run folders as of {_clock(last['at'])} (checked "
                f"every {self.interval:g} s or more; the last check: {last['line']}, "
                f"{last['seconds']:.1f} s).")


def row_state(d: dict, stopping: bool, stale_after: float) -> str:
    """The list state of an index row (pts.serve.state's rule; the files' times read now)."""
    if d["state"] == UNREADABLE:
        return state.ERROR
    if d["state"] == INDEX_FINISHED:
        return state.FINISHED
    folder = Path(d["folder"])
    return state.state_of(False, stopping, d["emulated"] is not None and not d["emulated"],
                          _mtime(folder / LEDGER), _mtime(folder / REPORT_PDF),
                          _mtime(folder / COMMANDS_LOG), stale_after)


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime_ns / 1e9
    except OSError:
        return None


def _key(r: dict) -> tuple[float, str]:
    return (r["sort"], r["id"])


def _clock(t: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(t))

