"""The Applied Test Workload (ATW): the stimulus of the RWSW tests, as a TOML file.

`python -m pts workload CAPTURE -o FILE` writes it from a capture; an engineer may write one by
hand. The suite takes it with `--workload FILE`. Format (docs/workload.md):

    [workload]
    format = "snia-pts-atw"        # required, with version = 1
    version = 1
    name = "db_bench readrandomwriterandom"
    thread_count = 4               # the OIO the tests apply: TC x QD
    queue_depth = 8

    [[stream]]                     # one table per IO stream, ranked by share of I/Os
    access = "RND"                 # RND | SEQ
    direction = "R"                # R | W
    size = "4KiB"                  # transfer size (B, KiB, MiB)
    share_pct = 61.5               # share of the ATW's I/Os; the shares sum to 100

    [[step]]                       # optional: the capture's steps, for rwsw-replay
    start_s = 0.0
    seconds = 300.0
    oio = 6                        # outstanding I/Os to apply in this step (>= 1)
    iops = 1520.0                  # the capture's in-situ figures (optional)
    rt_mean_ms = 0.41
    shares = { "RND 4K R" = 70.0, "SEQ 128K W" = 30.0 }   # stream label -> % (sum 100)

    [provenance]                   # where it came from (free keys, shown on the report)
    capture_sha256 = "..."

Loading checks everything and names the file and the key: unknown keys, zero streams, a
share that is not a positive number, shares that do not sum to 100, a stream listed twice,
a step share naming no stream. A file that fails to load changes nothing.
"""

from __future__ import annotations

import hashlib
import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from pts.config.spec import format_size, parse_size

FORMAT, VERSION = "snia-pts-atw", 1
SUM_TOLERANCE = 0.1          # percentage points: shares written with one decimal still sum
ACCESS, DIRECTIONS = ("RND", "SEQ"), ("R", "W")


class WorkloadError(ValueError):
    """A workload file cannot be used; the message names the file, the key and the fix."""


@dataclass(frozen=True, order=True)
class StreamKey:
    """An IO stream: access (RND|SEQ) x direction (R|W) x transfer size, written as RWSW
    writes it: "RND 4K W", "SEQ 128K R", "RND 0.5K R"."""
    access: str
    direction: str
    size: int            # bytes

    @property
    def label(self) -> str:
        return f"{self.access} {self.size / 1024:g}K {self.direction}"

    @classmethod
    def parse(cls, text: str) -> StreamKey:
        m = re.fullmatch(r"\s*(RND|SEQ)\s+(\d+(?:\.\d+)?)K\s+([RW])\s*", text)
        if not m:
            raise ValueError(f"{text!r} is not a stream label like 'RND 4K W'")
        size = float(m[2]) * 1024
        if size != int(size) or size <= 0:
            raise ValueError(f"{text!r}: the size is not a whole number of bytes")
        return cls(m[1], m[3], int(size))


@dataclass(frozen=True)
class Stream:
    key: StreamKey
    share_pct: float             # of the ATW's I/Os (normalised: all streams sum to 100)


@dataclass(frozen=True)
class Step:
    """One capture step as rwsw-replay applies it."""
    start_s: float
    seconds: float
    oio: int
    shares: dict[StreamKey, float]
    iops: float | None = None            # in-situ, from the capture
    rt_mean_ms: float | None = None


@dataclass(frozen=True)
class Workload:
    name: str
    streams: tuple[Stream, ...]
    thread_count: int
    queue_depth: int
    steps: tuple[Step, ...] = ()
    provenance: dict = field(default_factory=dict)
    sha256: str = ""                     # of the file it was loaded from

    @property
    def oio(self) -> int:
        return self.thread_count * self.queue_depth


def load(path: Path) -> Workload:
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise WorkloadError(f"{path}: cannot read the workload file ({exc.strerror}); make "
                            "one with `python -m pts workload CAPTURE -o FILE`") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise WorkloadError(f"{path}: not valid TOML ({exc}); a truncated or corrupt "
                            "workload file") from None
    return parse(data, path, hashlib.sha256(raw).hexdigest())


def parse(data: dict, where: Path | str, sha256: str = "") -> Workload:
    def fail(key: str, why: str) -> WorkloadError:
        return WorkloadError(f"{where}: {key}: {why} (format: docs/workload.md)")

    _only(data, {"workload", "stream", "step", "provenance"}, "", fail)
    head = data.get("workload")
    if not isinstance(head, dict):
        raise fail("[workload]", "missing: a workload file starts with a [workload] table")
    _only(head, {"format", "version", "name", "thread_count", "queue_depth"}, "workload.", fail)
    if head.get("format") != FORMAT or head.get("version") != VERSION:
        raise fail("workload.format", f"must be format = \"{FORMAT}\", version = {VERSION}")
    tc, qd = (_positive_int(head, k, fail) for k in ("thread_count", "queue_depth"))
    tables = data.get("stream")
    if not isinstance(tables, list) or not tables:
        raise fail("[[stream]]", "no streams: a workload needs at least one [[stream]] table")
    streams, seen = [], set()
    for i, t in enumerate(tables):
        where_i = f"stream[{i}]"
        if not isinstance(t, dict):
            raise fail(where_i, "must be a table")
        _only(t, {"access", "direction", "size", "share_pct"}, where_i + ".", fail)
        key = _stream_key(t, where_i, fail)
        if key in seen:
            raise fail(where_i, f"{key.label} is listed twice")
        seen.add(key)
        streams.append(Stream(key, _share(t.get("share_pct"), where_i + ".share_pct", fail)))
    _sums_to_100([s.share_pct for s in streams], "[[stream]] share_pct", fail)
    steps = tuple(_step(t, i, seen, fail) for i, t in enumerate(data.get("step") or []))
    provenance = data.get("provenance", {})
    if not isinstance(provenance, dict):
        raise fail("[provenance]", "must be a table")
    return Workload(str(head.get("name", Path(str(where)).stem)), tuple(streams), tc, qd,
                    steps, provenance, sha256)


def _only(table: dict, known: set[str], prefix: str, fail) -> None:
    unknown = sorted(set(table) - known)
    if unknown:
        raise fail(prefix + unknown[0], f"unknown key (known: {', '.join(sorted(known))})")


def _positive_int(table: dict, key: str, fail) -> int:
    value = table.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise fail(f"workload.{key}", f"must be a whole number >= 1, not {value!r}")
    return value


def _stream_key(t: dict, where: str, fail) -> StreamKey:
    access, direction = t.get("access"), t.get("direction")
    if access not in ACCESS:
        raise fail(where + ".access", f"must be one of {ACCESS}, not {access!r}")
    if direction not in DIRECTIONS:
        raise fail(where + ".direction", f"must be one of {DIRECTIONS}, not {direction!r}")
    size = t.get("size")
    try:
        size = size if isinstance(size, int) and not isinstance(size, bool) and size > 0 \
            else parse_size(size)
    except (TypeError, ValueError):
        raise fail(where + ".size", f"must be a size like \"4KiB\" or bytes, not "
                                    f"{size!r}") from None
    return StreamKey(access, direction, size)


def _share(value, where: str, fail) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or \
            not math.isfinite(value) or not 0 < value <= 100:
        raise fail(where, f"must be a percentage in (0, 100], not {value!r}")
    return float(value)


def _sums_to_100(shares: list[float], where: str, fail) -> None:
    if abs(sum(shares) - 100) > SUM_TOLERANCE:
        raise fail(where, f"the shares sum to {sum(shares):g}, not 100 (within "
                          f"{SUM_TOLERANCE:g}): normalise them")


def _step(t, i: int, streams: set[StreamKey], fail) -> Step:
    where = f"step[{i}]"
    if not isinstance(t, dict):
        raise fail(where, "must be a table")
    _only(t, {"start_s", "seconds", "oio", "shares", "iops", "rt_mean_ms"}, where + ".", fail)
    for key in ("start_s", "seconds"):
        v = t.get(key)
        if isinstance(v, bool) or not isinstance(v, int | float) or v < 0 or \
                (key == "seconds" and v <= 0):
            least = " > 0" if key == "seconds" else ""
            raise fail(f"{where}.{key}", f"must be a number of seconds{least}, not {v!r}")
    oio = t.get("oio")
    if isinstance(oio, bool) or not isinstance(oio, int) or oio < 1:
        raise fail(where + ".oio", f"must be a whole number >= 1, not {oio!r}")
    shares_in = t.get("shares")
    if not isinstance(shares_in, dict) or not shares_in:
        raise fail(where + ".shares", "must be a table of stream label -> %")
    shares = {}
    for label, value in shares_in.items():
        try:
            key = StreamKey.parse(label)
        except ValueError as exc:
            raise fail(f"{where}.shares", str(exc)) from None
        if key not in streams:
            raise fail(f"{where}.shares", f"{label} is not one of the [[stream]] tables")
        shares[key] = _share(value, f"{where}.shares.{label}", fail)
    _sums_to_100(list(shares.values()), f"{where}.shares", fail)
    optional = {k: float(t[k]) for k in ("iops", "rt_mean_ms") if t.get(k) is not None}
    return Step(float(t["start_s"]), float(t["seconds"]), oio, shares, **optional)


def dumps(w: Workload) -> str:
    """The TOML text of `w` (what `load` reads back to an equal Workload)."""
    lines = ["[workload]", f'format = "{FORMAT}"', f"version = {VERSION}",
             f"name = {_q(w.name)}", f"thread_count = {w.thread_count}",
             f"queue_depth = {w.queue_depth}"]
    for s in w.streams:
        lines += ["", "[[stream]]", f'access = "{s.key.access}"',
                  f'direction = "{s.key.direction}"',
                  f'size = "{format_size(s.key.size).replace(" ", "")}"',
                  f"share_pct = {s.share_pct!r}"]
    for st in w.steps:
        shares = ", ".join(f"{_q(k.label)} = {v!r}" for k, v in st.shares.items())
        lines += ["", "[[step]]", f"start_s = {st.start_s!r}", f"seconds = {st.seconds!r}",
                  f"oio = {st.oio}"]
        lines += [f"{k} = {getattr(st, k)!r}" for k in ("iops", "rt_mean_ms")
                  if getattr(st, k) is not None]
        lines += [f"shares = {{ {shares} }}"]
    if w.provenance:
        lines += ["", "[provenance]"] + [f"{k} = {_value(v)}" for k, v in w.provenance.items()]
    return "\n".join(lines) + "\n"


def _q(text: str) -> str:
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return _q(v)
