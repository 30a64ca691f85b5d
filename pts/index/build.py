"""Bring the index level with the run folders under the given report folders: add the new
ones, read again the changed ones, drop the rows of folders that are gone; one transaction per
run folder, so an interrupted run (Ctrl-C, a crash, a full disk) leaves each folder's rows as
they were or wholly replaced, and the next run carries on.

Changed means: run.json's or ledger.jsonl's size or modification time (ns) differs from the
ones the folder was read at, or the rows were made by an older reader (rows.READER). Stats,
not a content hash: a stat is one system call per file where a hash reads every ledger in
full on every pass (a long run's ledger is megabytes, a lab has thousands), and the writer
only appends to the ledger (any record changes its size) and writes run.json once, atomically
(a new file: a new mtime). A hand edit that keeps a file's size and its mtime to the
nanosecond is not seen: `--full` reads every folder again.

A folder whose ledger the stored-run reader refuses (a corrupt record in its middle) is
indexed from run.json alone, with the reason (state "unreadable"); one whose run.json cannot
be read is refused (its old rows dropped) with the reason; neither stops the command.
Nothing here writes into a run folder. The same code for SQLite and PostgreSQL (pts.index.db:
the SQL is written once); a PostgreSQL server lost mid-way stops the command with
db.IndexUnusable, the folder in flight rolled back, the ones before kept.

After the folders, the release gate's kept answers (pts.index.gate_store) of every model one
of whose folders was added, read again, refused or dropped are worked out again (all models
under a root that has none kept with these margins yet), in a transaction of their own.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pts.config.margins import Margins
from pts.index import gate_store, rows
from pts.index.db import Index, transaction
from pts.index.scan import scan
from pts.stored.data import LEDGER, RUN_JSON, load_run, run_json
from pts.stored.model import RunFolderError

STAT_COLUMNS = ("run_json_size", "run_json_mtime_ns", "ledger_size", "ledger_mtime_ns")


@dataclass
class Summary:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    unchanged: int = 0
    refused: list[tuple[str, str]] = field(default_factory=list)    # (folder, why)
    skipped: list[tuple[str, str]] = field(default_factory=list)    # not run folders
    unreadable: list[tuple[str, str]] = field(default_factory=list)  # run.json only: why

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.dropped)

    def line(self) -> str:
        counts = (f"{len(self.added)} added, {len(self.updated)} updated, "
                  f"{len(self.dropped)} dropped, {self.unchanged} unchanged, "
                  f"{len(self.refused)} refused, {len(self.skipped)} skipped (not runs)")
        return counts if self.changed else f"nothing changed ({counts})"


def file_stats(folder: Path) -> dict:
    out = {}
    for name, prefix in ((RUN_JSON, "run_json"), (LEDGER, "ledger")):
        try:
            st = (folder / name).stat()
        except OSError:
            out |= {f"{prefix}_size": None, f"{prefix}_mtime_ns": None}
            continue
        out |= {f"{prefix}_size": st.st_size, f"{prefix}_mtime_ns": st.st_mtime_ns}
    return out


def update(conn: Index, roots: Sequence[str | Path], full: bool = False,
           margins: Margins | None = None) -> Summary:
    """Index every run folder under `roots` (each an existing folder); `full`: read every
    folder again, changed or not; `margins`: the gate's kept answers' (None: built in)."""
    roots = [Path(r).resolve() for r in roots]
    summary, found = Summary(), {}
    for root in roots:
        where = scan(root)
        for folder in where.runs:
            found.setdefault(str(folder), str(root))
        summary.skipped += [(str(f), why) for f, why in where.skipped]
    known, model_of = {}, {}
    for folder, model, *stats, reader in conn.execute(
            f"SELECT folder, model, {', '.join(STAT_COLUMNS)}, reader FROM runs").fetchall():
        known[folder], model_of[folder] = (tuple(stats), reader), model
    for folder, root in sorted(found.items()):
        index_folder(conn, Path(folder), root, summary, known.get(folder), full)
    gone = sorted(f for f in known if f not in found
                  and any(Path(f).is_relative_to(r) for r in roots))
    if gone:
        with transaction(conn):
            for folder in gone:
                delete(conn, folder)
        summary.dropped = gone
    _gates(conn, [str(r) for r in roots], summary, model_of, found, margins, full)
    return summary


def _gates(conn: Index, roots: Sequence[str], summary: Summary, model_of: dict[str, str],
           found: dict[str, str], margins: Margins | None, full: bool) -> None:
    """The kept gate answers of the models whose folders changed, per root (the module's
    docstring)."""
    touched = summary.added + summary.updated + summary.dropped + [f for f, _ in summary.refused]
    now = dict(conn.execute("SELECT folder, model FROM runs").fetchall()) if touched else {}
    models: dict[str, set[str]] = {}
    for f in touched:
        root = found.get(f) or next((r for r in roots if Path(f).is_relative_to(r)), None)
        models.setdefault(root, set()).update(
            m for m in (model_of.get(f), now.get(f)) if m is not None)
    for root in roots:
        if full or not gate_store.has_any(conn, root, margins or gate_store.defaults()):
            gate_store.refresh(conn, root, margins)
        elif models.get(root):
            gate_store.refresh(conn, root, margins, models[root])


def index_folder(conn: Index, folder: Path, root: str, summary: Summary,
                 old: tuple | None = None, full: bool = False) -> None:
    """Bring one run folder's rows level (`old`: its (stats, reader) as the index holds them,
    None: not indexed yet); what happened goes into `summary`."""
    folder_ = str(folder)
    stats = file_stats(folder)
    if not full and old == (tuple(stats[c] for c in STAT_COLUMNS), rows.READER):
        summary.unchanged += 1
        return
    try:
        run_row, tests, figures, error = read(folder, root, stats)
    except RunFolderError as exc:
        summary.refused.append((folder_, str(exc)))
        if old is not None:
            with transaction(conn):
                delete(conn, folder_)
        return
    try:
        with transaction(conn):
            delete(conn, folder_)
            insert(conn, "runs", rows.RUN_COLUMNS, [run_row])
            insert(conn, "tests", rows.TEST_COLUMNS, tests)
            insert(conn, "figures", rows.FIGURE_COLUMNS, figures)
    except conn.IntegrityError as exc:        # rows the schema refuses: this folder only
        summary.refused.append((folder_, f"its rows break the index's schema ({exc}): "
                                         "rolled back, its old rows kept"))
        return
    (summary.added if old is None else summary.updated).append(folder_)
    if error:
        summary.unreadable.append((folder_, error))


def update_one(conn: Index, folder: str | Path, root: str | Path) -> Summary:
    """Bring one run folder under `root` level (a run indexing itself as its ledger grows:
    pts.index.live); a folder that is gone has its rows dropped."""
    folder, summary = Path(folder).resolve(), Summary()
    found = conn.execute(f"SELECT {', '.join(STAT_COLUMNS)}, reader FROM runs "
                         "WHERE folder = ?", (str(folder),)).fetchone()
    old = None if found is None else (tuple(found[:-1]), found[-1])
    if not (folder / RUN_JSON).is_file():
        if old is not None:
            with transaction(conn):
                delete(conn, str(folder))
            summary.dropped.append(str(folder))
        return summary
    index_folder(conn, folder, str(Path(root).resolve()), summary, old)
    if summary.added or summary.updated:    # a finished run may change its model's answer
        model, state = conn.execute("SELECT model, state FROM runs WHERE folder = ?",
                                    (str(folder),)).fetchone()
        if state == rows.FINISHED:
            gate_store.refresh(conn, str(Path(root).resolve()), None, [model])
    return summary


def read(folder: Path, root: str, stats: dict) -> tuple[dict, list, list, str | None]:
    """The rows of one run folder and, when its ledger could not be read, why (the run row
    then holds what run.json says). RunFolderError: run.json itself cannot be read."""
    try:
        run = load_run(folder)
        return (rows.run_row(run, root, stats), rows.test_rows(run), rows.figure_rows(run),
                None)
    except Exception as exc:          # a folder the reader chokes on: indexed as far as it reads
        error = str(exc) if isinstance(exc, RunFolderError) else f"{type(exc).__name__}: {exc}"
    info, device = run_json(folder)
    return rows.unreadable_row(str(folder), root, info, device, error, stats), [], [], error


def delete(conn: Index, folder: str) -> None:
    """A folder's rows (its tests and figures go with it: ON DELETE CASCADE)."""
    conn.execute("DELETE FROM runs WHERE folder = ?", (folder,))


def insert(conn: Index, table: str, columns: Sequence[str],
           found: Iterable[dict]) -> None:
    conn.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES "
                     f"({', '.join('?' * len(columns))})", params(columns, found))


def params(columns: Sequence[str], found: Iterable[dict]) -> Iterable[tuple]:
    return (tuple(row[c] for c in columns) for row in found)
