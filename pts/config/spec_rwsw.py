"""The RWSW spec file (specs/rwsw-*.toml): the settings of capture, characterisation and the
RWSW tests, loaded beside a run's PTS spec (`Spec.rwsw`).

RWSW's body text was not available (rwsw-digest §0): every value of every section must carry
its provenance (`[provenance.<section>]`, pts.config.spec_readings), as the advanced PTS tests'
values do; a value without one fails at load, naming file and key. A section is declared in
`SECTIONS` as key -> (type, check, hint): adding a setting is one row here and one line (with
its provenance) in the spec file.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from pts.config import spec_readings
from pts.config.spec_readings import Reading

DEFAULT_RWSW = "rwsw-1.0.7"
PREFIX = "rwsw-"          # RWSW spec files in specs/ are named rwsw-*.toml

_pos = (lambda v: v > 0, " (> 0)")
_pct = (lambda v: 0 <= v <= 100, " (0..100)")
_GRID = " (whole numbers >= 1, highest first, distinct, with 1: MinIOPS is TC1/QD1)"
# the rows several RWSW tests' sections share
_PURGE = (bool, lambda v: v is True, " (supported: true; --purge none skips it, declared)")
_NO_WIPC = (bool, lambda v: v is False, " (supported: false: the test starts at FOB)")


def _only(value: str) -> tuple:
    """(str, check, hint) of a setting whose one supported value is `value`."""
    return (str, lambda v: v == value, f" (supported: {value!r})")


def _grid(v: list) -> bool:
    return bool(v) and all(isinstance(x, int) and not isinstance(x, bool) and x >= 1
                           for x in v) and v == sorted(set(v), reverse=True) and 1 in v


SECTIONS: dict[str, dict[str, tuple]] = {
    "rwsw_capture": {
        "step_seconds": (float, *_pos),
        "seq_rule": (str, lambda v: v in ("recent-ends", "previous-end"),
                     " ('recent-ends' or 'previous-end')"),
        "seq_window": (int, *_pos),
        "seq_scope": (str, lambda v: v in ("device", "process"), " ('device' or 'process')"),
    },
    "rwsw_atw": {
        "top_n": (int, *_pos),
        "coverage_min_pct": (float, *_pct),
        "oio_rule": (str, lambda v: v in ("fixed", "median", "p95"),
                     " ('fixed', 'median' or 'p95')"),
        "thread_count": (int, *_pos),
        "queue_depth": (int, *_pos),
        "share_tolerance_pct": (float, *_pos),
    },
    # how an ATW is applied with fio (pts.workload.applied): choices of this suite
    "rwsw_fio": {
        "flow_sleep_us": (int, *_pos),
        "oio_split": (str, lambda v: v in ("share", "every-stream"),
                      " ('share' or 'every-stream')"),
    },
    # Multi-WSAT (pts.testdefs.rwsw_wsat) and Individual Streams-WSAT (rwsw_streams)
    "rwsw_wsat": {
        "purge": _PURGE,
        "wipc": _NO_WIPC,
        "round_seconds": (int, *_pos),
        "stop_drive_fills": (float, *_pos),
        "stop_hours": (float, *_pos),
        "stop_at_steady_state": (bool, None, ""),
    },
    "rwsw_streams": {
        "purge": (str, lambda v: v == "once", " (supported: 'once': before the first stream)"),
        "wipc": _NO_WIPC,
        "round_seconds": (int, *_pos),
        "stop_at_steady_state": (bool, lambda v: v is True, " (supported: true)"),
    },
    # Replay-Native (pts.testdefs.rwsw_replay)
    "rwsw_replay": {
        "purge": _PURGE,
        "precondition": _only("atw-steady-state"),
        "precondition_round_seconds": (int, *_pos),
        "time_scale": (float, lambda v: 0 < v <= 1, " (0 < F <= 1)"),
        "loop": _only("closed"),
        "hold": (str, lambda v: v in ("iolog", "oio", "shares"),
                 " ('iolog', 'oio' or 'shares')"),
        "iolog_iops": (int, *_pos),
        "iolog_seed": (int, lambda v: v >= 0, " (>= 0)"),
        "min_step_seconds": (int, *_pos),
    },
    # DIRTH with the ATW (pts.testdefs.rwsw_dirth)
    "rwsw_dirth": {
        "purge": _PURGE,
        "precondition": _only("max-oio-steady-state"),
        "round_seconds": (int, *_pos),
        "thread_counts": (list, _grid, _GRID),
        "queue_depths": (list, _grid, _GRID),
        "demand_to_steady_state": (bool, None, ""),
        "histograms": _only("last-round"),
    },
}


@dataclass(frozen=True)
class RwswSpec:
    name: str
    title: str
    version: str
    path: Path
    sections: dict[str, dict[str, object]]     # section -> key -> value (checked)
    readings: tuple[Reading, ...]

    def __getitem__(self, section: str) -> dict[str, object]:
        return self.sections[section]


def is_rwsw(name_or_path: str) -> bool:
    return Path(name_or_path).name.startswith(PREFIX)


def load(path: Path, reader_class) -> RwswSpec:
    """`reader_class`: pts.config.spec._Reader (its errors name file and key)."""
    reader = reader_class(path)
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise reader.fail("spec", f"cannot read the RWSW spec file: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise reader.fail("spec", f"not valid TOML: {exc}") from None
    unknown = sorted(set(data) - set(SECTIONS) - {"spec", "provenance"})
    if unknown:
        raise reader.fail(unknown[0], f"unknown table (RWSW tables: {', '.join(SECTIONS)})")
    meta = reader.table(data, "spec", {"name", "title", "version"})
    for key in ("name", "title", "version"):
        reader.value(meta, "spec", key, str)
    sections = {}
    for section, keys in SECTIONS.items():
        table = reader.table(data, section, set(keys))
        sections[section] = {key: reader.value(table, section, key, kind, check, hint)
                             for key, (kind, check, hint) in keys.items()}
    return RwswSpec(meta["name"], meta["title"], meta["version"], path, sections,
                    spec_readings.read(reader, data))
