"""PTS versions as data: load specs/<name>.toml into frozen dataclasses.

A spec file is validated completely when loaded: an unknown key, a missing key or a bad value
raises SpecError naming the file and the key, so a typo fails at pytest collection, not hours
into a run.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from pts.config import spec_purge_probe, spec_readings, spec_rwsw
from pts.config.spec_dirth_cbw import DirthCbwTest, read_dirth_cbw
from pts.config.spec_purge_probe import PurgeProbeSpec
from pts.config.spec_readings import Reading
from pts.config.spec_recovery import HirTest, XsrTest, read_hir, read_xsr
from pts.config.spec_rounds import (
    IopsTest,
    LatencyTest,
    ThroughputTest,
    TrackingCell,
    read_iops,
    read_latency,
    read_throughput,
)
from pts.config.spec_rwsw import RwswSpec
from pts.config.spec_units import KIB, RwMix, format_size, parse_size

# The spec's units and the round-based tests' sections live in their own modules; their
# callers import them from here, the spec's one entrance.
__all__ = ["DEFAULT_SPEC", "KIB", "Common", "IopsTest", "LatencyTest", "RwMix", "Spec",
           "SpecError", "SteadyStateRule", "ThroughputTest", "TrackingCell", "WipcSpec",
           "WsatTest", "available_specs", "format_size", "load_rwsw", "load_spec",
           "parse_size", "specs_dir"]

DEFAULT_SPEC = "pts-2.0.2-enterprise"


class SpecError(ValueError):
    """A spec file or spec name is wrong; the message names the file and the key."""


@dataclass(frozen=True)
class SteadyStateRule:
    window_rounds: int
    max_data_excursion: float
    max_slope_excursion: float
    max_rounds: int


@dataclass(frozen=True)
class Common:
    point_seconds: int
    write_cache: str          # "WCD" (disabled) or "WCE" (enabled)
    active_range_pct: int
    thread_count: int
    queue_depth: int
    data_pattern: str


@dataclass(frozen=True)
class WipcSpec:
    capacity_multiple: int
    block_size: int


@dataclass(frozen=True)
class WsatTest:
    clause: str
    block_size: int                 # RND writes (0/100)
    thread_count: int
    queue_depth: int
    capacity_multiple: float        # stop after this many user capacities written ...
    max_hours: float                # ... or after this long, whichever comes first


@dataclass(frozen=True)
class Spec:
    name: str
    title: str
    version: str
    segment: str
    path: Path
    steady_state: SteadyStateRule
    common: Common
    wipc: WipcSpec
    iops: IopsTest
    throughput: ThroughputTest
    latency: LatencyTest
    wsat: WsatTest
    hir: HirTest
    xsr: XsrTest
    purge_probe: PurgeProbeSpec          # [purge_probe] (pts.config.spec_purge_probe)
    dirth: DirthCbwTest | None = None     # [dirth] (pts.config.spec_dirth_cbw)
    cbw: DirthCbwTest | None = None       # [cbw]
    # [provenance.<section>] tables (pts.config.spec_readings): where each value comes from
    readings: tuple[Reading, ...] = ()
    # the RWSW spec file loaded beside it (specs/rwsw-*.toml, pts.config.spec_rwsw)
    rwsw: RwswSpec | None = None

    def reading_of(self, name: str) -> Reading | None:
        """The reading of "section.key" (None: the file gives none: a confirmed value
        of a section that needs no declaration)."""
        return next((p for p in self.readings if p.name == name), None)

    def readings_for(self, test: str) -> list[dict]:
        """The readings (and choices) a ledger test runs with, as test_start records."""
        rwsw = self.rwsw.readings if self.rwsw and test.startswith(spec_rwsw.PREFIX) else ()
        return spec_readings.used_by(self.readings + rwsw, test)


def specs_dir() -> Path:
    """Spec files: $PTS_SPECS_DIR if set, else specs/ beside the pts package."""
    env = os.environ.get("PTS_SPECS_DIR")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "specs"


def available_specs() -> list[str]:
    """The PTS spec files (an RWSW spec file, rwsw-*.toml, is loaded beside one)."""
    return sorted(p.stem for p in specs_dir().glob("*.toml") if not spec_rwsw.is_rwsw(p.name))


def load_rwsw(name_or_path: str = spec_rwsw.DEFAULT_RWSW) -> RwswSpec:
    """Load an RWSW spec by name (specs_dir()/rwsw-*.toml) or path."""
    path = Path(name_or_path)
    if path.suffix != ".toml":
        path = specs_dir() / f"{name_or_path}.toml"
        if not path.is_file():
            known = sorted(p.stem for p in specs_dir().glob(spec_rwsw.PREFIX + "*.toml"))
            raise SpecError(f"unknown RWSW spec {name_or_path!r}: choose one of "
                            f"{', '.join(known) or '(none found)'} (files in {specs_dir()}), "
                            "or give the path of a .toml file")
    return spec_rwsw.load(path, _Reader)


def load_spec(name_or_path: str = DEFAULT_SPEC) -> Spec:
    """Load a spec by name (a file in specs_dir()) or by path to a .toml file."""
    path = Path(name_or_path)
    if path.suffix != ".toml":
        path = specs_dir() / f"{name_or_path}.toml"
        if not path.is_file():
            raise SpecError(f"unknown spec {name_or_path!r}: choose one of "
                            f"{', '.join(available_specs()) or '(none found)'} "
                            f"(files in {specs_dir()}), or give the path of a .toml file")
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise SpecError(f"{path}: cannot read spec file: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{path}: not valid TOML: {exc}") from None
    if spec_rwsw.is_rwsw(path.name):
        raise SpecError(f"{path}: an RWSW spec file, loaded beside a PTS spec (--rwsw-spec); "
                        f"choose a PTS spec: {', '.join(available_specs())}")
    spec = _Reader(path).spec(data)
    rwsw = specs_dir() / f"{spec_rwsw.DEFAULT_RWSW}.toml"
    return dataclasses.replace(spec, rwsw=load_rwsw(str(rwsw))) if rwsw.is_file() else spec


class _Reader:
    """Takes values out of the parsed TOML, naming file and key in every error."""

    def __init__(self, path: Path):
        self.path = path

    def fail(self, key: str, problem: str) -> SpecError:
        return SpecError(f"{self.path}: [{key}]: {problem}")

    def table(self, data: dict, key: str, allowed: set[str]) -> dict:
        table = data.get(key)
        if not isinstance(table, dict):
            raise self.fail(key, "missing table" if table is None else "must be a table")
        unknown = sorted(set(table) - allowed)
        if unknown:
            raise self.fail(key, f"unknown key {unknown[0]!r} "
                                 f"(allowed: {', '.join(sorted(allowed))})")
        missing = sorted(allowed - set(table))
        if missing:
            raise self.fail(key, f"missing key {missing[0]!r}")
        return table

    def value(self, table: dict, where: str, key: str, kind: type, check=None, hint: str = ""):
        value = table[key]
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
            raise self.fail(f"{where}.{key}", f"{value!r} must be {kind.__name__}")
        if check is not None and not check(value):
            raise self.fail(f"{where}.{key}", f"{value!r} is out of range{hint}")
        return value

    def convert(self, where: str, items, conv):
        out = []
        for i, item in enumerate(items):
            try:
                out.append(conv(item))
            except ValueError as exc:
                raise self.fail(f"{where}[{i}]", str(exc)) from None
        return tuple(out)

    def spec(self, data: dict) -> Spec:
        unknown = sorted(set(data) - {"spec", "steady_state", "common", "wipc", "iops",
                                      "throughput", "latency", "wsat",
                                      "dirth", "cbw", "hir", "xsr", "purge_probe",
                                      "provenance"})
        if unknown:
            raise SpecError(f"{self.path}: unknown table [{unknown[0]}]")
        meta = self.table(data, "spec", {"name", "title", "version", "segment"})
        for key in ("name", "title", "version", "segment"):
            self.value(meta, "spec", key, str)
        if meta["segment"] not in ("enterprise", "client"):
            raise self.fail("spec.segment", f"{meta['segment']!r} must be 'enterprise' or 'client'")
        return Spec(name=meta["name"], title=meta["title"], version=meta["version"],
                    segment=meta["segment"], path=self.path,
                    steady_state=self.steady_state(data), common=self.common(data),
                    wipc=self.wipc(data), iops=read_iops(self, data),
                    throughput=read_throughput(self, data), latency=read_latency(self, data),
                    wsat=self.wsat(data), hir=read_hir(self, data, parse_size),
                    xsr=read_xsr(self, data, parse_size), dirth=self.dirth_cbw(data, "dirth"),
                    cbw=self.dirth_cbw(data, "cbw"),
                    purge_probe=spec_purge_probe.read(self, data, parse_size),
                    readings=spec_readings.read(self, data))

    def dirth_cbw(self, data: dict, key: str) -> DirthCbwTest:
        return read_dirth_cbw(self, data, key, RwMix.parse, parse_size)

    def steady_state(self, data: dict) -> SteadyStateRule:
        t = self.table(data, "steady_state", {"window_rounds", "max_data_excursion",
                                              "max_slope_excursion", "max_rounds"})
        w = "steady_state"
        frac = (lambda v: 0 < v < 1, " (a fraction between 0 and 1)")
        rule = SteadyStateRule(
            window_rounds=self.value(t, w, "window_rounds", int, lambda v: v >= 2, " (>= 2)"),
            max_data_excursion=self.value(t, w, "max_data_excursion", float, *frac),
            max_slope_excursion=self.value(t, w, "max_slope_excursion", float, *frac),
            max_rounds=self.value(t, w, "max_rounds", int, lambda v: v >= 1, " (>= 1)"))
        if rule.max_rounds < rule.window_rounds:
            raise self.fail("steady_state.max_rounds", "must be >= window_rounds")
        return rule

    def common(self, data: dict) -> Common:
        t = self.table(data, "common", {"point_seconds", "write_cache", "active_range_pct",
                                        "thread_count", "queue_depth", "data_pattern"})
        w, pos = "common", (lambda v: v >= 1, " (>= 1)")
        return Common(
            point_seconds=self.value(t, w, "point_seconds", int, *pos),
            write_cache=self.value(t, w, "write_cache", str, lambda v: v in ("WCD", "WCE"),
                                   " (must be 'WCD' or 'WCE')"),
            active_range_pct=self.value(t, w, "active_range_pct", int, lambda v: 0 < v <= 100,
                                        " (1..100)"),
            thread_count=self.value(t, w, "thread_count", int, *pos),
            queue_depth=self.value(t, w, "queue_depth", int, *pos),
            data_pattern=self.value(t, w, "data_pattern", str, lambda v: v == "random",
                                    " (only 'random' is supported)"))

    def wipc(self, data: dict) -> WipcSpec:
        t = self.table(data, "wipc", {"capacity_multiple", "block_size"})
        bs = self.convert("wipc.block_size", [self.value(t, "wipc", "block_size", str)],
                          parse_size)[0]
        return WipcSpec(capacity_multiple=self.value(t, "wipc", "capacity_multiple", int,
                                                 lambda v: v >= 1, " (>= 1)"), block_size=bs)

    def items(self, t: dict, where: str, key: str, conv) -> tuple:
        """A non-empty list of values, each converted (e.g. parse_size) and distinct."""
        if not isinstance(t[key], list) or not t[key]:
            raise self.fail(f"{where}.{key}", "must be a non-empty list")
        out = self.convert(f"{where}.{key}", t[key], conv)
        if len(set(out)) != len(out):
            raise self.fail(f"{where}.{key}", "lists a value twice")
        return out

    def tc_qd(self, t: dict, where: str) -> tuple[int, int]:
        pos = (lambda v: v >= 1, " (>= 1)")
        return (self.value(t, where, "thread_count", int, *pos),
                self.value(t, where, "queue_depth", int, *pos))

    def wsat(self, data: dict) -> WsatTest:
        w = "wsat"
        t = self.table(data, w, {"clause", "block_size", "thread_count", "queue_depth",
                                 "capacity_multiple", "max_hours"})
        bs = self.convert(f"{w}.block_size", [self.value(t, w, "block_size", str)],
                          parse_size)[0]
        positive = (lambda v: v > 0, " (> 0)")
        return WsatTest(self.value(t, w, "clause", str), bs, *self.tc_qd(t, w),
                        self.value(t, w, "capacity_multiple", float, *positive),
                        self.value(t, w, "max_hours", float, *positive))

