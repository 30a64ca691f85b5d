"""The run folders and session folders under the served folders, each loaded once and again
only when its run.json or ledger.jsonl changes (mtime or size): a runs-list request stats
every folder but reads only the changed ones. Runs are read with
pts.stored.data.load_run, the report's one loader; a folder it refuses is kept with its
error, so the list shows it beside the others."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from pts.serve import safe
from pts.stored.data import LEDGER, RUN_JSON, load_run, run_json
from pts.stored.model import RunFolderError, RunView

SESSION_JSON = "session.json"
MAX_DEPTH = 4          # reports/<model>_<serial>/<run-id>/, reports/sessions/<stamp>/ + margin
COMMANDS_LOG = "commands.log"   # written before each command a run starts (a sign of life)
REPORT_PDF = "report.pdf"


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


@dataclass
class Entry:
    """One run folder (kind "run") or several-device session folder (kind "session")."""

    id: str                      # the folder relative to its served folder, "/"-separated
    folder: Path
    kind: str
    key: tuple = ()              # the stats it was loaded at
    view: RunView | None = None
    error: str | None = None     # why it could not be loaded
    session: dict = field(default_factory=dict)   # session.json
    # a run whose ledger cannot be read: what its run.json says (model, serial, firmware,
    # host, spec, started), as the results index keeps it (pts.index.rows.unreadable_row)
    identity: dict | None = None
    stats: dict[str, tuple[int, int] | None] = field(default_factory=dict)   # at last look

    def mtime(self, name: str) -> float | None:
        st = self.stats.get(name)
        return None if st is None else st[0] / 1e9

    @property
    def sort_time(self) -> float:
        """When it started (run.json `started`; a session: its folder's time stamp), else
        when its first file was written."""
        text = self.view.started if self.view is not None else \
            (self.identity or {}).get("started")
        return sort_time(text, self.folder, self.mtime(RUN_JSON) or self.mtime(SESSION_JSON))


def sort_time(started: str | None, folder: Path, mtime: float | None) -> float:
    """Where a folder goes in the runs list (newest first): its start time (ISO 8601), else
    its name's time stamp (YYYYMMDDTHHMMSS[-...]), else `mtime` (its run.json's)."""
    for parse in (datetime.fromisoformat, lambda s: datetime.strptime(s, "%Y%m%dT%H%M%S")):
        try:
            return parse(started or folder.name.split("-")[0]).timestamp()
        except (TypeError, ValueError):
            continue
    return mtime or 0.0


class RunIndex:
    def __init__(self, folders: list[str | Path],
                 finder: Callable[[str], tuple[Path, str] | None] | None = None):
        """`finder`: where a folder not seen yet is, by its id (the results index's lookup,
        pts.serve.indexed), instead of scanning every folder (the default)."""
        self.roots = [Path(f).resolve() for f in folders]
        self.entries: dict[str, Entry] = {}
        self.loads = 0                       # how many times a folder was (re)read
        self.finder = finder
        self._lock = threading.Lock()

    def refresh(self) -> list[Entry]:
        """Every folder, newest first; only changed ones are read again."""
        with self._lock:
            found = self._scan()
            self.entries = {i: self._fresh(self.entries.get(i), i, *where)
                            for i, where in found.items()}
            return sorted(self.entries.values(), key=lambda e: (e.sort_time, e.id),
                          reverse=True)

    def get(self, entry_id: str) -> Entry | None:
        """The entry `entry_id` as it is now (None: no such folder)."""
        with self._lock:
            entry = self.entries.get(entry_id)
        if entry is None and self.finder is not None:
            where = self.finder(entry_id)
            if where is None:
                return None
            entry = Entry(entry_id, *where)
        elif entry is None:
            self.refresh()
            entry = self.entries.get(entry_id)
            if entry is None:
                return None
        with self._lock:
            if not entry.folder.is_dir():
                self.entries.pop(entry_id, None)
                return None
            entry = self._fresh(entry, entry_id, entry.folder, entry.kind)
            self.entries[entry_id] = entry
            return entry

    def id_of(self, folder: str | Path) -> str | None:
        """The id of a folder named elsewhere (a session's run folder), if it is served."""
        real = Path(folder).resolve()
        for n, root in enumerate(self.roots):
            if real.is_relative_to(root):
                return self._id(n, real.relative_to(root).as_posix())
        return None

    def _id(self, n: int, rel: str) -> str:
        rel = "" if rel == "." else rel
        prefix = f"{n}" if len(self.roots) > 1 else ""
        return "/".join(p for p in (prefix, rel) if p) or self.roots[n].name

    def _scan(self) -> dict[str, tuple[Path, str]]:
        found = {}
        for n, root in enumerate(self.roots):
            for dirpath, dirnames, filenames in os.walk(root):     # symlinked dirs: not entered
                here = Path(dirpath)
                kind = "run" if RUN_JSON in filenames else \
                    "session" if SESSION_JSON in filenames else None
                if kind is not None:
                    found[self._id(n, here.relative_to(root).as_posix())] = (here, kind)
                    dirnames[:] = []                 # raw/ and the like: not run folders
                elif len(here.relative_to(root).parts) >= MAX_DEPTH:
                    dirnames[:] = []
                else:
                    dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        return found

    def _fresh(self, old: Entry | None, entry_id: str, folder: Path, kind: str) -> Entry:
        names = (RUN_JSON, LEDGER, COMMANDS_LOG, REPORT_PDF) if kind == "run" \
            else (SESSION_JSON,)
        stats = {name: _stat(folder / name) for name in names}
        key = tuple(stats[n] for n in names[:2])
        if old is not None and old.key == key and old.kind == kind:
            old.stats = stats
            return old
        self.loads += 1
        entry = Entry(entry_id, folder, kind, key, stats=stats)
        try:
            self._load(entry)
        except RunFolderError as exc:
            entry.error = str(exc)
        except Exception as exc:      # a folder the loader chokes on: listed, never a 500
            entry.error = f"{type(exc).__name__}: {exc}"
        return entry

    def _load(self, entry: Entry) -> None:
        files = (RUN_JSON, LEDGER) if entry.kind == "run" else (SESSION_JSON,)
        for name in files:
            path = entry.folder / name
            if (path.exists() or path.is_symlink()) and not safe.inside(path, self.roots):
                raise RunFolderError(f"{path} leads out of the served folders: not read")
        if entry.kind == "run":
            try:
                entry.view = load_run(entry.folder)
            except Exception:
                entry.identity = _identity(entry.folder)
                raise
            return
        try:
            data = json.loads((entry.folder / SESSION_JSON).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise RunFolderError(f"cannot read {entry.folder / SESSION_JSON}: {exc}") from None
        if not isinstance(data, dict) or not isinstance(data.get("devices"), list):
            raise RunFolderError(f"{entry.folder / SESSION_JSON} has no \"devices\" list")
        entry.session = data


def _identity(folder: Path) -> dict | None:
    """What run.json says of a run whose ledger cannot be read (None: nor can run.json)."""
    try:
        info, device = run_json(folder)
    except Exception:
        return None
    spec = info.get("spec") if isinstance(info.get("spec"), dict) else {}
    platform = info.get("platform") if isinstance(info.get("platform"), dict) else {}
    host = platform.get("hostname")
    return {"model": device.model, "serial": device.serial, "firmware": device.firmware,
            "host": None if host is None else str(host),
            "spec": str(spec.get("title") or spec.get("name") or "unknown specification"),
            "started": None if info.get("started") is None else str(info["started"])}
