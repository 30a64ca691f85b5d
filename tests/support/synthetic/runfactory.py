"""Synthetic run folders (run.json + ledger.jsonl) exactly as docs/results-format.md defines
them, so the report and other readers can be tested without a device.

The matrix is reduced: 3 R/W mixes x 3 block sizes on a 4096-byte-sector device, so the
0.5 KiB row is N/A. Every cell's IOPS in round r is BASE_IOPS[cell] x curve[r-1]; the
round records carry pts.procedure.steady_state evidence computed the way the runner does.

    folder = build_run(tmp_path)                       # compliant, steady at round 7
    folder = build_run(tmp_path, curve=FALLING_CURVE)  # never steady
    folder = build_run(tmp_path, counters={"after WIPC": {...}, "after round 1": {...}})
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from pts.procedure import steady_state
from pts.results import records
from pts.tools.atomic import write_json

T0 = 1795262400.0                  # 2026-11-21T12:00:00Z
MIXES = ("100/0", "65/35", "0/100")
BLOCK_SIZES = (1048576, 4096, 512)
NA_BLOCK_SIZE = 512                # below the 4096-byte logical sector
NA_REASON = "block size 512 B is smaller than the logical sector (4096 B)"
BASE_IOPS = {
    ("100/0", 1048576): 3000, ("100/0", 4096): 100000,
    ("65/35", 1048576): 2000, ("65/35", 4096): 60000,
    ("0/100", 1048576): 1500, ("0/100", 4096): 40000,
}
TRACKING = (
    {"label": "RND 4KiB 0/100", "rw_mix": "0/100", "block_size": 4096},
    {"label": "RND 1024KiB 100/0", "rw_mix": "100/0", "block_size": 1048576},
)
# Rounds 1..7: window 3..7 is the first steady one (range 7.8 %, slope excursion 7.8 %).
STEADY_CURVE = (3.0, 2.0, 1.08, 1.04, 1.0, 1.0, 1.0)
# Falls 20 % a round: the slope excursion never fits in 10 %.
FALLING_CURVE = tuple(0.8 ** r for r in range(7))
SERIAL = "SN-TEST-0042"
MODEL = "Synthetic NVMe SSD"


def run_json(*, deviations: Sequence[str] = (), emulated: bool = False, **overrides) -> dict:
    info = {
        "schema": 1,
        "run_id": "20261121T120000",
        "started": "2026-11-21T12:00:00+00:00",
        "device": {
            "path": "/dev/nvme9n1", "kname": "nvme9n1", "model": MODEL, "serial": SERIAL,
            "firmware": "FW1.2.3", "capacity_bytes": 960197124096, "logical_sector": 4096,
            "physical_sector": 4096, "transport": "nvme", "identity_source": "nvme-cli",
            "emulated": emulated,
        },
        "platform": {"hostname": "testhost", "os": "Debian GNU/Linux 12 (bookworm)",
                     "kernel": "6.1.0", "cpu": "Test CPU", "cpus": 8,
                     "memory_bytes": 34359738368, "python": "3.11.2"},
        "tools": {"snia-pts": "0.1.0", "fio": "fio-3.33", "pytest": "8.3.0"},
        "spec": {"name": "pts-2.0.2-enterprise", "title": "SNIA SSS PTS 2.0.2 Enterprise",
                 "file": "specs/pts-2.0.2-enterprise.toml"},
        "options": {"point_seconds": 60, "max_rounds": 25, "purge": "nvme-format",
                    "destructive": True, "block_sizes": None, "rw_mixes": None},
        "deviations": list(deviations),
        # PTS-E 1.0 §5 fields, complete (a run with --operator and --report-info)
        "report_info": {"operator": "A. Tester", "auditor": None, "sponsor": None,
                        "system_make": None, "system_model": None, "motherboard": None,
                        "host_adapter": None, "interface": None,
                        "form_factor": "U.2 2.5 inch", "media_type": "3D TLC NAND",
                        "notable_features": None, "file": "/srv/pts/report-info.toml"},
        "system": {"read_on": "this host",
                   "dmi": {"sys_vendor": "Example Systems", "product_name": "XS-2400",
                           "board_vendor": "Example Systems", "board_name": "XB-24"},
                   "host_adapter": {"pci_function": "0000:00:01.1", "vendor": "0x1022",
                                    "device": "0x1483", "names_from": "sysfs ids"},
                   "interface": {"kind": "NVMe over PCIe", "speed": "16.0 GT/s PCIe x4",
                                 "source": "sysfs"},
                   "drive_reports": "the NVMe Identify Controller data has no form-factor "
                                    "or media-type field"},
    }
    info.update(overrides)
    return info


class RunFolder:
    """A run folder being written: run.json once (as pts.run.Run writes it), then ledger
    records one by one, stamped with a clock that starts at T0. The one writer of every
    synthetic run: record() takes a record's fields as a dict (so a test can write one the
    schema refuses), add() a pts.results.records record (synthrun.py)."""

    def __init__(self, path: Path, info: dict):
        self.path = path
        self.ledger = path / "ledger.jsonl"
        self.clock = T0
        path.mkdir(parents=True, exist_ok=True)
        write_json(path / "run.json", info)
        self.ledger.touch()

    def record(self, type_: str, advance: float = 1.0, **fields) -> dict:
        self.clock += advance
        rec = {"type": type_, "time": self.clock, **fields}
        self.raw_line(json.dumps(rec))
        return rec

    def add(self, rec: records.Record, advance: float = 1.0) -> None:
        self.clock += advance
        stamped = dataclasses.replace(rec, time=self.clock)
        self.raw_line(json.dumps(stamped.to_json(), allow_nan=False))

    def raw_line(self, text: str, newline: bool = True) -> None:
        with self.ledger.open("a", encoding="utf-8") as fh:
            fh.write(text + ("\n" if newline else ""))

    def raw(self, relative: str, data: dict) -> str:
        """A compact raw/ file (a fio document) in the run folder: its relative path."""
        path = self.path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
        return relative


def round_evidence(history: Mapping[str, Sequence[float]],
                   number: int) -> tuple[dict[str, dict | None], bool]:
    """A round record's steady_state evidence per tracking variable (from round 5 on, as the
    runner checks it) and whether every one is steady."""
    evidence = {label: steady_state.check(list(values)).as_dict() if number >= 5 else None
                for label, values in history.items()}
    return evidence, all(e is not None and e["steady"] for e in evidence.values())


def iops_parameters(max_rounds: int) -> dict:
    return {
        "thread_count": 4, "queue_depth": 32, "active_range_pct": 100,
        "active_range_bytes": 960197124096, "write_cache": "WCD", "data_pattern": "random",
        "point_seconds": 60, "max_rounds": max_rounds, "window_rounds": 5,
        "max_data_excursion": 0.2, "max_slope_excursion": 0.1,
        "rw_mixes": list(MIXES), "block_sizes": list(BLOCK_SIZES), "tracking": list(TRACKING),
    }


def point_fields(mix: str, bs: int, multiplier: float) -> dict:
    read_pct = int(mix.split("/")[0])
    if bs == NA_BLOCK_SIZE:
        return {"read_pct": read_pct, "na": True, "reason": NA_REASON, "iops": None,
                "read_iops": None, "write_iops": None, "mbps": None, "lat_mean_us": None,
                "lat_max_us": None}
    iops = BASE_IOPS[(mix, bs)] * multiplier
    return {"read_pct": read_pct, "na": False, "iops": iops,
            "read_iops": iops * read_pct / 100, "write_iops": iops * (100 - read_pct) / 100,
            "mbps": iops * bs / 1e6, "lat_mean_us": 128 * 1e6 / iops,
            "lat_max_us": 10 * 128 * 1e6 / iops}


def write_iops_test(run: RunFolder, curve: Sequence[float], *, finished: bool = True,
                    purge_method: str = "nvme-format", purge_deviation: bool = False,
                    write_cache_actual: str = "write through", write_cache_settable: bool = True,
                    ledger_deviations: Sequence[str] = (),
                    counters: Mapping[str, object] | None = None,
                    counters_source: str = "emulator",
                    round_modes: Mapping[int, str] | None = None,
                    purge_probe_iops: float | None = None,
                    readings: Sequence[dict] | None = None,
                    purge_command: Sequence[str] | None = None,
                    purge_seconds: float = 12.5) -> None:
    """The records of one IOPS test whose rounds follow `curve` (one multiplier per round).

    counters maps a step ("test start", "after purge", "after WIPC", "after round N") to the
    `counters` value of the device_counters record written right after that step, as the
    runner does; the value is written as given (so a test can store a malformed one). round_modes: a
    round_mode record (mode "stonewalled", this reason) right before the given rounds.
    readings: the test_start `readings` as pts.procedure.runner records them (None: none).
    purge_command / purge_seconds: the purge record's command (default `nvme format ... --ses=1`)
    and its time."""
    def step_done(when: str, number: int | None = None) -> None:
        if counters is not None and when in counters:
            run.record("device_counters", test="iops", when=when, round=number,
                       source=counters_source, counters=counters[when])

    params = iops_parameters(max_rounds=len(curve))
    if readings is not None:
        params["readings"] = list(readings)
    run.record("test_start", test="iops", title="IOPS", clause="7", parameters=params)
    step_done("test start")
    command = list(purge_command) if purge_command is not None else None if purge_method in (
        "none", "trim") else ["nvme", "format", "/dev/nvme9n1", "--ses=1"]
    run.record("purge", test="iops", method=purge_method, command=command, ok=True,
               seconds=purge_seconds, deviation=purge_deviation)
    step_done("after purge")
    run.record("write_cache", test="iops", required="WCD", actual=write_cache_actual,
               settable=write_cache_settable, when="before WIPC")
    if purge_probe_iops is not None:
        run.record("purge_probe", test="iops", block_size=4096, rw_mix="0/100",
                   thread_count=4, queue_depth=32, seconds=3.0, iops=purge_probe_iops,
                   fob_ss_min_ratio=1.1, raw="raw/iops/purge-probe.json")
    run.record("wipc", advance=3600, test="iops", block_size=131072,
               bytes_expected=2 * 960197124096, bytes_written=2 * 960197124096, seconds=3600.0,
               thread_count=4, queue_depth=32, raw="raw/iops/wipc.json")
    step_done("after WIPC")
    for text in ledger_deviations:
        run.record("deviation", test="iops", text=text)
    history: dict[str, list[float]] = {t["label"]: [] for t in TRACKING}
    for number, multiplier in enumerate(curve, 1):
        if round_modes and number in round_modes:
            run.record("round_mode", test="iops", round=number, mode="stonewalled",
                       reason=round_modes[number])
        _write_round(run, number, multiplier, history)
        step_done(f"after round {number}", number)
    if finished:
        _write_test_end(run, history, len(curve))


def _overlap(round_no: int, index: int) -> float | None:
    """Pipelined points 10 ms apart; round 2's fourth point overlapped the third by 4 ms."""
    return None if index == 0 else 4.0 if (round_no, index) == (2, 3) else -10.0


def _write_round(run: RunFolder, number: int, multiplier: float, history: dict) -> None:
    index = 0
    for mix in MIXES:
        for bs in BLOCK_SIZES:
            start = run.clock
            run.record("point", advance=60, test="iops", round=number, index=index, rw_mix=mix,
                       block_size=bs, start=start, end=start + 60,
                       raw=f"raw/iops/round-{number:02d}.json", overlap_ms=_overlap(number, index),
                       **point_fields(mix, bs, multiplier))
            index += 1
    for t in TRACKING:
        history[t["label"]].append(BASE_IOPS[(t["rw_mix"], t["block_size"])] * multiplier)
    evidence, steady = round_evidence(history, number)
    run.record("round", test="iops", round=number,
               tracking={k: v[-1] for k, v in history.items()}, steady_state=evidence,
               steady=steady)


def _write_test_end(run: RunFolder, history: dict, rounds: int) -> None:
    steady = all(steady_state.check(v).steady for v in history.values())
    window = [rounds - 4, rounds]
    if steady:
        run.record("test_end", test="iops", status="steady", rounds=rounds,
                   steady_round=rounds, window=window, message="steady state reached")
    else:
        run.record("test_end", test="iops", status="not_steady", rounds=rounds,
                   steady_round=None, window=window,
                   message=f"steady state not reached in {rounds} rounds")


def build_run(root: Path, name: str = "run", *, curve: Sequence[float] = STEADY_CURVE,
              run_deviations: Sequence[str] = (), emulated: bool = False,
              counters: Mapping[str, object] | None = None, **test_options) -> Path:
    """A complete run folder under root/name; by default compliant and steady at round 7.

    counters: device_counters records by step (see write_iops_test); none by default.
    test_options go to write_iops_test (finished, purge_method, purge_deviation,
    write_cache_actual, write_cache_settable, ledger_deviations, counters_source)."""
    run = RunFolder(root / name, run_json(deviations=run_deviations, emulated=emulated))
    write_iops_test(run, curve, counters=counters, **test_options)
    return run.path
