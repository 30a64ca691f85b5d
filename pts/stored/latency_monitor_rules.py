"""The OCP requirements that ask the latency monitor to be configurable (v2.7 LMLOG-6, LMLOG-14:
Set Features C5h resets the Active and Static Buckets; LMSF-10: the drive supports Save set to
1b), judged from what the suite did (pts.conditioning.latency_monitor: its latency_monitor
records, given to the rules by pts.stored.run_facts as f["run"]["latency_monitor"]).

A drive that refused the suite's Set Features C5h FAILs the three rows citing its words (the
text requires the feature set, LMLOG-12). Accepted, the rows are judged on the C3h page read at
the test's end: the configuration sent read back (thresholds, timer threshold, latency
configuration, window; the feature enabled), the Static Buckets all zero (the suite's timer
threshold, 7 days, is not reached in a test, so nothing moved them since the reset) and the
Active Bucket Timer no longer than the time since the Set Features (it restarted at the reset).
What the Active Buckets counted depends on the test's latencies and is not judged here. Not
sent (no --destructive, a device the safety check refuses, not a local NVMe drive) or a run
recorded before the suite sent it: NOT CHECKED saying so.

`with_page_after` gives the C3h rows of pts.stored.ocp_page_rules the page read at the test's
end in place of the test start's: the log the suite's own configuration produced.
"""

from __future__ import annotations

from pts.stored.host_rules import FAIL, NOT_CHECKED, PASS, V27, Evidence, rule

CHECKED = ("active_bucket_timer_threshold", "active_threshold_a", "active_threshold_b",
           "active_threshold_c", "active_threshold_d", "active_latency_configuration",
           "active_latency_minimum_window")
STATIC = tuple(f"static_bucket_counter_{n}" for n in range(4))
TIMER_UNIT_S = 300          # the Active Bucket Timer counts 5 minutes (LMDATA-3, line 2290)
AFTER = " (test end, after the suite's Set Features C5h)"


def _records(f: dict) -> tuple[dict | None, dict | None]:
    """The run's last configuration attempt and the page read after it (same test)."""
    found = f["run"]["latency_monitor"]
    sent = [r for r in found if r["action"] != "read after"]
    if not sent:
        return None, None
    last = sent[-1]
    after = [r for r in found[found.index(last):] if r["action"] == "read after"
             and r["test"] == last["test"]]
    return last, (after[0] if after else None)


def _unsent(sent: dict | None):
    """The verdict when the suite's configuration did not reach the drive, else None."""
    if sent is None:
        return NOT_CHECKED, "the suite sent no Set Features C5h in this run (it does so at a " \
            "test's start on a local NVMe drive under --destructive)", ()
    ev = (Evidence(sent["command"] or "pts.conditioning.latency_monitor",
                   "Set Features C5h", sent["refused"] or sent["why"] or sent["action"]),)
    if sent["action"] == "not sent":
        return NOT_CHECKED, f"the suite did not configure the latency monitor: {sent['why']}", ev
    if sent["action"] == "failed":
        return NOT_CHECKED, f"Set Features C5h failed before the drive answered: " \
            f"{sent['why']}", ev
    if sent["action"] == "refused":
        return FAIL, f"the drive refused the suite's Set Features C5h: {sent['refused']}, " \
            f"exit {sent['exit']} (the text asks the feature set, LMLOG-12)", ev
    return None


def _reset(f: dict):
    sent, after = _records(f)
    settled = _unsent(sent)
    if settled is not None:
        return settled
    ev_sent = Evidence(sent["command"], "Latency Monitoring Data Structure bytes 12:0",
                       sent["data"][:26])
    page = (after or {}).get("after") or {}
    if not page.get("decoded"):
        said = page.get("refused") or page.get("error") or "the test did not end"
        return NOT_CHECKED, f"Set Features C5h answered; log C3h after the test not read " \
            f"({said})", (ev_sent,)
    got = page["decoded"]["fields"]
    ev = (ev_sent, Evidence(page["command"] + AFTER, "log C3h bytes 12:0",
                            {n: got.get(n) for n in ("feature_status", *CHECKED)}))
    wrong = [f"{n} {got.get(n)} (sent {sent['values'][n]})" for n in CHECKED
             if got.get(n) != sent["values"][n]]
    if not (got.get("feature_status") or 0) & 1:
        wrong.append("feature_status bit 0 (enabled) clear")
    if wrong:
        return FAIL, "log C3h after the test does not hold the configuration sent: " + \
            ", ".join(wrong), ev
    seconds, timer = after["seconds"], got["active_bucket_timer"]
    statics = {n: got[n] for n in STATIC}
    ev += (Evidence(page["command"] + AFTER, "log C3h bytes 303:240 (Static Bucket Counters)",
                    statics),
           Evidence(page["command"] + AFTER, "log C3h bytes 3:2 (Active Bucket Timer)", timer))
    if seconds >= sent["values"]["active_bucket_timer_threshold"] * TIMER_UNIT_S:
        return NOT_CHECKED, f"the test ran {seconds} s, past the Active Bucket Timer " \
            "Threshold: the Static Buckets were loaded since the reset", ev
    loaded = [n for n, v in statics.items() if any(v.values())]
    if loaded:
        return FAIL, f"{', '.join(loaded)} not zero {seconds} s after the Set Features, the " \
            "timer threshold not reached: the Static Buckets were not reset", ev
    if timer * TIMER_UNIT_S > seconds + TIMER_UNIT_S:
        return FAIL, f"Active Bucket Timer {timer} (x 5 min) is longer than the {seconds} s " \
            "since the Set Features: it was not reset", ev
    return PASS, f"Set Features C5h answered; log C3h {seconds} s later holds the " \
        f"configuration sent, the Static Buckets all zero and the Active Bucket Timer {timer} " \
        "(x 5 min) within the time since: the buckets were reset", ev


def _save(f: dict):
    sent, _ = _records(f)
    settled = _unsent(sent)
    if settled is not None:
        return settled
    return PASS, "Set Features C5h with Save (SV) set answered, exit 0", (
        Evidence(sent["command"], "Dword 10 bit 31 (SV): --save", 1),)


rule(V27, "LMLOG-6", 2178)(_reset)
rule(V27, "LMLOG-14", 2207)(_reset)
rule(V27, "LMSF-10", 8216)(_save)


def with_page_after(facts: dict) -> dict:
    """`facts` with the C3h page read at the end of the test the suite configured (its command
    marked so) in place of the test start's, when there is one."""
    try:
        _, after = _records(facts)
    except KeyError:
        return facts
    if after is None or after.get("after") is None or "ocp_pages" not in facts:
        return facts
    page = dict(after["after"])
    page["command"] = (page.get("command") or "nvme get-log --log-id=0xc3") + AFTER
    return {**facts, "ocp_pages": {**facts["ocp_pages"], "C3h": page}}


def said(found: list[dict]) -> str | None:
    """What the suite did about the latency monitor in a run with `found` (its
    latency_monitor records as stored), in a sentence for the report's OCP page; None: no
    record (not a local NVMe drive, or a run recorded before the suite configured it)."""
    out = []
    for r in found:
        at = f"test {r['test']}"
        if r["action"] == "configured":
            out.append(f"{at}: Set Features C5h sent and answered (exit 0)")
        elif r["action"] == "refused":
            out.append(f"{at}: Set Features C5h sent, the drive refused it: {r['refused']}, "
                       f"exit {r['exit']} (the C3h rows judge the page read at test start)")
        elif r["action"] == "read after":
            page = r["after"] or {}
            got = "read" if page.get("decoded") else \
                f"not decoded ({page.get('refused') or page.get('error')})"
            out.append(f"{at}: log C3h {got} at test end, {r['seconds']} s later (the C3h "
                       "rows judge this page)")
        else:
            out.append(f"{at}: Set Features C5h {r['action']}: {r['why']}")
    if not out:
        return None
    return ("Latency monitor configured by the suite (the values of the text's factory "
            "defaults, enabled; pts/conditioning/latency_monitor.py) at each test's start: "
            + "; ".join(out) + ".")


__all__ = ["said", "with_page_after"]
