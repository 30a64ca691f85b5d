"""The test_start `parameters` as a typed record: one name per option, whatever the test.

The ledger stores them as a JSON object (docs/results-format.md, test_start); a reader gets
them as `Parameters` (the options every test records) extended by its family's record
(`RoundParameters` for IOPS, Throughput and Latency, `WsatParameters`, `HirParameters`,
`XsrParameters`, `DirthCbwParameters`), built by `typed` from the stored object. A name this
version does not know, or a family's required option missing, is a `ParametersError` naming
the option and the test, said where the run is loaded, not a KeyError in a page builder;
so is a value of another type than its field's (a count stored as "4", a list as a string):
the pages would otherwise fail on it, or worse, draw it.
`as_dict` gives back exactly the stored object (the names present, in their order).

The nested objects are typed too (pts.results.parameter_objects: `Tracking`, `XsrGroup`,
`Atw`, `RwswSection`, `RwswStep`): `typed` builds them from the stored JSON, checking each
field's type as it does the options'. So no reader outside this module looks an option or a
nested field up by its name (tests/unit/test_typed_parameters.py holds it).

`--point-seconds` is `point_seconds` in every test: the length of a round's point (IOPS,
Throughput, Latency, HIR's and DIRTH's/CBW's rounds), of a WSAT sample and of an XSR interval.
Runs written before this was so stored it as `sample_seconds` (WSAT) and `interval_seconds`
(XSR); a stored run is read with those names as aliases, here only (pts.results.records.parse
calls `current` for every test_start), so no reader ever needs the old names.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import types
import typing
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pts.results.parameter_objects import (
    Atw,
    Nested,
    RwswSection,
    RwswStep,
    Tracking,
    XsrGroup,
)

# older name -> the one name it is read as
ALIASES = {"sample_seconds": "point_seconds", "interval_seconds": "point_seconds"}


def current(parameters):
    """A test_start's `parameters` with the names of this version (anything that is not an
    object is given back as it is: the reader says what is wrong with it)."""
    if not isinstance(parameters, dict):
        return parameters
    out = {}
    for key, value in parameters.items():
        name = ALIASES.get(key, key)
        if name not in parameters or name == key:     # a current name wins over its alias
            out[name] = value
    return out


class ParametersError(ValueError):
    """The stored parameters do not fit the test's record (a run from a newer version, or a
    broken ledger)."""


@dataclass(frozen=True, kw_only=True)
class Parameters:
    """The options every test records; None where a stored run does not hold one."""
    FAMILY: ClassVar[str] = ""
    REQUIRED: ClassVar[tuple[str, ...]] = ("thread_count", "queue_depth", "point_seconds")
    thread_count: int | None = None
    queue_depth: int | None = None
    active_range_pct: float | None = None
    active_range_bytes: int | None = None
    write_cache: str | None = None          # required: "WCD" / "WCE"
    data_pattern: str | None = None
    point_seconds: float | None = None      # a round's point, a WSAT sample, an XSR interval
    readings: list | None = None            # the spec readings the run used (runner)
    keys: tuple[str, ...] = field(default=(), repr=False, compare=False)  # as stored, in order

    def as_dict(self) -> dict[str, Any]:
        """The object as stored (only the names it held, in their order)."""
        return {k: as_stored(getattr(self, k)) for k in self.keys}

    @classmethod
    def names(cls) -> frozenset[str]:
        return frozenset(f.name for f in dataclasses.fields(cls)) - {"keys"}


@dataclass(frozen=True, kw_only=True)
class SteadyParameters(Parameters):
    """The tests that judge a steady state (all but XSR): its workload and rule."""
    access: str | None = None               # "RND" / "SEQ"
    rw_mixes: list[str] | None = None
    block_sizes: list[int] | None = None
    tracking: list[Tracking] | None = None
    window_rounds: int | None = None
    max_data_excursion: float | None = None
    max_slope_excursion: float | None = None
    latency: str | None = None              # which latency fio measured (what the pages say)


@dataclass(frozen=True, kw_only=True)
class RoundParameters(SteadyParameters):
    """IOPS, Throughput, Latency: the rounds and the WIPC before them."""
    FAMILY: ClassVar[str] = "round-based (IOPS/Throughput/Latency)"
    REQUIRED: ClassVar[tuple[str, ...]] = Parameters.REQUIRED + ("max_rounds", "tracking")
    max_rounds: int | None = None
    wipc_block_size: int | None = None
    wipc_capacity_multiple: int | None = None
    percentile: float | None = None         # Latency: the percentile reported


@dataclass(frozen=True, kw_only=True)
class WsatParameters(SteadyParameters):
    FAMILY: ClassVar[str] = "WSAT"
    REQUIRED: ClassVar[tuple[str, ...]] = Parameters.REQUIRED + ("stop_drive_fills",
                                                                 "stop_hours")
    capacity_bytes: int | None = None
    stop_drive_fills: float | None = None
    stop_hours: float | None = None
    bytes_planned: int | None = None
    percentile: float | None = None


@dataclass(frozen=True, kw_only=True)
class HirParameters(SteadyParameters):
    FAMILY: ClassVar[str] = "HIR"
    REQUIRED: ClassVar[tuple[str, ...]] = Parameters.REQUIRED + ("write_seconds",
                                                                 "idle_seconds", "repetitions")
    max_rounds: int | None = None
    precondition_round_intervals: int | None = None
    round_seconds: int | None = None
    precondition_sample: str | None = None  # "first" / "last" minute of a round tracked
    write_seconds: int | None = None
    idle_seconds: list[int] | None = None
    wait_state_names: list[str] | None = None
    repetitions: int | None = None
    baseline_repetitions: int | None = None
    idle_method: str | None = None


@dataclass(frozen=True, kw_only=True)
class XsrParameters(Parameters):
    FAMILY: ClassVar[str] = "XSR"
    REQUIRED: ClassVar[tuple[str, ...]] = Parameters.REQUIRED + ("groups",)
    groups: list[XsrGroup] | None = None
    recovery_band_pct: float | None = None
    recovery_sustain_intervals: int | None = None
    final_level_fraction: float | None = None
    recovery_rule: str | None = None


@dataclass(frozen=True, kw_only=True)
class DirthCbwParameters(SteadyParameters):
    """DIRTH/CBW, both phases: the preconditioning (round_seconds, precondition_sample) and
    the demand phase that continues it (continues_from, the captures)."""
    FAMILY: ClassVar[str] = "DIRTH/CBW"
    REQUIRED: ClassVar[tuple[str, ...]] = Parameters.REQUIRED + ("thread_counts",
                                                                 "queue_depths", "workload")
    max_rounds: int | None = None
    thread_counts: list[int] | None = None
    queue_depths: list[int] | None = None
    workload: str | None = None
    bssplit: str | None = None
    random_distribution: str | None = None
    block_align: int | None = None
    block_size_mix: list[str] | None = None
    dropped_block_sizes: list[str] | None = None
    round_seconds: int | None = None
    precondition_sample: str | None = None
    prewrite_seconds: int | None = None
    operating_prewrite_seconds: int | None = None
    capture_seconds: int | None = None
    art_ceiling_us: float | None = None
    percentiles: list[float] | None = None
    midiops_candidates: str | None = None
    continues_from: str | None = None       # the demand phase: its preconditioning test


@dataclass(frozen=True, kw_only=True)
class RwswParameters(SteadyParameters):
    """The RWSW tests (rwsw-wsat, -streams, -replay, -dirth and their -precondition): the
    Applied Test Workload they apply and how (pts.workload.applied), the round length, the
    stop rule, the replay's steps and the DIRTH matrix."""
    FAMILY: ClassVar[str] = "RWSW"
    REQUIRED: ClassVar[tuple[str, ...]] = Parameters.REQUIRED + ("max_rounds", "tracking",
                                                                 "atw")
    max_rounds: int | None = None
    atw: Atw | None = None
    sections: list[RwswSection] | None = None   # per stream: its fio section
    oio_split: str | None = None
    flow_sleep_us: int | None = None
    share_tolerance_pct: float | None = None
    capacity_bytes: int | None = None
    rwsw_spec: str | None = None            # the RWSW spec file's title (specs/rwsw-*.toml)
    stop_drive_fills: float | None = None   # rwsw-wsat: its WSAT stop rule
    stop_hours: float | None = None
    stop_at_steady_state: bool | None = None
    precondition: str | None = None         # rwsw-replay/-dirth and their -precondition
    precondition_oio: list[int] | None = None   # [TC, QD] of the preconditioning
    preconditioning_test: str | None = None  # the "-preconditioning" ledger test before it
    continued_by: str | None = None         # (on the -preconditioning test) the test after it
    time_scale: float | None = None         # rwsw-replay: [rwsw_replay] x --time-scale
    loop: str | None = None
    hold: str | None = None                 # rwsw-replay: "oio" (no fio flow) or "shares"
    min_step_seconds: int | None = None
    round_mode: str | None = None           # "stonewalled": steps of unequal length
    steps: list[RwswStep] | None = None     # rwsw-replay: the capture's steps
    thread_counts: list[int] | None = None  # rwsw-dirth: the TC x QD matrix run
    queue_depths: list[int] | None = None
    matrix: list[list[int]] | None = None   # [TC, QD] per point, highest OIO first
    percentiles: list[float] | None = None
    art_ceiling_us: float | None = None
    midiops_candidates: str | None = None
    demand_to_steady_state: bool | None = None
    histograms: str | None = None


def family_key(test: str) -> str:
    """A ledger test's family: its name's first word ("throughput-1024k" -> throughput,
    "dirth-precondition" -> dirth, "rwsw-wsat-preconditioning" -> rwsw). The one key of
    every registry keyed by test family (tests/unit/test_families.py walks them)."""
    return test.split("-", 1)[0]


# the families whose tests run rounds up to `max_rounds` (WSAT runs samples, XSR intervals)
ROUND_LIMITED = (RoundParameters, HirParameters, DirthCbwParameters, RwswParameters)

# a test's family (family_key) -> its family's record
FAMILIES: dict[str, type[Parameters]] = {
    "iops": RoundParameters, "throughput": RoundParameters, "latency": RoundParameters,
    "wsat": WsatParameters, "hir": HirParameters, "xsr": XsrParameters,
    "dirth": DirthCbwParameters, "cbw": DirthCbwParameters, "rwsw": RwswParameters}


def family(test: str) -> type[Parameters]:
    cls = FAMILIES.get(family_key(test))
    if cls is None:
        raise ParametersError(f"test \"{test}\" is not a test this version knows (a run "
                              f"stored by a newer version?)")
    return cls


def typed(test: str, parameters: dict, required: bool = True) -> Parameters:
    """The stored parameters of `test` (older names read as this version's) as its family's
    record; ParametersError for a name the record does not have or (`required`) a required
    one missing. A run is checked with `required` where it is loaded; the stored run's model
    types what passed (a page given a record without an option says it was not recorded)."""
    if not isinstance(parameters, dict):
        raise ParametersError(f"test_start of \"{test}\": parameters is not an object")
    cls, data = family(test), current(parameters)
    unknown = [k for k in data if k not in cls.names()]
    if unknown:
        raise ParametersError(
            f"test_start of \"{test}\": parameter \"{unknown[0]}\" is not in this version's "
            f"{cls.FAMILY} parameters ({cls.__name__}): a run stored by a newer version?")
    missing = [k for k in cls.REQUIRED if required and data.get(k) is None]
    if missing:
        raise ParametersError(f"test_start of \"{test}\": the {cls.FAMILY} parameters "
                              f"({cls.__name__}) have no \"{missing[0]}\"")
    for key, value in data.items():
        wrong = _wrong_type(value, _hints(cls)[key])
        if wrong:
            raise ParametersError(
                f"test_start of \"{test}\": parameter \"{key}\" is {wrong} ({value!r:.60}), "
                f"must be {_expected(_hints(cls)[key])} (or null) in {cls.__name__}: a "
                "broken ledger, or a run stored by another version")
    return cls(**{k: _built(v, _hints(cls)[k]) for k, v in data.items()}, keys=tuple(data))


def _built(value, hint):
    """A stored value (its type checked) as its field holds it: a nested object as its
    record, a list of them as a list of records."""
    if value is None:
        return None
    if isinstance(hint, types.UnionType):
        hint = next(a for a in typing.get_args(hint) if a is not type(None))
    origin, args = typing.get_origin(hint) or hint, typing.get_args(hint)
    if _nested(origin):
        return origin(**{k: _built(v, _hints(origin)[k]) for k, v in value.items()
                         if k in origin.names()}, stored=value)
    if origin is list and args and _nested(args[0]):
        return [_built(item, args[0]) for item in value]
    return value


def as_stored(value):
    """An option's value as the ledger holds it (a nested record: its object as written)."""
    if isinstance(value, Nested):
        return value.stored
    return [as_stored(v) for v in value] if isinstance(value, list) else value


def _nested(origin) -> bool:
    return isinstance(origin, type) and issubclass(origin, Nested)


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    """The fields' types (the annotations are strings: `from __future__ import annotations`)."""
    return typing.get_type_hints(cls)


def _expected(hint) -> str:
    """`int | None` -> "int", `list[dict] | None` -> "list[dict]" (null is always allowed:
    an option a stored run does not hold)."""
    args = [a for a in typing.get_args(hint) if a is not type(None)] \
        if isinstance(hint, types.UnionType) else [hint]
    return " | ".join(getattr(a, "__name__", None) if not typing.get_args(a) else
                      re.sub(r"\b[\w.]+\.", "", str(a)) for a in args)


def _wrong_type(value, hint) -> str | None:
    """None if `value` (as JSON gives it) fits `hint`, else what it is ("str", "list holding
    a str"). A float field takes a whole number (JSON writes 60.0 as 60); a bool is never a
    number, though Python's bool is an int."""
    if value is None:
        return None
    if isinstance(hint, types.UnionType):
        found = [_wrong_type(value, a) for a in typing.get_args(hint) if a is not type(None)]
        return None if None in found else found[0]
    origin, args = typing.get_origin(hint) or hint, typing.get_args(hint)
    if isinstance(value, bool) and origin is not bool:
        return "bool"
    if _nested(origin):
        if not isinstance(value, dict):
            return type(value).__name__
        inner = next(((k, w) for k, v in value.items() if k in origin.names()
                      and (w := _wrong_type(v, _hints(origin)[k]))), None)
        return None if inner is None else f"an object whose \"{inner[0]}\" is {inner[1]}"
    if origin is float:
        ok = isinstance(value, int | float)
    else:
        ok = isinstance(value, origin)
    if not ok:
        return type(value).__name__
    if origin is list and args:
        for item in value:
            inner = _wrong_type(item, args[0])
            if inner:
                return f"list holding {inner if inner.startswith('an ') else 'a ' + inner}"
    return None
