"""Runs chosen by a query on the results index instead of by folder (`compare` and `qualify`
with `--where KEY=VALUE ... [--index FILE|URL|REPORTS_DIR]`, docs/index.md): the folders of
the indexed runs that match every term, oldest first.

A term is KEY=VALUE; KEY one of KEYS (the runs table's columns as the runs list names them).
The value matches exactly (case as written), or, with `*` in it, as a pattern (`*` any run of
characters: `firmware=GDC5*`). `verdict=compliant` / `verdict=not compliant`; `test=NAME`: the
run has that test. Without a `state=` term only finished runs are chosen (an unfinished or
unreadable run is compared or judged only when asked for).

The index is found by pts.index.target.find, as `pts history` finds it: --index (an SQLite
file, a report folder holding index.sqlite, or a postgresql:// URL), else $PTS_INDEX, else
reports/index.sqlite; an SQLite file that is not there is refused, never made here.
A chosen folder that is gone since it was indexed is refused with the fix (`pts index`).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pts.index import db, target
from pts.index.rows import FINISHED

# KEY -> the runs table's column
KEYS = {"model": "model", "serial": "serial", "firmware": "firmware", "host": "host",
        "spec": "spec_name", "run": "run_id", "state": "state", "verdict": "compliant",
        "test": None, "folder": "folder"}
VERDICTS = {"compliant": True, "not compliant": False}
COLUMNS = ("folder", "run_id", "model", "serial", "firmware", "host", "started", "state",
           "verdict", "compliant")
SHOWN = 10       # matches named in a "too many" message


class SelectError(Exception):
    """The query cannot be answered as asked; the message says why and the fix."""


@dataclass(frozen=True)
class Term:
    key: str
    value: str


def parse(terms: Sequence[str]) -> list[Term]:
    out = []
    for text in terms:
        key, sep, value = text.partition("=")
        key = key.strip().lower()
        if not sep or not value.strip():
            raise SelectError(f"--where {text!r}: give KEY=VALUE, e.g. --where model=X --where "
                              "firmware=Y")
        if key not in KEYS:
            raise SelectError(f"--where {text!r}: unknown key {key!r}; the keys are "
                              f"{', '.join(KEYS)}")
        value = value.strip()
        if key == "verdict" and value.lower() not in VERDICTS:
            raise SelectError(f"--where {text!r}: verdict is 'compliant' or 'not compliant'")
        out.append(Term(key, value))
    return out


def _like(value: str) -> str:
    return (value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            .replace("*", "%"))


def sql(terms: Sequence[Term]) -> tuple[str, list]:
    clauses, params = [], []
    for t in terms:
        if t.key == "test":
            clauses.append("EXISTS (SELECT 1 FROM tests t WHERE t.folder = runs.folder AND "
                           "t.name = ?)")
            params.append(t.value)
        elif t.key == "verdict":
            clauses.append("compliant = ?")
            params.append(VERDICTS[t.value.lower()])
        elif "*" in t.value:
            clauses.append(f"{KEYS[t.key]} LIKE ? ESCAPE '\\'")
            params.append(_like(t.value))
        else:
            clauses.append(f"{KEYS[t.key]} = ?")
            params.append(t.value)
    if not any(t.key == "state" for t in terms):
        clauses.append("state = ?")
        params.append(FINISHED)
    return " AND ".join(clauses) or "1 = 1", params


def _pattern(value: str) -> re.Pattern:
    return re.compile(".*".join(map(re.escape, value.split("*"))), re.DOTALL)


def matches(conn: db.Index, terms: Sequence[Term]) -> list[dict]:
    """The runs matching every term, oldest first (by run.json's start; runs without one
    last, by folder). A pattern is matched case-sensitively on both backends (SQLite's LIKE
    folds ASCII case, PostgreSQL's does not): LIKE narrows, the pattern decides."""
    clause, params = sql(terms)
    found = conn.rows(f"SELECT {', '.join(COLUMNS)}, started_at, spec_name FROM runs "
                      f"WHERE {clause}", params)
    for t in terms:
        if "*" in t.value and t.key not in ("test", "verdict"):
            keep = _pattern(t.value)
            found = [r for r in found if keep.fullmatch(str(r[KEYS[t.key]] or ""))]
    return sorted(found, key=lambda r: (r["started_at"] is None, r["started_at"] or 0,
                                        r["folder"]))


def describe(terms: Sequence[Term]) -> str:
    said = " ".join(f"--where {t.key}={t.value}" for t in terms)
    return said + ("" if any(t.key == "state" for t in terms) else " (finished runs)")


def line(r: dict) -> str:
    return (f"{r['model']} {r['serial']} firmware {r['firmware']}, run {r['run_id']} "
            f"({r['started'] or 'no start time'}, {r['state']}): {r['folder']}")


def choose(index: str | None, texts: Sequence[str], most: int, latest: int | None = None,
           what: str = "") -> tuple[list[str], str]:
    """(the chosen folders oldest first, the index as shown) for `texts` (KEY=VALUE terms):
    at least one, at most `most` (after `latest`: only the newest that many). SelectError
    when nothing or too many match, the index cannot be used, or a folder is gone."""
    terms = parse(texts)
    try:
        found_at = target.find(index)
        conn = target.connect(found_at)
    except db.IndexUnusable as exc:
        raise SelectError(str(exc)) from None
    try:
        found = matches(conn, terms)
    except db.IndexUnusable as exc:
        raise SelectError(str(exc)) from None
    finally:
        conn.close()
    shown = target.shown(found_at)
    if not found:
        hint = ("" if any(t.key == "state" for t in terms) else
                "; only finished runs are chosen unless --where state=unfinished (or "
                "unreadable) is given")
        raise SelectError(f"no indexed run matches {describe(terms)} in the index {shown}: "
                          "check the values as the runs list shows them (`*` matches any "
                          f"characters, e.g. firmware=GDC5*){hint}; a run not indexed yet: "
                          "`python -m pts index REPORTS_DIR`")
    if latest is not None:
        found = found[-latest:]
    if len(found) > most:
        listed = "\n  ".join(line(r) for r in found[-SHOWN:])
        more = f" (the newest {SHOWN} listed)" if len(found) > SHOWN else ""
        raise SelectError(f"{len(found)} indexed runs match {describe(terms)}: "
                          f"{what or f'at most {most} are taken'}{more}:\n  {listed}\nnarrow "
                          "the query (e.g. --where serial=..., --where run=RUN_ID) or take the "
                          f"newest with --latest {most}")
    gone = [r["folder"] for r in found if not Path(r["folder"]).is_dir()]
    if gone:
        raise SelectError(f"the index {shown} names run folders that are gone: "
                          f"{', '.join(gone)}; bring it level with `python -m pts index "
                          "REPORTS_DIR` and ask again")
    return [r["folder"] for r in found], shown


def add_arguments(p: argparse.ArgumentParser, what: str, most: int | None) -> None:
    """--where / --index / --latest (and --max-runs when `most`): runs chosen on the index."""
    p.add_argument("--where", action="append", default=[], metavar="KEY=VALUE",
                   help=f"choose the {what} from the results index: every term must match "
                        f"({', '.join(KEYS)}; exact, `*` any characters: "
                        "firmware=GDC5*; verdict=compliant|not compliant; test=NAME: the run "
                        "has it); only finished runs unless a state= term is given; oldest "
                        "first, after any RUN_DIR given")
    p.add_argument("--index", metavar="FILE|URL|REPORTS_DIR", default=None,
                   help="the results index --where reads: an SQLite file, a report folder "
                        "holding index.sqlite, or postgresql://USER@HOST/DATABASE. Default: "
                        "$PTS_INDEX if set, else reports/index.sqlite")
    p.add_argument("--latest", type=int, metavar="N", default=None,
                   help="with --where: only the newest N runs that match")
    if most is not None:
        p.add_argument("--max-runs", type=int, metavar="N", default=most,
                       help=f"with --where: refuse a query that matches more runs than this "
                            f"(default {most}; narrow it, or --latest N)")


def from_args(args: argparse.Namespace, most: int, what: str) -> list[str]:
    """The folders --where chooses (SelectError: none, too many, no index; with the fix)."""
    if args.latest is not None and args.latest < 1:
        raise SelectError("--latest N: N is 1 or more")
    folders, shown = choose(args.index, args.where, most, args.latest, what)
    print(f"{len(folders)} run{'s' * (len(folders) != 1)} from the index {shown} "
          f"({describe(parse(args.where))}):\n  " + "\n  ".join(folders),
          file=sys.stderr)
    return folders
