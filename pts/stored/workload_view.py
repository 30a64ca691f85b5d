"""The workload pages' data (issue 32 §4): one view of a workload, made either from a capture's
characterisation (`python -m pts workload CAPTURE --pdf`) or from a stored run's test_start
(the ATW and its [provenance], as `python -m pts workload -o` wrote it). The pages
(pts.report.pages.workload) draw this view and nothing else, so a capture and a run show the
same pages. What the source does not hold stays None and the page says so: never invented.
"""

from __future__ import annotations

from dataclasses import dataclass

from pts.results.parameters import Atw
from pts.workload.atw import Workload
from pts.workload.characterise import Characterisation

NOT_IN_FILE = "not in the workload file"


@dataclass(frozen=True)
class StreamRow:
    stream: str
    ios: int | None
    bytes: int | None
    share_ios_pct: float
    share_bytes_pct: float | None


@dataclass(frozen=True)
class WorkloadView:
    source: str                              # "capture FILE" / "run test_start (ATW FILE)"
    descriptor: tuple[tuple[str, str], ...]  # label, value, in page order
    lost_events: int | None                  # None: unknown / not recorded
    cumulative: tuple[StreamRow, ...] | None  # every stream, ranked (None: not recorded)
    top_n: int | None
    coverage_pct: float | None               # share of all I/Os the ATW's streams cover
    map_streams: tuple[str, ...]             # the stream map: its streams,
    map_start_s: tuple[float, ...]           # each step's start,
    map_shares: tuple[tuple[float, ...], ...]  # per step, each stream's % of its I/Os
    oio_seconds: tuple[float, ...] | None    # seconds held at 0, 1, 2 ... outstanding I/Os
    oio_summary: str                         # median / p95 / max as recorded
    atw_name: str
    atw_oio: tuple[int, int] | None          # thread count, queue depth
    atw_streams: tuple[tuple[str, float], ...]   # stream, target share %
    # the SEQ share of the I/Os under each sequential rule, the one used first (None: not
    # recorded, e.g. a hand-written ATW or one made before the rules were compared)
    seq_by_rule: tuple[tuple[str, float], ...] | None = None


def _lost(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def from_characterisation(ch: Characterisation, w: Workload) -> WorkloadView:
    """The capture's own figures (and the ATW derived from it)."""
    i = ch.info
    top = [s.key for s in ch.top]
    desc = (("Capture file", f"{ch.path.name} (sha256 {ch.sha256[:16]}...)"),
            ("Host", i.host or "not recorded"), ("Device", i.device),
            ("Source", i.source), ("Window", f"{ch.from_s:g}..{ch.to_s:g} s of "
                                             f"{i.seconds:g} s captured"),
            ("Steps", f"{len(ch.steps)} of {ch.step_s:g} s"),
            ("Process filter", i.process_filter or "(none)"),
            ("Events", f"{ch.events} (I/Os {ch.ios}, flushes {ch.flushes}, discards "
                       f"{ch.discards}, other {ch.other})"),
            ("Lost events", _lost_text(i.lost_events)))
    return WorkloadView(
        source=f"capture {ch.path.name}", descriptor=desc, lost_events=_lost(i.lost_events),
        cumulative=tuple(StreamRow(s.key.label, s.ios, s.bytes, s.share_ios_pct,
                                   s.share_bytes_pct) for s in ch.streams),
        top_n=ch.top_n, coverage_pct=sum(s.share_ios_pct for s in ch.streams
                                         if s.key in {x.key for x in w.streams}),
        map_streams=tuple(k.label for k in top),
        map_start_s=tuple(st.start_s for st in ch.steps),
        map_shares=tuple(tuple(m.get(k, 0.0) for k in top) for m in ch.stream_map),
        oio_seconds=tuple(ch.oio_seconds),
        oio_summary=f"median {ch.oio_median}, p95 {ch.oio_p95}, max {ch.oio_max} "
                    "(time-weighted over busy time)",
        atw_name=w.name, atw_oio=(w.thread_count, w.queue_depth),
        atw_streams=tuple((s.key.label, s.share_pct) for s in w.streams),
        seq_by_rule=tuple((s.label, s.seq_pct) for s in ch.seq_by_rule) or None)


def _lost_text(lost) -> str:
    if lost is None or lost == "unknown":
        return "unknown (the source cannot tell)"
    return str(lost)


def from_atw(atw: Atw | None) -> WorkloadView | None:
    """The workload a stored RWSW test applied: its test_start `atw` (None: not an RWSW
    test). The capture's figures come from the ATW's [provenance] as `python -m pts
    workload -o` wrote it; a hand-written ATW has none of them."""
    if atw is None:
        return None
    p = atw.provenance or {}
    desc = [("Workload file", f"{atw.path or NOT_IN_FILE} (sha256 "
                              f"{str(atw.sha256 or '?')[:16]}...)")]
    desc += [(label, str(p[key]) if key in p else NOT_IN_FILE) for label, key in (
        ("Capture file", "capture_file"), ("Host", "host"), ("Device", "device"),
        ("Source", "capture_source"), ("Process filter", "process_filter"),
        ("Lost events", "lost_events"))]
    if "from_s" in p and "to_s" in p:
        desc.append(("Window", f"{p['from_s']:g}..{p['to_s']:g} s"))
    if "step_seconds" in p:
        desc.append(("Steps", f"{len(p.get('map_start_s') or ())} of {p['step_seconds']:g} s"))
    desc += [(f"Provenance {k.replace('_', ' ')}", str(v)) for k, v in p.items()
             if k in ("made_by", "capture_sha256", "seq_rule", "oio_rule", "rwsw_spec")]
    names = p.get("cumulative_streams")
    cumulative = None
    if isinstance(names, list) and names:
        ios, nbytes = p.get("cumulative_ios") or [], p.get("cumulative_bytes") or []
        total_ios, total_bytes = sum(ios) or 1, sum(nbytes) or 1
        cumulative = tuple(StreamRow(n, i, b, 100 * i / total_ios, 100 * b / total_bytes)
                           for n, i, b in zip(names, ios, nbytes, strict=True))
    oio = p.get("oio_seconds")
    summary = (f"median {p['oio_median']}, p95 {p['oio_p95']}, max {p['oio_max']} "
               "(time-weighted over busy time)" if "oio_median" in p else NOT_IN_FILE)
    streams = tuple((str(s.stream), float(s.share_pct)) for s in atw.streams or ())
    tc, qd = atw.thread_count, atw.queue_depth
    return WorkloadView(
        source=f"the run's test_start (ATW {atw.name!r})", descriptor=tuple(desc),
        lost_events=_lost(p.get("lost_events")), cumulative=cumulative,
        top_n=p.get("top_n"), coverage_pct=p.get("coverage_pct"),
        map_streams=tuple(p.get("map_streams") or ()),
        map_start_s=tuple(p.get("map_start_s") or ()),
        map_shares=tuple(tuple(row) for row in p.get("map_shares_pct") or ()),
        oio_seconds=tuple(oio) if isinstance(oio, list) and oio else None,
        oio_summary=summary, atw_name=str(atw.name),
        atw_oio=(tc, qd) if isinstance(tc, int) and isinstance(qd, int) else None,
        atw_streams=streams, seq_by_rule=_seq_by_rule(p))


def _seq_by_rule(p: dict) -> tuple[tuple[str, float], ...] | None:
    rules, pcts = p.get("seq_rules_compared"), p.get("seq_share_pct")
    if not isinstance(rules, list) or not isinstance(pcts, list) or not rules \
            or len(rules) != len(pcts):
        return None
    return tuple((str(r), float(x)) for r, x in zip(rules, pcts, strict=True))
