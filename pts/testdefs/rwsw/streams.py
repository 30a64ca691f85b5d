"""RWSW Individual Streams-WSAT (`rwsw-streams`, rwsw-digest §5): each IO stream of the
Applied Test Workload (--workload) alone, WSAT-style, to compare with Multi-WSAT.

  1. purge once ([rwsw_streams] purge = "once"); write cache; no preconditioning (FOB);
  2. rounds of one point per stream, in the ATW's order (like IOPS's matrix): the stream
     alone at the ATW's whole OIO (TC threads at QD; a SEQ stream in its own slices) for
     `round_seconds`; each stream's IOPS is a tracking variable;
  3. until every stream is steady in the same 5-round window, or max rounds.

The streams run back to back after one purge: each stream's state is the drive the streams
before it left (XSR-like cross effects, declared by the order in test_start `parameters`).
"""

from __future__ import annotations

from pts.config.settings import Settings
from pts.config.spec import RwMix
from pts.device.identity import BlockDevice
from pts.procedure.rounds import TestPoint
from pts.procedure.runner import RoundTest
from pts.testdefs.rwsw import common
from pts.testdefs.rwsw.sections import StreamsSection

TEST = "rwsw-streams"


def points(w) -> tuple[TestPoint, ...]:
    return tuple(TestPoint(k, RwMix(100 if s.key.direction == "R" else 0), s.key.size,
                           access=s.key.access, thread_count=w.thread_count,
                           queue_depth=w.queue_depth) for k, s in enumerate(w.streams))


def declare(settings: Settings, device: BlockDevice) -> RoundTest:
    w = common.workload(settings, device)
    seconds = common.round_seconds(settings, StreamsSection)
    found = points(w)
    tracking = {f"{s.key.label} IOPS": p for s, p in zip(w.streams, found, strict=True)}
    job = common.apply_job(settings, device, w, seconds, streams=w.streams)
    s = StreamsSection.of(settings)
    return RoundTest(
        test=TEST, title="RWSW Individual Streams-WSAT",
        clause="RWSW 1.0.7 Individual Streams-WSAT (rwsw-digest §5)",
        parameters=common.parameters(settings, device, w, seconds, settings.max_rounds,
                                        tracking, job) | {
            "stop_at_steady_state": s.stop_at_steady_state},
        points=found, tracking=tracking, value_key="iops", job=job,
        fields=common.measured, thread_count=w.thread_count, queue_depth=w.queue_depth,
        wipc_block_size=None, point_seconds=seconds,
        measures="per stream IOPS, each stream alone; ")
