"""Where the index is: `--index` (an SQLite file or a postgresql:// URL), else the environment
variable PTS_INDEX (the same forms: a lab sets its database once per host), else the SQLite
file beside the one report folder (REPORTS_DIR/index.sqlite); and opening it, whichever it is.

One precedence (`place`) for every writer and reader of the index (pts index, history,
compare/qualify --where, a run's live index, the dashboard), and a refusal names where the
bad value came from and the fix for that source (as pytest-timeout's get_params does: option,
environment, default).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pts.index import db, postgres
from pts.index.schema import MIGRATIONS, Migration

ENV = "PTS_INDEX"
OPTION, DEFAULT = "--index", "default"       # and ENV: a Place's source
FORMS = "an SQLite file, a report folder holding index.sqlite or a postgresql:// URL"


@dataclass(frozen=True)
class Place:
    """The index's file or URL and where it was named: OPTION, ENV or DEFAULT."""
    where: str
    source: str

    def refusal(self, problem: str) -> db.IndexUnusable:
        """`problem` with where the value came from and the fix for that source."""
        if self.source == OPTION:
            came, fix = "from --index", f"give --index {FORMS}"
        elif self.source == ENV:
            came, fix = (f"from the environment variable {ENV}",
                         f"set {ENV} to {FORMS}, or unset it")
        else:
            came, fix = (f"the default, REPORTS_DIR/{db.FILE_NAME}",
                         f"name another with --index or {ENV} ({FORMS})")
        return db.IndexUnusable(f"{problem} ({came}): {fix}")


def place(given: str | None, default: str | Path | None,
          environ: Mapping[str, str] = os.environ) -> Place | None:
    """The index's place: --index (`given`), else $PTS_INDEX, else `default` (None: none)."""
    if given:
        return Place(given, OPTION)
    if environ.get(ENV):
        return Place(environ[ENV], ENV)
    return None if default is None else Place(str(default), DEFAULT)


def resolve(reports_dirs: Sequence[str], given: str | None,
            environ: Mapping[str, str] = os.environ) -> str:
    """The index's file or URL: --index, else $PTS_INDEX, else beside the one REPORTS_DIR."""
    one = Path(reports_dirs[0]) / db.FILE_NAME if len(reports_dirs) == 1 else None
    found = place(given, one, environ)
    if found is None:
        raise db.IndexUnusable(f"{len(reports_dirs)} REPORTS_DIR given: say which index holds "
                               f"them with --index FILE or URL (e.g. --index "
                               f"{Path(reports_dirs[0]) / db.FILE_NAME}) or {ENV}")
    if "://" in found.where and not postgres.is_url(found.where):
        raise found.refusal(f"{postgres.redact(found.where)} is not an index: an index is an "
                            "SQLite file or a postgresql:// URL")
    return found.where


def find(given: str | None, environ: Mapping[str, str] = os.environ) -> str:
    """An index to read (compare/qualify --where, history): --index (an SQLite file, a report
    folder holding index.sqlite, or a postgresql:// URL), else $PTS_INDEX, else
    reports/index.sqlite. An SQLite file that is not there is refused: a reader never makes
    one."""
    found = place(given, Path("reports") / db.FILE_NAME, environ)
    if postgres.is_url(found.where):
        return found.where
    path = Path(found.where)
    if path.is_dir():
        path = path / db.FILE_NAME
    if not path.is_file():
        raise found.refusal(f"no results index at {path}; make it with `python -m pts index "
                            "REPORTS_DIR`")
    return str(path)


def connect(target: str, migrations: Sequence[Migration] = MIGRATIONS) -> db.Index:
    """The index at `target` (a file or a postgresql:// URL), migrated."""
    if postgres.is_url(target):
        return postgres.connect(target, migrations)
    return db.connect(target, migrations)


def shown(target: str) -> str:
    """The target as messages show it: a file resolved, a URL without its password."""
    return postgres.redact(target) if postgres.is_url(target) else str(Path(target).resolve())
