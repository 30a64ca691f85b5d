"""Run folders for the dashboard's tests (synthetic ones from
tests/support/synthetic/runfactory.py) and a
small parser of its pages."""

from __future__ import annotations

import json
import os
import time
from html.parser import HTMLParser
from pathlib import Path

from tests.support.synthetic.runfactory import STEADY_CURVE, build_run

OLD = 10 * 24 * 3600            # seconds: a run not written for this long has stopped


def make(root: Path, rel: str, *, model: str | None = None, serial: str | None = None,
         emulated: bool = False, age: float | None = OLD, report: bool = True,
         max_rounds: int | None = None, **options) -> Path:
    """build_run under root/rel, its device renamed; its files made `age` seconds old (None:
    written now); a stand-in report.pdf written after the ledger when `report`."""
    parent, name = (root / rel).parent, (root / rel).name
    folder = build_run(parent, name, emulated=emulated, **options)
    info = json.loads((folder / "run.json").read_text())
    info["device"].update({k: v for k, v in (("model", model), ("serial", serial)) if v})
    (folder / "run.json").write_text(json.dumps(info, indent=2))
    if max_rounds is not None:
        set_max_rounds(folder, max_rounds)
    if report:
        (folder / "report.pdf").write_bytes(b"%PDF-1.4 stand-in " + rel.encode())
    if age is not None:
        set_age(folder, age)
    return folder


def set_max_rounds(folder: Path, n: int) -> None:
    lines = (folder / "ledger.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["parameters"]["max_rounds"] = n
    (folder / "ledger.jsonl").write_text("\n".join([json.dumps(first)] + lines[1:]) + "\n")


def set_age(folder: Path, seconds: float) -> None:
    """Every file of the folder last written `seconds` ago (report.pdf a second later)."""
    t = time.time() - seconds
    for path in folder.iterdir():
        if path.is_file():
            os.utime(path, (t + (path.name == "report.pdf"),) * 2)


def append(folder: Path, **record) -> None:
    with (folder / "ledger.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"time": time.time()} | record) + "\n")


def round_record(number: int, tracking: dict) -> dict:
    """An IOPS round's ledger record (to `append`): its tracking values, not yet steady."""
    return {"type": "round", "test": "iops", "round": number, "tracking": tracking,
            "steady_state": {k: None for k in tracking}, "steady": False}


def unfinished(root: Path, rel: str, rounds: int = 4, **kw) -> Path:
    """An IOPS test with `rounds` of its 25 rounds done and no test_end."""
    return make(root, rel, curve=STEADY_CURVE[:rounds], finished=False, max_rounds=25,
                report=False, **kw)


class Rows(HTMLParser):
    """The runs list: per row's data-id, its cell texts."""

    def __init__(self, page: str):
        super().__init__(convert_charrefs=True)
        self.rows: dict[str, list[str]] = {}
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        if tag == "tr" and dict(attrs).get("data-id"):
            self._row = self.rows.setdefault(dict(attrs)["data-id"], [])
        elif tag == "td" and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "td" and self._cell is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr":
            self._row = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


COLUMNS = ("pick", "run", "device", "serial", "spec", "tests", "state", "verdict", "deviations",
           "started", "ended")


def table(page: str) -> dict[str, dict[str, str]]:
    """The runs list as {id: {column: text}} (an error row: its error under "verdict")."""
    out = {}
    for rid, cells in Rows(page).rows.items():
        names = COLUMNS if len(cells) == len(COLUMNS) else \
            COLUMNS[:7] + ("verdict",) + COLUMNS[9:]
        out[rid] = dict(zip(names, cells, strict=True))
    return out
