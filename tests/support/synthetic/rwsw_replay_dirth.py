"""rwsw-replay and rwsw-dirth (each after its "-preconditioning" test) in a synthetic RWSW
run (tests/support/synthetic/rwsw_run.py: build(..., replay_dirth=True)), records shaped as
pts.testdefs.rwsw_replay / rwsw_dirth write them (checked against a real run of
tests/e2e/test_rwsw_integration.py: the same record types and fields per test).

Replay: three capture steps of 300 s (STEPS: OIO, in-situ IOPS / RT ms, step 2 without
in-situ figures as a hand-written ATW may have), replayed at REPLAY_IOPS x scale; step 2's
streams miss by `step_miss` points. DIRTH: TC 2,1 x QD 2,1, three rounds,
IOPS = DIRTH_IOPS[(TC, QD)] x scale x (0.8, 1, 1.02) per round (window 2..3); the operating
points and their histograms (from the round-3 point, histograms = "last-round").
"""

from __future__ import annotations

from pathlib import Path

from tests.support.synthetic import rwsw_run
from tests.support.synthetic.runfactory import RunFolder, round_evidence

# (start_s, seconds, oio, (TC, QD), shares, in-situ IOPS, in-situ RT ms)
STEPS = ((0.0, 300.0, 4, (4, 1), {"RND 4K R": 80.0, "RND 4K W": 20.0}, 1500.0, 0.4),
         (300.0, 300.0, 6, (4, 2), {"RND 4K R": 50.0, "RND 4K W": 30.0, "SEQ 128K W": 20.0},
          None, None),
         (600.0, 300.0, 1, (1, 1), {"SEQ 128K W": 100.0}, 250.0, 0.1))
REPLAY_IOPS = (54000.0, 38000.0, 13000.0)
REPLAY_ART_US = (63.5, 90.4, 58.8)
TIME_SCALE = 0.01
DIRTH_IOPS = {(2, 2): 53000.0, (2, 1): 37000.0, (1, 2): 36000.0, (1, 1): 30000.0}
PERCENTILES = [99.9, 99.99, 99.999, 99.9999]


def build(root: Path, name: str = "rwsw", *, scale: float = 1.0, step_miss: float = 0.0,
          serial: str = "SN-RWSW-1", log_mismatch: int | None = None) -> Path:
    """rwsw_run.build's run (rwsw-wsat, rwsw-streams) with rwsw-replay and rwsw-dirth after
    it, each after its preconditioning test. The replay's steps are hold "iolog" (shares of
    the replayed log); step `log_mismatch`'s log is not what fio did (its writes)."""
    def more(run: RunFolder) -> None:
        replay_test(run, scale, step_miss, None, log_mismatch)
        dirth_test(run, scale, None)
    return rwsw_run.build(root, name, scale=scale, serial=serial, more=more)


def _preconditioning(run: RunFolder, test: str, title: str, tc: int, qd: int,
                     provenance, scale: float) -> None:
    name = f"{test}-preconditioning"
    p = rwsw_run.parameters(name, [{"label": "ATW IOPS", "rw_mix": "60/40",
                                    "block_size": 0}], provenance) | {
        "thread_count": tc, "queue_depth": qd, "precondition_oio": [tc, qd],
        "continued_by": test, "precondition": "atw-steady-state"}
    rwsw_run.start_purged(run, name, f"{title} Preconditioning", "RWSW 1.0.7 (rwsw-digest §5)",
                          p)
    history: dict[str, list[float]] = {"ATW IOPS": []}
    for number, m in enumerate(rwsw_run.CURVE, 1):
        iops = 40000.0 * m * scale
        start = run.clock
        run.record("point", advance=60, test=name, round=number, index=0, rw_mix="60/40",
                   read_pct=60, block_size=0, na=False, iops=iops, read_iops=iops * 0.6,
                   write_iops=iops * 0.4, mbps=iops * 0.02, lat_mean_us=100.0,
                   lat_max_us=900.0, read_bytes=int(iops * 36), write_bytes=int(iops * 24),
                   ios=int(iops * 60), thread_count=tc, queue_depth=qd, streams=[],
                   share_miss_pts=0.0, shares_within_tolerance=True, oio_target=tc * qd,
                   oio_achieved=tc * qd * 0.9, start=start, end=start + 60,
                   raw=f"raw/{name}/round-{number:02d}/p00.json")
        history["ATW IOPS"].append(iops)
        evidence, steady = round_evidence(history, number)
        run.record("round", test=name, round=number, tracking={"ATW IOPS": iops},
                   steady_state=evidence, steady=steady)
    n = len(rwsw_run.CURVE)
    run.record("test_end", test=name, status="steady", rounds=n, steady_round=n,
               window=[n - 4, n], message="steady state reached")


def _streams(shares: dict[str, float], iops: float, miss: float) -> list[dict]:
    """Each stream's record; the last stream misses by `miss` points, the first makes up."""
    names = list(shares)
    off = {s: 0.0 for s in names}
    if len(names) > 1:
        off[names[-1]], off[names[0]] = miss, -miss
    return [{"stream": s, "section": f"s{k}", "target_pct": t, "achieved_pct": t + off[s],
             "ios": int(iops * (t + off[s]) / 100), "iops": iops * (t + off[s]) / 100,
             "lat_mean_us": 60.0 + k} for k, (s, t) in enumerate(shares.items())]


def _log_vs_fio(iops: float, seconds: int, mismatch: bool) -> list[dict]:
    """A step's replayed log beside fio, per direction (pts.workload.iolog.directions): the
    point's read and write bytes; `mismatch`: fio wrote a tenth more than the log holds."""
    out = []
    for name, ios, size in (("read", int(iops * seconds * 0.6), int(iops * seconds * 2458)),
                            ("write", int(iops * seconds * 0.4), int(iops * seconds * 1638))):
        fio = size + (size // 10 if mismatch and name == "write" else 0)
        out.append({"direction": name, "log_ios": ios, "fio_ios": ios, "log_bytes": size,
                    "fio_bytes": fio, "match": fio == size})
    return out


def replay_test(run: RunFolder, scale: float, step_miss: float, provenance,
                log_mismatch: int | None = None) -> None:
    test = "rwsw-replay"
    _preconditioning(run, test, "RWSW Replay-Native", 2, 2, provenance, scale)
    lengths = [max(1, round(s[1] * TIME_SCALE)) for s in STEPS]
    steps = [{"step": k + 1, "start_s": st[0], "seconds": st[1], "replay_seconds": lengths[k],
              "oio": st[2], "thread_count": st[3][0], "queue_depth": st[3][1],
              "shares": st[4], "insitu_iops": st[5], "insitu_rt_mean_ms": st[6]}
             for k, st in enumerate(STEPS)]
    p = rwsw_run.parameters(test, [{"label": "step 1 IOPS", "rw_mix": "80/20",
                                    "block_size": 0}], provenance) | {
        "point_seconds": max(lengths), "max_rounds": 1, "time_scale": TIME_SCALE,
        "loop": "closed", "min_step_seconds": 1, "round_mode": "stonewalled",
        "preconditioning_test": f"{test}-preconditioning", "steps": steps, "hold": "iolog"}
    run.record("test_start", test=test, title="RWSW Replay-Native",
               clause="RWSW 1.0.7 Replay-Native (rwsw-digest §5)", parameters=p)
    run.record("deviation", test=test, text=f"{test}: the capture's steps compressed by "
               f"{TIME_SCALE:g} ([rwsw_replay] time_scale x --time-scale), not replayed for "
               "their native length.")
    for k, st in enumerate(steps):
        iops, seconds = REPLAY_IOPS[k] * scale, lengths[k]
        miss = step_miss if k == 1 else 0.0
        streams = _streams(st["shares"], iops, miss if len(st["shares"]) > 1 else 0.0)
        start = run.clock
        run.record("point", advance=seconds, test=test, round=1, index=k, rw_mix="60/40",
                   read_pct=60, block_size=0, na=False, iops=iops, read_iops=iops * 0.6,
                   write_iops=iops * 0.4, mbps=iops * 0.02, lat_mean_us=REPLAY_ART_US[k],
                   lat_max_us=4000.0, read_bytes=int(iops * seconds * 2458),
                   write_bytes=int(iops * seconds * 1638), ios=int(iops * seconds),
                   thread_count=st["thread_count"], queue_depth=st["queue_depth"],
                   streams=streams, share_miss_pts=max(abs(s["achieved_pct"] - s["target_pct"])
                                                       for s in streams),
                   shares_within_tolerance=miss <= 2.0 and k + 1 != log_mismatch,
                   mix_warning=None, shares_of="replayed log",
                   log_vs_fio=_log_vs_fio(iops, seconds, k + 1 == log_mismatch),
                   oio_target=st["oio"], oio_achieved=st["oio"] * 0.85, step=k + 1,
                   step_start_s=st["start_s"], step_seconds=st["seconds"],
                   replay_seconds=seconds, insitu_iops=st["insitu_iops"],
                   insitu_rt_mean_ms=st["insitu_rt_mean_ms"], start=start,
                   end=start + seconds, raw=f"raw/{test}/round-01/p{k:02d}.json")
    run.record("round", test=test, round=1, tracking={"step 1 IOPS": REPLAY_IOPS[0] * scale},
               steady_state={"step 1 IOPS": None}, steady=False)
    run.record("test_end", test=test, status="complete", rounds=1, steady_round=None,
               window=[1, 1], message=f"replay complete: all {len(steps)} capture steps ran")


def dirth_test(run: RunFolder, scale: float, provenance) -> None:
    test = "rwsw-dirth"
    _preconditioning(run, test, "RWSW DIRTH", 2, 2, provenance, scale)
    cells = list(DIRTH_IOPS)                       # highest OIO first, ties: higher TC
    p = rwsw_run.parameters(test, [{"label": "ATW IOPS TC2/QD2", "rw_mix": "60/40",
                                    "block_size": 0}], provenance) | {
        "max_rounds": 3, "thread_counts": [2, 1], "queue_depths": [2, 1],
        "matrix": [list(c) for c in cells], "percentiles": PERCENTILES,
        "art_ceiling_us": 5000.0, "midiops_candidates": "ART below the ceiling",
        "demand_to_steady_state": False, "histograms": "last-round",
        "preconditioning_test": f"{test}-preconditioning"}
    run.record("test_start", test=test, title="RWSW DIRTH",
               clause="RWSW 1.0.7 DIRTH with the ATW (rwsw-digest §5)", parameters=p)
    for number, m in ((1, 0.8), (2, 1.0), (3, 1.02)):
        for k, (tc, qd) in enumerate(cells):
            iops = DIRTH_IOPS[(tc, qd)] * scale * m
            start = run.clock
            art = tc * qd * 1e6 / iops
            run.record("point", advance=60, test=test, round=number, index=k, rw_mix="60/40",
                       read_pct=60, block_size=0, na=False, iops=iops, read_iops=iops * 0.6,
                       write_iops=iops * 0.4, mbps=iops * 0.017, lat_mean_us=art,
                       lat_max_us=art * 70, ios=int(iops * 60), sys_cpu_pct=10.0 + tc + qd,
                       **{f"lat_{f'{q:g}'.replace('.', '_')}_us": art * (10 + j)
                          for j, q in enumerate(PERCENTILES)},
                       read_bytes=int(iops * 60 * 2458), write_bytes=int(iops * 60 * 1638),
                       thread_count=tc, queue_depth=qd,
                       streams=_streams(dict((s, t) for s, t, _, _ in rwsw_run.STREAMS),
                                        iops, 0.0),
                       share_miss_pts=0.0, shares_within_tolerance=True, mix_warning=None,
                       oio_target=tc * qd, oio_achieved=tc * qd * 0.9, start=start,
                       end=start + 60, raw=f"raw/{test}/round-{number:02d}/p{k:02d}.json")
        run.record("round", test=test, round=number,
                   tracking={"ATW IOPS TC2/QD2": DIRTH_IOPS[(2, 2)] * scale * m},
                   steady_state={"ATW IOPS TC2/QD2": None}, steady=False)
    _operating_points(run, test, scale)
    run.record("test_end", test=test, status="complete", rounds=3, steady_round=None,
               window=[2, 3], message="one sweep round (demand_to_steady_state = false)")


def operating() -> dict[str, tuple[int, int]]:
    """MaxIOPS: the highest IOPS (every ART is below 5 ms); MinIOPS TC1/QD1; MidIOPS the
    IOPS nearest (Max + Min) / 2 (TC2/QD1 at 37,000 vs 41,500)."""
    return {"MaxIOPS": (2, 2), "MidIOPS": (2, 1), "MinIOPS": (1, 1)}


def _operating_points(run: RunFolder, test: str, scale: float) -> None:
    mean = {c: DIRTH_IOPS[c] * scale * 1.01 for c in DIRTH_IOPS}     # window 2..3
    last = {c: DIRTH_IOPS[c] * scale * 1.02 for c in DIRTH_IOPS}     # round 3
    for name, (tc, qd) in operating().items():
        iops = mean[(tc, qd)]
        run.record("operating_point", test=test, name=name, selected=True, thread_count=tc,
                   queue_depth=qd, iops=iops, lat_mean_us=tc * qd * 1e6 / iops,
                   rule=f"{name}: TC{tc}/QD{qd}", rounds=[2, 3])
    for name, (tc, qd) in operating().items():
        iops = last[(tc, qd)]
        ios = int(iops * 60)
        bins = {"20000": ios // 2, "40000": ios - ios // 2 - 10, "900000": 10}
        run.record("response_histogram", test=test, name=name, thread_count=tc,
                   queue_depth=qd, seconds=60, ios=ios, iops=iops,
                   lat_mean_us=tc * qd * 1e6 / iops, lat_max_us=900.0,
                   percentiles=[{"pct": q, "us": 40.0 if 10 ** (j + 3) <= ios else None,
                                 "ios": ios, "ios_needed": 10 ** (j + 3),
                                 "resolvable": 10 ** (j + 3) <= ios}
                                for j, q in enumerate(PERCENTILES)],
                   bins=bins, source="fio json+ total-latency bins of the operating point's "
                   "demand point in round 3 (every stream section, reads and writes merged)",
                   raw=f"raw/{test}/round-03/p{list(DIRTH_IOPS).index((tc, qd)):02d}.json")
