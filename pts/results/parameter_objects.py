"""The objects nested in a test_start's parameters (pts.results.parameters), typed: a
tracking variable, an XSR access group, the ATW an RWSW test applied with its streams, an
RWSW fio section, an rwsw-replay step. `parameters.typed` builds them from the stored JSON,
each field's type checked as the options' are; a key a record here does not have is kept in
its `stored` (the object as written, which `Parameters.as_dict` gives back), not refused:
these are the writers' own rows (an ATW file's, fio's), and the readers read only the fields
named here.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field


@dataclass(frozen=True, kw_only=True)
class Nested:
    """An object nested in the parameters, typed; `stored`: the object as written."""
    stored: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def names(cls) -> frozenset[str]:
        return frozenset(f.name for f in dataclasses.fields(cls)) - {"stored"}


@dataclass(frozen=True, kw_only=True)
class Tracking(Nested):
    """A steady-state tracking variable: the measured field `metric` (None: IOPS) of the
    points of one R/W mix and block size."""
    label: str | None = None
    rw_mix: str | None = None
    block_size: int | None = None
    metric: str | None = None


@dataclass(frozen=True, kw_only=True)
class XsrGroup(Nested):
    """An XSR access group: its number, SEQ / RND pattern, block size and length."""
    group: int | None = None
    pattern: str | None = None
    block_size: int | None = None
    seconds: float | None = None


@dataclass(frozen=True, kw_only=True)
class AtwStream(Nested):
    stream: str | None = None               # "RND 4K W"
    share_pct: float | None = None


@dataclass(frozen=True, kw_only=True)
class Atw(Nested):
    """The Applied Test Workload an RWSW test applied (pts.workload.atw) as it recorded it;
    `provenance`: the ATW file's [provenance] table, free keys (docs/workload.md)."""
    name: str | None = None
    sha256: str | None = None
    path: str | None = None
    thread_count: int | None = None
    queue_depth: int | None = None
    oio: int | None = None
    streams: list[AtwStream] | None = None
    provenance: dict | None = None


@dataclass(frozen=True, kw_only=True)
class RwswSection(Nested):
    """One fio section an RWSW test ran (pts.tools.fio.Job's fields)."""
    section: str | None = None
    rw: str | None = None
    block_size: int | None = None
    numjobs: int | None = None
    iodepth: int | None = None
    flow: int | None = None
    offset: int | None = None
    size: int | None = None
    runtime: int | None = None


@dataclass(frozen=True, kw_only=True)
class RwswStep(Nested):
    """rwsw-replay: one capture step as planned (the capture's figures beside its OIO)."""
    step: int | None = None
    start_s: float | None = None
    seconds: float | None = None
    replay_seconds: float | None = None
    oio: int | None = None
    thread_count: int | None = None
    queue_depth: int | None = None
    oio_nominal: int | None = None
    shares: dict | None = None              # stream label -> share %
    iolog: dict | None = None               # hold "iolog": {ios, seed}
    insitu_iops: float | None = None
    insitu_rt_mean_ms: float | None = None
