"""The OCP power requirements a run's power readings decide (issue 51 §4): the largest 1 s
average power against the Maximum Power of the power state in use (PCM-1, PWR-3, PCM-4), the
Power State Change Count over the run (SMART-31), and the drive's own reading against a meter
on the drive (SMART-47). Judged from the run's power records (pts.stored.run_facts puts them
in facts["run"]["power"]: "rounds" and "points", the round_power and point_power records as
stored, and "sources", the power_source records) beside the drive's host facts (Identify's
power state descriptors, Get Features 02h). NOT CHECKED, saying why, where no source allows a
verdict: no run facts, no source, or a source that does not measure what the rule needs
(the drive, in 1 s averages sampled at 2 ms or less). Rules are added to
pts.stored.host_rules.RULES; pts.stored.host_judge applies them.

Keyed by (version, ID) where each text states the requirement: v2.7 by the line of its
Markdown, v2.0 by the page of its r21 PDF (PCM-1 p. 86, PWR-3 p. 87, SMART-31 p. 21; v2.0 has
no PCM-4 and no C0h power fields, SMART-46..48).
"""

from __future__ import annotations

from pts.stored.host_rules import FAIL, FEAT_02, ID_CTRL, NOT_CHECKED, PASS, V27, Evidence, rule

V20 = "2.0"
DRIVE = "drive"                    # a source's `measures` (pts.power.source.DRIVE)
# PCM-1: "measured over a 1 second window with a sampling rate of 2 ms or less. The
# measurement duration shall be at least 15 minutes" [2.7 L9880-9882; 2.0 p. 86]
WINDOW_S, SAMPLE_S, DURATION_S = 1.0, 0.002, 15 * 60
# SMART-47 states no accuracy for the drive's reading [2.7 L1666-1678]: this project's
# tolerance between the drive's mean W and a meter's on the drive over the same round (what
# the meter misses, a rail it is not on, shows as a difference beyond it).
DRIVE_METER_TOLERANCE = 0.10
RECORDS = "round_power records"


class _Unjudged(Exception):
    """A rule that cannot judge: its message is the NOT CHECKED reason."""


def _power(f: dict) -> tuple[list[dict], dict[str, dict]]:
    """The run's round_power records and its power sources by name."""
    if "run" not in f:
        raise _Unjudged("judged from the run's power readings (facts['run']['power']), which "
                        "were not given with these facts")
    power = f["run"].get("power") or {}
    rounds = power.get("rounds") or []
    if not rounds:
        raise _Unjudged("no power source was read in this run (--power): no power reading")
    return rounds, {s["name"]: s for s in power.get("sources") or []}


def _sources_needed(rounds: list[dict], sources: dict[str, dict]) -> list[dict]:
    names = list(dict.fromkeys(r["source"] for r in rounds))
    missing = [n for n in names if n not in sources]
    if missing:
        raise _Unjudged(f"the run's power_source records of {', '.join(missing)} were not given "
                        f"(what each measures and how)")
    return [sources[n] for n in names]


def unfit(source: dict) -> str | None:
    """Why `source` (a power_source record) does not give what PCM-1 measures: the drive's
    power in 1 s averages sampled at 2 ms or less, read every second; None: it does."""
    name, window, sample = source["name"], source.get("window_s"), source.get("sample_s")
    if source.get("error"):
        return f"{name} could not be started ({source['error']})"
    if not str(source.get("measures", "")).startswith(DRIVE):
        return f"{name} measures {source.get('measures') or 'nothing named'}, not the drive"
    if window != WINDOW_S:
        return f"{name} gives {'instants' if source.get('kind') == 'power' else 'a counter'}" \
               f", not 1 s averages"
    if sample is None:
        return (f"{name}'s 1 s averages are made of samples at a rate it does not state (its "
                f"IPMSR); PCM-1 asks 2 ms or less")
    if sample > SAMPLE_S:
        return f"{name} samples every {sample * 1000:g} ms, slower than the 2 ms PCM-1 asks"
    if source["interval_s"] > WINDOW_S:
        return (f"{name} is read every {source['interval_s']:g} s: most 1 s windows are not "
                f"seen")
    return None


def _state(f: dict) -> tuple[int, float, tuple[Evidence, ...]]:
    psds, current = f["id_ctrl"]["psds"], f["feature_02h"]
    state = current & 0x1F
    if state >= len(psds):
        raise _Unjudged(f"the power state in use, {state}, has no descriptor ({len(psds)})")
    watts = psds[state]["watts"]
    return state, watts, (
        Evidence(FEAT_02 + " -s 0 (current)", "Dword 0 bits 4:0 (PS)", state),
        Evidence(ID_CTRL, f"Power State Descriptor {state}: Maximum Power (MP)", watts))


def _where(r: dict) -> str:
    return f"{r.get('test')} round {r.get('round')}"


def _counts_changed(rounds: list[dict]) -> tuple[int, int] | None:
    counts = [c for r in rounds if (c := r.get("state_counts"))]
    if not counts or counts[0][0] == counts[-1][1]:
        return None
    return counts[0][0], counts[-1][1]


def max_average(f: dict) -> tuple[str, str, tuple[Evidence, ...]]:
    """PCM-1 (PWR-3, PCM-4 measure by it): the largest 1 s average power of the run against
    the Maximum Power of the power state in use."""
    try:
        rounds, sources = _power(f)
        found = _sources_needed(rounds, sources)
        fit = [s for s in found if unfit(s) is None]
        if not fit:
            raise _Unjudged("no source measures the drive as PCM-1 asks (1 s averages sampled "
                            "at 2 ms or less, read every second): "
                            + "; ".join(unfit(s) for s in found))
        source = fit[0]
        mine = [r for r in rounds if r["source"] == source["name"]]
        state, mp, evs = _state(f)
        readings = [r for r in mine if r.get("max_w") is not None]
        if not readings:
            raise _Unjudged(f"{source['name']} gave no reading in the run's rounds")
        top = max(readings, key=lambda r: r["max_w"])
        covered = sum(r.get("covered_s") or 0.0 for r in mine)
        evs += (Evidence(RECORDS, f"{source['name']}: largest reading ({_where(top)})",
                         top["max_w"]),
                Evidence(RECORDS, f"{source['name']}: seconds covered", round(covered, 1)))
        if changed := _counts_changed(mine):
            raise _Unjudged(f"the power state changed during the rounds (SMART-31 Power State "
                            f"Change Count {changed[0]} -> {changed[1]}): which state's Maximum "
                            f"Power each second is held to is not known")
    except _Unjudged as why:
        return NOT_CHECKED, str(why), ()
    except KeyError as missing:
        return NOT_CHECKED, f"not read in this run: {missing.args[0]}", ()
    said = (f"largest 1 s average {top['max_w']:g} W ({source['name']}, {_where(top)}) against "
            f"power state {state}'s Maximum Power {mp:g} W")
    if top["max_w"] > mp:
        return FAIL, f"{said}: above it", evs
    if covered < DURATION_S:
        return NOT_CHECKED, (f"{said}: not above it, over {covered:.0f} s of the {DURATION_S} s "
                             f"(15 minutes) PCM-1 asks"), evs
    return PASS, f"{said}: not above it, over {covered:.0f} s in {len(mine)} round(s)", evs


def change_count(f: dict) -> tuple[str, str, tuple[Evidence, ...]]:
    """SMART-31: the Power State Change Count only increases during run time; judged on the
    counts the drive's own source read with each reading, in time order."""
    try:
        rounds, _ = _power(f)
        read = sorted((r for r in rounds if r.get("state_counts")), key=lambda r: r["start"])
        if not read:
            raise _Unjudged("the Power State Change Count is read with each reading of the "
                            "drive's own C0h source (--power drive); no source read it in this "
                            "run")
    except _Unjudged as why:
        return NOT_CHECKED, str(why), ()
    first, last = read[0]["state_counts"][0], read[-1]["state_counts"][1]
    ev = (Evidence(RECORDS, "C0h SMART-31 (bytes 207:200), first and last read",
                   [first, last]),)
    at = first
    for r in read:
        a, b = r["state_counts"]
        if a < at or b < a:
            return FAIL, (f"went down during the run: {at} before {_where(r)}, "
                          f"{min(a, b)} in it"), ev
        at = b
    return PASS, (f"never went down over {len(read)} round(s) of readings ({first} -> {last}: "
                  f"{last - first} change(s) counted); that it counts every change is not "
                  f"judged (the run sets no power state)"), ev


def drive_against_meter(f: dict) -> tuple[str, str, tuple[Evidence, ...]]:
    """SMART-47: the drive's own 1 s averages against a meter on the drive, round by round
    (mean W over the same round)."""
    try:
        rounds, sources = _power(f)
        found = _sources_needed(rounds, sources)
        own = [s for s in found if s.get("window_s") and s.get("measures") == DRIVE]
        meters = [s for s in found if not s.get("window_s") and s.get("measures") == DRIVE]
        if not own or not meters:
            raise _Unjudged(
                "needs the drive's own reading (--power drive) and a meter on the drive "
                "(e.g. --power meter:CMD,measures=drive) in one run; this run has "
                + ", ".join(f"{s['name']} ({s.get('measures') or 'not started'})"
                            for s in found))
        by_round = {(r["test"], r["round"]): r for r in rounds
                    if r["source"] == own[0]["name"] and r.get("mean_w")}
        pairs = [(by_round[(r["test"], r["round"])], r) for r in rounds
                 if r["source"] == meters[0]["name"] and r.get("mean_w")
                 and (r["test"], r["round"]) in by_round]
        if not pairs:
            raise _Unjudged(f"{own[0]['name']} and {meters[0]['name']} have no round both read")
    except _Unjudged as why:
        return NOT_CHECKED, str(why), ()
    off = [(abs(d["mean_w"] - m["mean_w"]) / m["mean_w"], d, m) for d, m in pairs]
    worst = max(off, key=lambda x: x[0])
    share, d, m = worst
    said = (f"{d['mean_w']:.3g} W by the drive, {m['mean_w']:.3g} W by {m['source']} in "
            f"{_where(d)}: {share:.1%} apart")
    ev = (Evidence(RECORDS, f"mean W, {_where(d)}: drive, meter", [d["mean_w"], m["mean_w"]]),)
    if share > DRIVE_METER_TOLERANCE:
        return FAIL, (f"{said}, more than the {DRIVE_METER_TOLERANCE:.0%} allowed (this "
                      f"project's tolerance; the text states none)"), ev
    return PASS, (f"within {DRIVE_METER_TOLERANCE:.0%} (this project's tolerance; the text "
                  f"states none) in {len(pairs)} round(s); the largest difference: {said}"), ev


for _version, _rid, _at in ((V27, "PCM-1", 9880), (V20, "PCM-1", 86), (V27, "PCM-4", 9895),
                            (V27, "PWR-3", 9908), (V20, "PWR-3", 87)):
    rule(_version, _rid, _at)(max_average)
rule(V27, "SMART-31", 1556)(change_count)
rule(V20, "SMART-31", 21)(change_count)
rule(V27, "SMART-47", 1666)(drive_against_meter)
