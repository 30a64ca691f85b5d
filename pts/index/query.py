"""Reading the index for a runs list (the dashboard's, pts.serve.indexed): the runs under one
report folder that pass a set of filters, newest first, a page at a time, with their tests;
the test names present; the newest run of each device; how many runs are in each state.

Filters are SQL (WHERE clauses over the indexed columns, parameters bound, never pasted into
the text), kept to what PostgreSQL takes too (lower() and LIKE ... ESCAPE, EXISTS, a window
function). Text filters are substrings, case-insensitive for ASCII letters (SQLite's lower()
folds ASCII only; `fold` does the same on the Python side so that a list read from the folders
filters alike). Dates are Unix seconds on `started_at` (run.json's `started`); a run without
a start time is left out by a date filter.

Order: newest first by `started_at`, ties by folder (descending). Runs with no `started_at`
(run.json without an ISO 8601 `started`, rare) are returned apart (`undated`): the dashboard
places them by the time it gives any folder (its folder name's stamp, else run.json's mtime).

`conn`: an open index (pts.index.db.connect): anything with execute(sql, params) -> cursor,
the SQL written with `?` placeholders.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# The columns of a runs-list row (runs table).
LIST_COLUMNS = ("folder", "model", "serial", "firmware", "host", "spec_name", "spec_title",
                "verdict", "compliant", "deviation_count", "state", "started", "started_at",
                "last_record_at", "emulated", "error", "run_json_mtime_ns")
TEXT_FILTERS = ("model", "serial", "firmware", "host")
COMPLIANT, NOT_COMPLIANT = "compliant", "not compliant"
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def fold(text: str) -> str:
    """Lower case for ASCII letters only, as SQLite's lower()."""
    return text.translate(_ASCII_LOWER)


@dataclass(frozen=True)
class Filters:
    """What a runs list is narrowed by; empty / None: not filtered."""

    model: str = ""          # substrings (fold)
    serial: str = ""
    firmware: str = ""
    host: str = ""
    test: str = ""           # a test the run has (exact name)
    verdict: str = ""        # COMPLIANT or NOT_COMPLIANT (a run with no verdict is neither)
    since: float | None = None     # started_at >= since
    before: float | None = None    # started_at < before
    states: tuple[str, ...] = ()   # index states (pts.index.rows: finished, unfinished, ...)


def where(root: str, f: Filters) -> tuple[str, list]:
    clauses, params = ["root = ?"], [root]
    for name in TEXT_FILTERS:
        value = getattr(f, name)
        if value:
            clauses.append(f"lower(COALESCE({name}, '')) LIKE ? ESCAPE '\\'")
            params.append("%" + _like(fold(value)) + "%")
    if f.test:
        clauses.append("EXISTS (SELECT 1 FROM tests t WHERE t.folder = runs.folder "
                       "AND t.name = ?)")
        params.append(f.test)
    if f.verdict:
        clauses.append("compliant = ?")
        params.append(f.verdict == COMPLIANT)
    if f.since is not None:
        clauses.append("started_at >= ?")
        params.append(f.since)
    if f.before is not None:
        clauses.append("started_at < ?")
        params.append(f.before)
    if f.states:
        clauses.append(f"state IN ({', '.join('?' * len(f.states))})")
        params += list(f.states)
    return " AND ".join(clauses), params


def _like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _rows(cursor) -> list[dict]:
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, r, strict=True)) for r in cursor]


def count(conn, root: str, f: Filters) -> int:
    """How many runs under `root` pass `f` (dated or not)."""
    sql, params = where(root, f)
    return conn.execute(f"SELECT COUNT(*) FROM runs WHERE {sql}", params).fetchone()[0]


def page(conn, root: str, f: Filters, limit: int | None,
         offset: int = 0) -> list[dict]:
    """The dated runs under `root` that pass `f`, newest first, `limit` (None: all) from
    `offset`."""
    sql, params = where(root, f)
    rest = " LIMIT ? OFFSET ?" if limit is not None else ""
    return _rows(conn.execute(
        f"SELECT {', '.join(LIST_COLUMNS)} FROM runs WHERE {sql} AND started_at IS NOT NULL "
        "ORDER BY started_at DESC, folder DESC" + rest,
        params + ([limit, offset] if limit is not None else [])))


def undated(conn, root: str, f: Filters) -> list[dict]:
    """The runs under `root` that pass `f` and have no start time (placed by the reader)."""
    sql, params = where(root, f)
    return _rows(conn.execute(f"SELECT {', '.join(LIST_COLUMNS)} FROM runs WHERE {sql} "
                              "AND started_at IS NULL", params))


def tests_of(conn, folders: Sequence[str]) -> dict[str, list[str]]:
    """Each folder's test names, in run order."""
    out: dict[str, list[str]] = {f: [] for f in folders}
    for chunk in _chunks(list(folders)):
        for folder, name in conn.execute(
                f"SELECT folder, name FROM tests WHERE folder IN ({', '.join('?' * len(chunk))}) "
                "ORDER BY folder, position", chunk):
            out[folder].append(name)
    return out


def stopping(conn, folders: Sequence[str]) -> set[str]:
    """The folders whose last record is a test_end that did not finish the test (interrupted
    or error: the session is ending), as pts.serve.state reads a run view."""
    out: set[str] = set()
    for chunk in _chunks(list(folders)):
        out.update(f for (f,) in conn.execute(
            "SELECT DISTINCT t.folder FROM tests t JOIN runs r ON r.folder = t.folder "
            f"WHERE t.folder IN ({', '.join('?' * len(chunk))}) AND t.ended_at IS NOT NULL "
            "AND t.state IN ('incomplete', 'error') "
            "AND t.ended_at >= COALESCE(r.last_record_at, 0)", chunk))
    return out


def test_names(conn, root: str) -> list[str]:
    return [n for (n,) in conn.execute(
        "SELECT DISTINCT t.name FROM tests t JOIN runs r ON r.folder = t.folder "
        "WHERE r.root = ? ORDER BY t.name", (root,))]


def newest_per_device(conn, root: str,
                      skip_states: Iterable[str] = ()) -> list[dict]:
    """The newest run (by started_at, then folder) of each (model, serial) under `root`,
    newest first; runs in `skip_states` are not candidates."""
    skip = list(skip_states)
    unless = f"AND state NOT IN ({', '.join('?' * len(skip))})" if skip else ""
    return _rows(conn.execute(
        f"SELECT {', '.join(LIST_COLUMNS)} FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY "
        "model, serial ORDER BY started_at DESC, folder DESC) AS n FROM runs "
        f"WHERE root = ? {unless}) AS ranked WHERE n = 1 ORDER BY started_at DESC, folder DESC",
        [root] + skip))


def by_state(conn, root: str, states: Iterable[str]) -> list[dict]:
    """Every run under `root` in one of the index states `states` (unordered)."""
    s = list(states)
    return _rows(conn.execute(f"SELECT {', '.join(LIST_COLUMNS)} FROM runs WHERE root = ? "
                              f"AND state IN ({', '.join('?' * len(s))})", [root] + s))


def state_counts(conn, root: str) -> dict[str, int]:
    return dict(conn.execute("SELECT state, COUNT(*) FROM runs WHERE root = ? GROUP BY state",
                             (root,)).fetchall())


def has_run(conn, folder: str) -> bool:
    return conn.execute("SELECT 1 FROM runs WHERE folder = ?", (folder,)).fetchone() is not None


def _chunks(items: list, size: int = 500) -> Iterable[list]:
    for n in range(0, len(items), size):
        yield items[n:n + size]


# -- a model's history (pts.index.history) ---------------------------------------------------

HISTORY_COLUMNS = ("folder", "run_id", "model", "serial", "firmware", "host", "spec_name",
                   "started", "started_at", "state", "verdict", "compliant", "ocp_version",
                   "ocp_pass", "ocp_fail", "ocp_not_applicable", "ocp_not_checked")


def _model_where(model: str, root: str | None, alias: str = "") -> tuple[str, list]:
    clause = f"{alias}model = ?" + (f" AND {alias}root = ?" if root is not None else "")
    return clause, [model] + ([root] if root is not None else [])


def model_runs(conn, model: str, root: str | None = None) -> list[dict]:
    """Every run of `model` (exact), under `root` (None: every report folder the index
    holds), unordered (the reader orders: SQLite and PostgreSQL place NULLs apart)."""
    sql, params = _model_where(model, root)
    return _rows(conn.execute(f"SELECT {', '.join(HISTORY_COLUMNS)} FROM runs WHERE {sql}",
                              params))


def model_figures(conn, model: str, root: str | None = None) -> list[dict]:
    """Every figure row of the runs of `model`, with its test's position in its run."""
    sql, params = _model_where(model, root, "r.")
    return _rows(conn.execute(
        "SELECT f.folder, f.test, f.metric, f.cell, f.position, f.unit, f.value, f.shown, "
        "f.host_bound, t.position AS test_position FROM figures f "
        "JOIN runs r ON r.folder = f.folder "
        "JOIN tests t ON t.folder = f.folder AND t.name = f.test "
        f"WHERE {sql}", params))


def models(conn, root: str | None = None) -> list[tuple[str, int]]:
    """The models the index holds (under `root`), each with its number of runs."""
    where_root, params = ("WHERE root = ? ", [root]) if root is not None else ("", [])
    return [(m, n) for m, n in conn.execute(
        f"SELECT model, COUNT(*) FROM runs {where_root}GROUP BY model ORDER BY model", params)]
