"""The Applied Test Workload derived from a characterisation (issue 32 §2; rwsw-digest §4).

- Streams: the top N (`top_n`), extended past N while they cover less than
  `coverage_min_pct` of the capture's I/Os (0: no minimum); their shares renormalised to 100
  and rounded to 0.01 % by largest remainder, each at least 0.01 %, so they sum to 100.
- OIO (`oio_rule`, a reading): "fixed": thread_count x queue_depth of the RWSW spec;
  "median" / "p95": that figure of the capture's outstanding-I/O distribution (time-weighted
  over busy time), at least 1, split TC = min(OIO, 4), QD = ceil(OIO / TC).
- Steps (for rwsw-replay): each capture step with I/Os of the ATW's streams, in order: its
  start and length, oio = max(1, round(its time-averaged OIO)), its shares over the ATW's
  streams renormalised, its in-situ IOPS and mean response time. A step without such I/Os
  is left out (its start is missing from the sequence; `provenance.steps_left_out` counts).
- Provenance: what it came from and the settings used (the sequential rule with its scope
  and window, and the SEQ share of the I/Os under each rule compared, the one used first).
"""

from __future__ import annotations

import math

from pts.config.spec import load_rwsw
from pts.config.spec_rwsw import RwswSpec
from pts.workload.atw import Step, Stream, StreamKey, Workload
from pts.workload.characterise import Characterisation

UNIT = 0.01                  # share resolution, percentage points
RULES = ("fixed", "median", "p95")
MAX_TC = 4                   # rwsw-digest §4: TC = min(OIO, 4)


def normalise(counts: dict[StreamKey, int]) -> dict[StreamKey, float]:
    """Shares of the counts (> 0) in % of their sum, in units of 0.01, summing to 100."""
    counts = {k: n for k, n in counts.items() if n > 0}
    total = sum(counts.values())
    if not total:
        return {}
    units = round(100 / UNIT)
    exact = {k: n * units / total for k, n in counts.items()}
    whole = {k: max(1, math.floor(v)) for k, v in exact.items()}
    left = units - sum(whole.values())
    order = sorted(exact, key=lambda k: (-(exact[k] - math.floor(exact[k])), -counts[k]))
    if left > 0:
        for k in order[:left]:
            whole[k] += 1
    while left < 0:           # the minimum of one unit overshot: take from the largest
        big = max(whole, key=lambda k: whole[k])
        whole[big] -= 1
        left += 1
    return {k: round(whole[k] * UNIT, 2) for k in counts}


def oio_split(oio: int) -> tuple[int, int]:
    oio = max(1, int(oio))
    tc = min(oio, MAX_TC)
    return tc, math.ceil(oio / tc)


def derive(ch: Characterisation, *, spec: RwswSpec | None = None, top_n: int | None = None,
           oio_rule: str | None = None, name: str | None = None) -> Workload:
    spec = spec or load_rwsw()
    atw = spec["rwsw_atw"]
    top_n = int(top_n if top_n is not None else atw["top_n"])
    rule = oio_rule or str(atw["oio_rule"])
    if rule not in RULES:
        raise ValueError(f"OIO rule {rule!r}: one of {RULES}")
    if not ch.streams:
        raise ValueError(f"{ch.path}: no reads or writes in the capture window: no workload "
                         "to derive (widen --from/--to, or capture longer)")
    minimum = float(atw["coverage_min_pct"])
    chosen = list(ch.streams[:top_n])
    for s in ch.streams[top_n:]:
        if sum(c.share_ios_pct for c in chosen) >= minimum:
            break
        chosen.append(s)
    shares = normalise({s.key: s.ios for s in chosen})
    streams = tuple(Stream(s.key, shares[s.key]) for s in chosen)
    if rule == "fixed":
        tc, qd = int(atw["thread_count"]), int(atw["queue_depth"])
    else:
        tc, qd = oio_split(ch.oio_median if rule == "median" else ch.oio_p95)
    keys = set(shares)
    steps = []
    for st in ch.steps:
        step_shares = normalise({k: n for k, n in st.streams.items() if k in keys})
        if step_shares:
            steps.append(Step(st.start_s, st.seconds, max(1, round(st.oio_mean)),
                              step_shares, st.iops, st.rt_mean_ms))
    coverage = sum(s.share_ios_pct for s in chosen)
    return Workload(name or _name(ch), streams, tc, qd, tuple(steps),
                    _provenance(ch, len(chosen), coverage, rule, len(ch.steps) - len(steps)))


def _name(ch: Characterisation) -> str:
    who = f" ({ch.info.process_filter})" if ch.info.process_filter else ""
    return f"{ch.info.device}{who}, {ch.path.name}"


def _provenance(ch: Characterisation, n: int, coverage: float, rule: str,
                left_out: int) -> dict:
    info = ch.info
    p = {"capture_file": ch.path.name, "capture_sha256": ch.sha256,
         "capture_source": info.source, "device": info.device, "host": info.host,
         "started_unix": info.started_unix, "from_s": ch.from_s, "to_s": ch.to_s,
         "process_filter": info.process_filter or "(none)", "top_n": ch.top_n,
         "streams": n, "coverage_pct": round(coverage, 2), "events": ch.events, "ios": ch.ios,
         "lost_events": info.lost_events if info.lost_events is not None else "unknown",
         "seq_rule": ch.seq_rule, "seq_scope": ch.seq_scope, "seq_window": ch.seq_window,
         "seq_rules_compared": [s.label for s in ch.seq_by_rule],
         "seq_share_pct": [round(s.seq_pct, 4) for s in ch.seq_by_rule],
         "step_seconds": ch.step_s,
         "oio_rule": rule, "oio_median": ch.oio_median, "oio_p95": ch.oio_p95,
         "oio_max": ch.oio_max, "steps_left_out": left_out, "rwsw_spec": ch.rwsw_spec}
    # What the report's workload pages show and the ATW itself does not hold, so that a run's
    # report shows them from its stored test_start (pts.stored.workload_view): the whole
    # cumulative workload, the time-weighted OIO histogram, the per-step stream map.
    top = [s.key for s in ch.top]
    p |= {"cumulative_streams": [s.key.label for s in ch.streams],
          "cumulative_ios": [s.ios for s in ch.streams],
          "cumulative_bytes": [s.bytes for s in ch.streams],
          "oio_seconds": [round(x, 6) for x in ch.oio_seconds],
          "map_streams": [k.label for k in top],
          "map_start_s": [st.start_s for st in ch.steps],
          "map_shares_pct": [[round(m.get(k, 0.0), 4) for k in top] for m in ch.stream_map]}
    return p
