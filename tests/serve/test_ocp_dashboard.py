"""The dashboard's run page shows every requirement ID of the newest OCP Datacenter NVMe SSD
text judged on the run (pts.stored.ocp_every_id: the same verdicts as `qualify --ocp` and the
report's OCP page), grouped as the report's page: the counts; each PASS and FAIL in a row under
its group's heading with the group's counts; every group's counts; the NOT APPLICABLE and NOT
CHECKED IDs folded, one <details> per reason, so that no table of ~1,700 rows is open when the
page loads. Every cell from the run's stored data; none for a run on the emulated SSD."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest
from starlette.testclient import TestClient

from pts.config.ocp_all_ids import all_ids
from pts.serve.app import create_app
from pts.stored import ocp_every_id
from pts.stored.data import load_run
from tests.support.ocp_run import add_host_facts
from tests.support.serve_runs import make, unfinished
from tests.support.synthetic.drive_logs import growing, recorded_counters

RID = "KIOXIA_CD8/20261110T000000"
JUDGED = ("id", "requirement", "verdict", "reason", "evidence", "readings", "line")
FOLDED = ("id", "requirement", "evidence", "readings", "line")


@pytest.fixture
def root(monkeypatch, tmp_path):
    """The KIOXIA CD8's recorded logs as a run's counters, and QEMU 10's recorded host facts
    (its nvme_facts record): verdicts by the table, by host rules and by class."""
    root = tmp_path / "reports"
    folder = make(root, RID, counters=growing(recorded_counters(monkeypatch, tmp_path,
                                                                "kioxia-cd8")),
                  counters_source="smart-log")
    add_host_facts(folder, tmp_path / "facts")
    return root


class Page(HTMLParser):
    """The OCP section of a run page: the ID rows (cells, the <details> they are folded in:
    None when shown, else its data-verdict and summary), the judged table's group headings,
    the groups' counts table, every <details> with whether it is open."""

    def __init__(self, page: str):
        super().__init__(convert_charrefs=True)
        self.rows: dict[str, list[dict]] = {}
        self.headings: list[str] = []
        self.groups: dict[str, list[str]] = {}
        self.details: list[dict] = []
        self._open: list[dict] = []
        self._text: list[str] | None = None
        self._row: dict | None = None
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "details":
            self._open.append({"id": a.get("id"), "verdict": a.get("data-verdict"),
                               "open": "open" in a, "summary": ""})
            self.details.append(self._open[-1])
        elif tag == "summary" or (tag in ("td", "th") and self._row is not None):
            self._text = []
        elif tag == "tr" and (a.get("data-id") or a.get("data-group")):
            self._row = {"id": a.get("data-id"), "group": a.get("data-group"), "cells": [],
                         "heading": a.get("class") == "ocp-group",
                         "folded": self._open[-1] if self._open else None}

    def handle_endtag(self, tag):
        if tag == "details":
            self._open.pop()
        elif tag == "summary" and self._text is not None:
            self._open[-1]["summary"] = " ".join("".join(self._text).split())
            self._text = None
        elif tag in ("td", "th") and self._text is not None:
            self._row["cells"].append(" ".join("".join(self._text).split()))
            self._text = None
        elif tag == "tr" and self._row is not None:
            r, self._row = self._row, None
            if r["heading"]:
                self.headings.append(r["cells"][0])
            elif r["id"]:
                self.rows.setdefault(r["id"], []).append(r)
            else:
                self.groups[r["group"]] = r["cells"]

    def handle_data(self, data):
        if self._text is not None:
            self._text.append(data)


def text(s: str) -> str:
    return " ".join(s.split())


def shown(client, rid=RID) -> tuple[str, Page]:
    page = client.get(f"/runs/{rid}").text
    return page, Page(page)


def test_every_id_once_with_the_runs_verdict_grouped_and_folded(root):
    with TestClient(create_app([root])) as client:
        page, p = shown(client)
    every = ocp_every_id.judge_every(load_run(root / RID), "2.7")
    assert all(every.counts.values())              # each verdict is there to be shown
    assert [r for r, rows in p.rows.items() if len(rows) != 1] == []       # each ID once
    assert sorted(p.rows) == sorted(e.id for e in all_ids("2.7"))
    assert len(p.rows) == len(every.verdicts) == 1717
    by_reason: dict[tuple[str, str], int] = {}
    for v in every.verdicts:
        (row,) = p.rows[v.id]
        e = v.entry
        if v.verdict in ("PASS", "FAIL"):         # shown, in the judged table
            assert row["folded"] is None, v.id
            assert dict(zip(JUDGED, row["cells"], strict=True)) == {
                "id": v.id, "requirement": text(e.subject), "verdict": v.verdict,
                "reason": text(v.reason), "evidence": text("; ".join(v.evidence)),
                "readings": text("; ".join(v.readings)), "line": str(e.at)}, v.id
        else:                                     # folded under its verdict and reason
            folded = row["folded"]
            assert (folded["verdict"], folded["open"]) == (v.verdict, False), v.id
            n = sum(w.verdict == v.verdict and w.reason == v.reason for w in every.verdicts)
            assert folded["summary"] == f"{n}: {text(v.reason)}", v.id
            assert dict(zip(FOLDED, row["cells"], strict=True)) == {
                "id": v.id, "requirement": text(e.subject),
                "evidence": text("; ".join(v.evidence)),
                "readings": text("; ".join(v.readings)), "line": str(e.at)}, v.id
            by_reason[v.verdict, v.reason] = n
    reasons = [d for d in p.details if d["verdict"]]
    assert len(reasons) == len(by_reason)          # one <details> per reason, none twice
    assert not any(d["open"] for d in p.details)   # nothing folded is open on load
    # the counts, as qualify --ocp's last line and the report's page give them
    assert f"<b>{every.counts_text}</b> of the 1717 requirement IDs of the text, in 172 " \
        "groups" in page
    for word in ("NOT APPLICABLE", "NOT CHECKED"):
        assert f"<h3>{every.counts[word]} {word}, by reason" in page
    assert "(not final" not in page


def test_the_groups_with_their_counts(root):
    """The judged table under each group's heading (its counts per verdict); every group of
    the text in the folded counts table, as the report's page and qualify's '==' lines."""
    with TestClient(create_app([root])) as client:
        _, p = shown(client)
    every = ocp_every_id.judge_every(load_run(root / RID), "2.7")
    assert list(p.groups) == [g for g, _, _ in every.groups]
    judged_groups = []
    for group, about, vs in every.groups:
        counts = ocp_every_id.count(vs)
        assert p.groups[group] == [group, about, str(len(vs)), *map(str, counts.values())]
        if counts["PASS"] or counts["FAIL"]:
            judged_groups.append(f"{group} ({about}): {ocp_every_id.counts_text(vs)}")
    assert p.headings == judged_groups and len(judged_groups) > 5
    (groups,) = [d for d in p.details if d["id"] == "ocp-groups"]
    assert groups == {"id": "ocp-groups", "verdict": None, "open": False,
                      "summary": "Counts per group: the text's 172 groups"}


def test_the_cells_carry_the_ledgers_figures(root):
    """Read from the ledger itself, not through the verdicts: the C0h counter and the
    purge's time stand in their rows; a host rule's evidence is the recorded Identify's."""
    ledger = [json.loads(line) for line in (root / RID / "ledger.jsonl").open()]
    first = next(r for r in ledger if r["type"] == "device_counters")
    purge = next(r for r in ledger if r["type"] == "purge")
    facts = next(r for r in ledger if r["type"] == "nvme_facts")
    written = first["counters"]["ocp_c0"]["fields"]["physical_media_units_written"]
    with TestClient(create_app([root])) as client:
        _, p = shown(client)

    def row(rid):
        (r,) = p.rows[rid]
        return dict(zip(JUDGED if r["folded"] is None else FOLDED, r["cells"], strict=True))
    assert f"physical_media_units_written = {written:,}" in row("SMART-1")["evidence"]
    assert row("SMART-1")["verdict"] == "PASS"
    assert f"took {purge['seconds']:.1f} s: FAIL" in row("CTO-8")["evidence"]
    assert row("SMART-27")["reason"] == "log page version 3, not 6"
    assert row("NUSE-1")["readings"].startswith("reading: NUSE read from C0h's Total NUSE")
    assert row("PWR-1")["verdict"] == "PASS"
    assert row("PWR-1")["reason"].endswith(f"(facts read at {facts['moment']})")


def test_a_running_run_says_its_verdicts_are_not_final(tmp_path):
    root = tmp_path / "reports"
    unfinished(root, "Live_SN/20261111T000000", age=None)
    with TestClient(create_app([root])) as client:
        page, p = shown(client, "Live_SN/20261111T000000")
    assert "groups (not final: running)," in page
    assert len(p.rows) == 1717


def test_no_ocp_verdicts_for_the_emulated_ssd(tmp_path):
    root = tmp_path / "reports"
    make(root, "Emu_SN/20261112T000000", emulated=True)
    with TestClient(create_app([root])) as client:
        page, p = shown(client, "Emu_SN/20261112T000000")
    assert 'id="ocp-counts"' not in page and "OCP requirements" not in page
    assert p.rows == {} and p.details == []
