"""The OCP power verdicts (pts.stored.power_rules, issue 51 §4), each rule and threshold from
both sides, on CONSTRUCTED facts: the round_power and power_source records as a run stores
them (the records' own to_json), under facts["run"]["power"] (the contract with
pts.stored.run_facts), beside host facts holding two power state descriptors."""

from __future__ import annotations

import pytest

from pts.results import records
from pts.stored import host_judge
from pts.stored.host_rules import FAIL, NOT_CHECKED, PASS
from pts.stored.power_rules import change_count, drive_against_meter, max_average

STATES = [{"state": 0, "mp": 2500, "flags": 0, "watts": 25.0, "non_operational": False},
          {"state": 1, "mp": 1200, "flags": 0, "watts": 12.0, "non_operational": False}]


def source(name="drive", measures="drive", window_s=1.0, sample_s=0.002, interval_s=1.0,
           error=None) -> dict:
    return records.PowerSourceInfo(
        test=None, name=name, measures=measures, interval_s=interval_s, kind="power",
        detail="constructed", error=error, window_s=window_s, sample_s=sample_s).to_json()


def round_(n, name="drive", max_w=20.0, mean_w=10.0, covered_s=300.0, counts=(3, 3)) -> dict:
    return records.RoundPower(
        test="iops", round=n, source=name, start=1000.0 + 400 * n, end=1300.0 + 400 * n,
        energy_j=mean_w * covered_s, covered_s=covered_s, mean_w=mean_w, samples=300, gaps=[],
        max_w=max_w, state_counts=list(counts) if counts else None).to_json()


def facts(rounds=(), sources=None, state=0, run=True) -> dict:
    f = {"id_ctrl": {"psds": STATES}, "feature_02h": state}
    if run:
        f["run"] = {"power": {"rounds": list(rounds), "points": [],
                              "sources": [source()] if sources is None else list(sources)}}
    return f


THREE = [round_(n) for n in (1, 2, 3)]          # 900 s covered, 20 W the largest reading


def test_max_average_passes_at_the_maximum_and_fails_above_it():
    verdict, why, ev = max_average(facts(THREE[:2] + [round_(3, max_w=25.0)]))
    assert verdict == PASS, why
    assert "largest 1 s average 25 W (drive, iops round 3) against power state 0's Maximum " \
        "Power 25 W: not above it, over 900 s in 3 round(s)" == why
    assert [e.value for e in ev][:2] == [0, 25.0]
    verdict, why, _ = max_average(facts(THREE[:2] + [round_(3, max_w=25.01)]))
    assert verdict == FAIL and why.endswith("above it")
    verdict, why, _ = max_average(facts(THREE, state=1))          # state 1: 12 W
    assert verdict == FAIL and "power state 1's Maximum Power 12 W" in why


def test_max_average_needs_15_minutes_for_a_pass_but_not_for_a_fail():
    short = THREE[:2] + [round_(3, covered_s=299.0)]
    verdict, why, _ = max_average(facts(short))
    assert verdict == NOT_CHECKED and "over 899 s of the 900 s (15 minutes)" in why
    verdict, _, _ = max_average(facts([round_(1, max_w=26.0, covered_s=100.0)]))
    assert verdict == FAIL


@pytest.mark.parametrize("src, reason", [
    (source(sample_s=0.0021), "drive samples every 2.1 ms, slower than the 2 ms PCM-1 asks"),
    (source(sample_s=None), "at a rate it does not state"),
    (source(window_s=None), "drive gives instants, not 1 s averages"),
    (source(interval_s=2.0), "drive is read every 2 s"),
    (source(measures="server"), "drive measures server, not the drive"),
    (source(error="no reply"), "drive could not be started (no reply)"),
])
def test_max_average_is_not_checked_when_the_source_samples_unlike_pcm_1(src, reason):
    verdict, why, _ = max_average(facts(THREE, sources=[src]))
    assert verdict == NOT_CHECKED and reason in why, why
    assert why.startswith("no source measures the drive as PCM-1 asks")


def test_max_average_is_not_checked_without_run_facts_sources_or_a_steady_state():
    assert max_average(facts(run=False))[0:2] == (
        NOT_CHECKED, "judged from the run's power readings (facts['run']['power']), which were "
        "not given with these facts")
    assert "no power source was read" in max_average(facts([]))[1]
    assert "power_source records of drive were not given" in max_average(
        facts(THREE, sources=[]))[1]
    changed = THREE[:2] + [round_(3, counts=(3, 4))]
    verdict, why, _ = max_average(facts(changed))
    assert verdict == NOT_CHECKED and "Power State Change Count 3 -> 4" in why
    no_ident = facts(THREE)
    del no_ident["id_ctrl"]
    assert max_average(no_ident)[:2] == (NOT_CHECKED, "not read in this run: id_ctrl")


def test_change_count_only_increases():
    up = [round_(1, counts=(3, 3)), round_(2, counts=(3, 5)), round_(3, counts=(5, 6))]
    verdict, why, ev = change_count(facts(up))
    assert verdict == PASS and "3 -> 6: 3 change(s) counted" in why and ev[0].value == [3, 6]
    verdict, why, _ = change_count(facts([round_(1, counts=(3, 5)), round_(2, counts=(4, 6))]))
    assert verdict == FAIL and "5 before iops round 2, 4 in it" in why
    assert change_count(facts([round_(1, counts=(5, 4))]))[0] == FAIL
    verdict, why, _ = change_count(facts([round_(1, counts=None)]))
    assert verdict == NOT_CHECKED and "--power drive" in why


def meter_round(n, mean_w):
    return round_(n, name="meter:m", mean_w=mean_w, max_w=None, counts=None)


METER = source("meter:m", measures="drive", window_s=None, sample_s=None)


def test_drive_against_meter_within_and_beyond_the_tolerance():
    at_edge = [round_(1, mean_w=10.0), meter_round(1, 11.0)]      # 1/11: 9.1 %
    verdict, why, _ = drive_against_meter(facts(at_edge, sources=[source(), METER]))
    assert verdict == PASS and "within 10%" in why and "9.1% apart" in why
    exact = [round_(1, mean_w=9.0), meter_round(1, 10.0)]          # 10.0 %: not beyond
    assert drive_against_meter(facts(exact, sources=[source(), METER]))[0] == PASS
    beyond = [round_(1, mean_w=10.0), meter_round(1, 11.2), round_(2), meter_round(2, 10.0)]
    verdict, why, _ = drive_against_meter(facts(beyond, sources=[source(), METER]))
    assert verdict == FAIL and "10 W by the drive, 11.2 W by meter:m in iops round 1" in why


def test_drive_against_meter_needs_both_on_the_drive_and_a_round_in_common():
    verdict, why, _ = drive_against_meter(facts(THREE))
    assert verdict == NOT_CHECKED and "this run has drive (drive)" in why
    elsewhere = source("meter:m", measures="meter", window_s=None, sample_s=None)
    verdict, why, _ = drive_against_meter(facts([round_(1), meter_round(1, 10.0)],
                                                sources=[source(), elsewhere]))
    assert verdict == NOT_CHECKED and "meter:m (meter)" in why
    apart = [round_(1), meter_round(2, 10.0)]
    assert "no round both read" in drive_against_meter(facts(apart, sources=[source(), METER]))[1]


def test_the_rules_are_keyed_by_version_and_id_where_each_text_states_them():
    for version, ids in (("2.7", {"PCM-1", "PCM-4", "PWR-3", "SMART-31", "SMART-47"}),
                         ("2.0", {"PCM-1", "PWR-3", "SMART-31"})):
        got = {v.req_id: v for v in host_judge.judge(facts(THREE), version)}
        assert ids <= set(got), version
        assert got["PCM-1"].verdict == PASS and got["PWR-3"].verdict == PASS
    v20 = {v.req_id for v in host_judge.judge(facts(THREE), "2.0")}
    assert not {"PCM-4", "SMART-47"} & v20
    lines = {(v.version, v.req_id): v.line for v in host_judge.judge(facts(THREE), "2.0")
             + host_judge.judge(facts(THREE), "2.7")}
    assert lines[("2.7", "PCM-1")] == 9880 and lines[("2.0", "PCM-1")] == 86
    assert lines[("2.0", "SMART-31")] == 21 and lines[("2.7", "SMART-47")] == 1666


def test_a_stored_runs_power_records_reach_the_rules_through_run_facts(tmp_path):
    """tests/support/powered_run's run (constructed records: the emulated SSD's model, an
    energy counter on the drive, whose round_power records it holds, and a BMC on the
    server): pts.stored.run_facts gives the rules its rounds and sources; the rounds'
    source is not one PCM-1 can judge from, named with why."""
    from pts.stored.data import load_run
    from pts.stored.run_facts import run_facts
    from tests.support import powered_run
    run = run_facts(load_run(powered_run.build(tmp_path / "run")))
    assert {s["name"] for s in run["power"]["sources"]} == {powered_run.FIRST,
                                                            powered_run.SECOND}
    f = facts()
    f["run"] = run
    verdict, why, _ = max_average(f)
    assert verdict == NOT_CHECKED and why == (
        "no source measures the drive as PCM-1 asks (1 s averages sampled at 2 ms or less, "
        "read every second): emulated gives a counter, not 1 s averages")   # its rounds'
    assert drive_against_meter(f)[1].endswith("this run has emulated (drive)")
