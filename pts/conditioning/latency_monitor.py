"""The OCP latency monitor configured by the suite before a test's rounds and its log read after
the test (issue 49 §3, LMLOG): at a test's start, after the host facts are read
(pts.conditioning.host_facts_step), one Set Features C5h with the suite's own Latency Monitoring
Data Structure (v2.7 4.15.11.1, lines 8232-8316), and at the test's end the Latency Monitor log
(C3h) read again by the reader of the test start (pts.tools.ocp_page_facts), so the page judged
is the one the suite's configuration produced. One `latency_monitor` record a test holds the
command, the drive's answer, the bytes sent and the page after (pts.stored.latency_monitor_rules
judges them).

Set Features changes the drive's configuration and resets its latency counters (LMLOG-6,
LMLOG-14): it is sent only under --destructive, on a drive the purge's safety check
(pts.device.safety.check_writable) lets the suite write, and only to a local NVMe drive (a
drive on another host, the emulated SSD, loop devices: nothing is sent or recorded). A refusal
is recorded in the drive's words and said on the console; nothing here fails the run.

The values sent, each the text's factory default where it gives one (a drive judged on its
defaults' behaviour), and why:
  bytes 1:0  Active Bucket Timer Threshold (LMDS-1, line 8239) 07E0h: LMDATA-4's factory default
             (line 2290), 2,016 x 5 min = 7 days: no test of the suite runs that long, so the
             Static Buckets stay as the Set Features left them (reset) and the Active Buckets
             hold the whole test;
  bytes 5:2  Active Thresholds A-D (LMDS-2..5, lines 8243-8255) 05h, 13h, 1Eh, 2Eh: LMDATA-5..8's
             factory defaults (lines 2300-2312), A < B < C < D as LMLOG-11 asks (line 2201);
  bytes 7:6  Active Latency Configuration (LMDS-6, line 8260) 0FFFh: LMDATA-9's default (every
             counter's Active Latency Mode 1b: the largest latency measured);
  byte 8     Active Latency Minimum Window (LMDS-7, line 8265) 0Ah: LMDATA-10's default (1 s);
  bytes 10:9 Debug Log Trigger Enable (LMDS-8, line 8275) 0000h: no debug log is triggered (the
             suite does not read log CAh);
  byte 11    Discard Debug Log (LMDS-9, line 8293) 01h: the value the text says makes every field
             valid, the feature "reset and loaded with the values from the Set Features command"
             (00h leaves that unsaid); it also discards a debug log the drive held;
  byte 12    Latency Monitor Feature Enable (LMDS-10, line 8313) 01h;
  bytes 4095:13 reserved, zero (LMDS-11, line 8316); 4,096 bytes in all (line 8236, LMSF-9).
The command: Save set (LMSF-10, line 8216: "The host should set this bit to 1b"), UUID Index 0
(LMSF-15 per UUID-3, line 548: a zero UUID Index accesses the text's feature), no NSID given
(nvme-cli sends 0; GETF-4), Dword 11 zero (the structure carries the values).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from pts.device.safety import UnsafeDeviceError, check_writable
from pts.results import records
from pts.tools import commands, nvme
from pts.tools.nvme_facts import json_safe
from pts.tools.ocp_page_facts import read_pages, status_text

FID = 0xC5
SIZE = 4096                     # the data structure (line 8236)
LOG = 0xC3
FILE = "set-feature-c5h.bin"
# (name, first byte, length, value, requirement ID, the text's line)
FIELDS = (
    ("active_bucket_timer_threshold", 0, 2, 0x07E0, "LMDS-1", 8239),
    ("active_threshold_a", 2, 1, 0x05, "LMDS-2", 8243),
    ("active_threshold_b", 3, 1, 0x13, "LMDS-3", 8247),
    ("active_threshold_c", 4, 1, 0x1E, "LMDS-4", 8251),
    ("active_threshold_d", 5, 1, 0x2E, "LMDS-5", 8255),
    ("active_latency_configuration", 6, 2, 0x0FFF, "LMDS-6", 8260),
    ("active_latency_minimum_window", 8, 1, 0x0A, "LMDS-7", 8265),
    ("debug_log_trigger_enable", 9, 2, 0x0000, "LMDS-8", 8275),
    ("discard_debug_log", 11, 1, 0x01, "LMDS-9", 8293),
    ("latency_monitor_feature_enable", 12, 1, 0x01, "LMDS-10", 8313),
)
# ledger path -> the monotonic time the current test's Set Features was answered
_configured: dict[str, float] = {}


def data() -> bytes:
    """The Latency Monitoring Data Structure the suite sends (the module docstring's values)."""
    out = bytearray(SIZE)
    for _, at, size, value, _, _ in FIELDS:
        out[at:at + size] = value.to_bytes(size, "little")
    return bytes(out)


def values() -> dict[str, int]:
    return {name: value for name, _, _, value, _, _ in FIELDS}


def argv(ctrl: str, path: Path | str) -> list[str]:
    return ["nvme", "set-feature", ctrl, f"--feature-id=0x{FID:x}", "--value=0",
            f"--data-len={SIZE}", f"--data={path}", "--save"]


def applies(dev) -> bool:
    """A local NVMe drive (what the host facts read too)."""
    return dev.transport == "nvme" and dev.remote is None and not dev.emulated


def dry_run_lines(dev, destructive: bool, in_use: list[str]) -> list[str]:
    """What a run would do about the latency monitor (--dry-run)."""
    if not applies(dev):
        return []
    what = (f"latency monitor: at each test's start `{' '.join(argv('CTRL', FILE))}` (Set "
            "Features C5h, the suite's configuration: enabled, thresholds 05h/13h/1Eh/2Eh, "
            "timer threshold 07E0h; resets the drive's latency counters), log C3h read at "
            "the test's end")
    if in_use:
        return [f"{what}: NOT SENT, the safety check refuses the device"]
    if not destructive:
        return [f"{what}: NOT SENT without --destructive"]
    return [f"{what}: would be sent"]


def configure(run, test: str, folder: Path, runner: Callable | None = None) -> None:
    """Set Features C5h at `test`'s start (see the module docstring); one record."""
    dev, key = run.device, str(run.ledger.path)
    _configured.pop(key, None)
    if not applies(dev):
        return
    path = folder / FILE
    base = {"test": test, "values": values(), "data_len": SIZE,
            "data": data()[:16].hex(), "file": None, "command": None, "exit": None,
            "refused": None, "said": None, "why": None, "after": None, "seconds": None}
    try:
        check_writable(dev, run.settings.destructive)
    except UnsafeDeviceError as exc:
        run.write(f"[pts {test}] latency monitor not configured (Set Features C5h not sent): "
                  f"{exc}")
        run.ledger.append(records.LatencyMonitor(**base | {"action": "not sent",
                                                           "why": str(exc)}))
        return
    folder.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data())
    cmd = argv(nvme.controller_path(dev.path), path)
    shown = base | {"command": " ".join(cmd),
                    "file": str(path.relative_to(run.ledger.path.parent))}
    try:
        if runner is None:
            commands.require("nvme", nvme.PACKAGE)
        done = (runner or commands.run)(cmd, check=False, log_file=run.commands_log,
                                        timeout=60)
    except commands.ToolError as exc:
        run.write(f"[pts {test}] latency monitor: Set Features C5h failed: {exc}")
        run.ledger.append(records.LatencyMonitor(**shown | {"action": "failed",
                                                            "why": str(exc)[:500]}))
        return
    said = f"{done.stderr} {done.stdout}".strip()
    if done.returncode != 0:
        refused = status_text(said)
        run.write(f"[pts {test}] latency monitor: the drive refused Set Features C5h: "
                  f"{refused}, exit {done.returncode} (LMLOG rows judge the refusal)")
        run.ledger.append(records.LatencyMonitor(**shown | {
            "action": "refused", "exit": done.returncode, "refused": refused,
            "said": said[-300:]}))
        return
    _configured[key] = time.monotonic()
    run.write(f"[pts {test}] latency monitor configured (Set Features C5h, saved): enabled, "
              "thresholds 05h/13h/1Eh/2Eh, timer threshold 07E0h; log C3h read at test end")
    run.ledger.append(records.LatencyMonitor(**shown | {"action": "configured", "exit": 0,
                                                        "said": said[-300:]}))


class _Facts:                   # what read_pages fills: facts.values["ocp_pages"]
    def __init__(self):
        self.values: dict = {}


def read_after(run, test: str, folder: Path, runner: Callable | None = None) -> None:
    """Log C3h at `test`'s end, when this test's Set Features was answered: one record, the
    page's fact (pts.tools.ocp_page_facts.page_fact's shape) under `after`."""
    started = _configured.pop(str(run.ledger.path), None)
    if started is None:
        return
    facts = _Facts()
    end = folder / "test-end"
    end.mkdir(parents=True, exist_ok=True)
    try:
        read_pages(nvme.controller_path(run.device.path), end, facts, run=runner,
                   log_file=run.commands_log, logs=(LOG,))
        page = facts.values["ocp_pages"]["C3h"]
    except Exception as exc:       # noqa: BLE001 - never fails the run: kept, said
        page = {"error": " ".join(f"{type(exc).__name__}: {exc}".split())[:500]}
    if "file" in page:
        page["file"] = str((end / page["file"]).relative_to(run.ledger.path.parent))
    seconds = round(time.monotonic() - started, 1)
    what = "read" if "decoded" in page and page["decoded"] else \
        f"not decoded: {page.get('refused') or page.get('error')}"
    run.write(f"[pts {test}] latency monitor log (C3h) at test end, {seconds} s after the "
              f"suite's Set Features C5h: {what}")
    run.ledger.append(records.LatencyMonitor(
        test=test, action="read after", values=values(), data_len=SIZE, data=None,
        file=page.get("file"),
        command=page.get("command"), exit=page.get("exit"), refused=page.get("refused"),
        said=page.get("said"), why=None, after=json_safe(page), seconds=seconds))


__all__ = ["FIELDS", "argv", "configure", "data", "dry_run_lines", "read_after"]
