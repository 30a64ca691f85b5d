"""The host facts a stored run recorded (pts.conditioning.host_facts_step, issue 49 §3): the
drive's facts for the host rules (the run's last nvme_facts record that read them; judged by
pts.stored.host_judge.judge(record.facts, version)) and the FDP WAF of each round, from the
FDP Statistics log (22h) read before and after it: media bytes with metadata written over
host bytes with metadata written in that window (pts.stored.fdp_rules.waf_windows).
Stored data only (RunView.records).
"""

from __future__ import annotations

from pts.results import records
from pts.stored.fdp_rules import waf_windows
from pts.stored.model import RunView
from pts.tools.nvme_facts import FactsError


def facts(run: RunView) -> records.NvmeFacts | None:
    """The run's last nvme_facts record that read the facts (`error` null), or None (not
    an NVMe drive, a run recorded before facts were read, or every read failed)."""
    found = [r for r in run.records_of(records.NvmeFacts) if r.error is None and r.facts]
    return found[-1] if found else None


def fdp_rounds(run: RunView) -> list[dict]:
    """The FDP WAF of each round of each test, in ledger order: {test, round, window
    ("after round 2 -> after round 3"), host_bytes, media_bytes, waf, hbmw, mbmw (the counters
    at both ends), note}. The window runs from the test's previous reading (after WIPC, or
    after the round before) to the one after the round. `waf` None with `note` saying why when
    the host wrote nothing in it, a reading at either end failed (its error), or the counters
    went down in it (an FDP reset)."""
    out = []
    by_test: dict[str | None, list[records.FdpStatistics]] = {}
    for r in run.records_of(records.FdpStatistics):
        if r.when == "test start":          # a (resumed) test starts its readings again
            by_test[r.test] = []
        by_test.setdefault(r.test, []).append(r)
        readings = by_test[r.test]
        if r.round is None or len(readings) < 2:
            continue
        before = readings[-2]
        row = {"test": r.test, "round": r.round, "window": f"{before.when} -> {r.when}",
               "host_bytes": None, "media_bytes": None, "waf": None, "hbmw": None,
               "mbmw": None, "note": None}
        unread = [f"{x.when}: {x.error}" for x in (before, r) if x.stats is None]
        if unread:
            row["note"] = "log 22h not read at " + "; ".join(unread)
        else:
            try:
                (window,) = waf_windows([(before.when, before.stats), (r.when, r.stats)])
            except FactsError as exc:
                row["note"] = str(exc)
            else:
                row.update(window, hbmw=list(window["hbmw"]), mbmw=list(window["mbmw"]))
                if window["waf"] is None:
                    row["note"] = "the host wrote nothing in the window"
        out.append(row)
    return out
