"""Where the index is: `--index` (an SQLite file or a postgresql:// URL), else the environment
variable PTS_INDEX (the same forms: a lab sets its database once per host), else the SQLite
file beside the one report folder (REPORTS_DIR/index.sqlite); and opening it, whichever it is.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from pts.index import db, postgres
from pts.index.schema import MIGRATIONS, Migration

ENV = "PTS_INDEX"


def resolve(reports_dirs: Sequence[str], given: str | None,
            environ: Mapping[str, str] = os.environ) -> str:
    """The index's file or URL: --index, else $PTS_INDEX, else beside the one REPORTS_DIR."""
    chosen = given or environ.get(ENV) or None
    if chosen:
        if "://" in chosen and not postgres.is_url(chosen):
            origin = "--index" if given else ENV
            raise db.IndexUnusable(f"{origin} {postgres.redact(chosen)}: an index is an SQLite "
                                   "file or a postgresql:// URL")
        return chosen
    if len(reports_dirs) > 1:
        raise db.IndexUnusable(f"{len(reports_dirs)} REPORTS_DIR given: say which index holds "
                               f"them with --index FILE or URL (e.g. --index "
                               f"{Path(reports_dirs[0]) / db.FILE_NAME}) or {ENV}")
    return str(Path(reports_dirs[0]) / db.FILE_NAME)


def find(given: str | None, environ: Mapping[str, str] = os.environ) -> str:
    """An index to read (compare/qualify --where, history): --index (an SQLite file, a report
    folder holding index.sqlite, or a postgresql:// URL), else $PTS_INDEX, else
    reports/index.sqlite. An SQLite file that is not there is refused: a reader never makes
    one."""
    chosen = given or environ.get(ENV) or str(Path("reports") / db.FILE_NAME)
    if postgres.is_url(chosen):
        return chosen
    path = Path(chosen)
    if path.is_dir():
        path = path / db.FILE_NAME
    if not path.is_file():
        raise db.IndexUnusable(f"no results index at {path}: make it with `python -m pts index "
                               "REPORTS_DIR`, or name it with --index FILE|URL|REPORTS_DIR")
    return str(path)


def connect(target: str, migrations: Sequence[Migration] = MIGRATIONS) -> db.Index:
    """The index at `target` (a file or a postgresql:// URL), migrated."""
    if postgres.is_url(target):
        return postgres.connect(target, migrations)
    return db.connect(target, migrations)


def shown(target: str) -> str:
    """The target as messages show it: a file resolved, a URL without its password."""
    return postgres.redact(target) if postgres.is_url(target) else str(Path(target).resolve())
